-- Nexmark q10: log every bid with its day and minute, as the partition columns of a file sink
-- would be (Flink writes to a filesystem sink partitioned by them; here a blackhole sink).
CREATE SINK nexmark_q10 WITH (connector = 'blackhole') AS
SELECT
    auction,
    bidder,
    price,
    date_time,
    extra,
    to_char(date_time, 'YYYY-MM-DD') AS dt,
    to_char(date_time, 'HH24:MI') AS hm
FROM bid;
