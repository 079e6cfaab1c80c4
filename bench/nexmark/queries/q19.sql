-- Nexmark q19: the 10 highest bids of each auction (top-N by ROW_NUMBER).
CREATE SINK nexmark_q19 WITH (connector = 'blackhole') AS
SELECT * FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number
    FROM bid
) AS T
WHERE rank_number <= 10;
