-- Nexmark q17: bidding statistics of each auction and day.
CREATE SINK nexmark_q17 WITH (connector = 'blackhole') AS
SELECT
    auction,
    CAST(date_time AS date) AS day,
    count(*) AS total_bids,
    count(CASE WHEN price < 10000 THEN 1 END) AS rank1_bids,
    count(CASE WHEN price >= 10000 AND price < 1000000 THEN 1 END) AS rank2_bids,
    count(CASE WHEN price >= 1000000 THEN 1 END) AS rank3_bids,
    min(price) AS min_price,
    max(price) AS max_price,
    avg(price) AS avg_price,
    sum(price) AS sum_price
FROM bid
GROUP BY auction, CAST(date_time AS date);
