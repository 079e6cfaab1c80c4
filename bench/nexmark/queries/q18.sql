-- Nexmark q18: the last bid of each bidder on each auction (deduplication by ROW_NUMBER).
CREATE SINK nexmark_q18 WITH (connector = 'blackhole') AS
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number
    FROM bid
) AS T
WHERE rank_number <= 1;
