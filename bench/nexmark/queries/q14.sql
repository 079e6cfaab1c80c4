-- Nexmark q14: a calculation per bid: euros, the time of day, and how often 'c' occurs in extra
-- (Flink's count_char, a user-defined function there).
CREATE SINK nexmark_q14 WITH (connector = 'blackhole') AS
SELECT
    auction,
    bidder,
    0.908 * price AS price,
    CASE
        WHEN extract(hour FROM date_time) >= 8 AND extract(hour FROM date_time) <= 18 THEN 'dayTime'
        WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    date_time,
    extra,
    length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
