-- Nexmark q9: winning bids. Each auction with its highest bid before it expires (the earliest
-- such bid on a tie).
CREATE SINK nexmark_q9 WITH (connector = 'blackhole') AS
SELECT
    id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
    auction, bidder, price, bid_date_time, bid_extra
FROM (
    SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_date_time, B.extra AS bid_extra,
        ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) AS rownum
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
) AS T
WHERE rownum <= 1;
