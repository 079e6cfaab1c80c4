-- Nexmark q5: hot items. The auctions with the most bids in each 10 s window, every 2 s.
CREATE SINK nexmark_q5 WITH (connector = 'blackhole') AS
SELECT AuctionBids.auction, AuctionBids.num
FROM (
    SELECT
        auction,
        count(*) AS num,
        window_start AS starttime,
        window_end AS endtime
    FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
    GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
    SELECT
        max(CountBids.num) AS maxn,
        CountBids.starttime,
        CountBids.endtime
    FROM (
        SELECT
            count(*) AS num,
            window_start AS starttime,
            window_end AS endtime
        FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
        GROUP BY auction, window_start, window_end
    ) AS CountBids
    GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND
   AuctionBids.endtime = MaxBids.endtime AND
   AuctionBids.num >= MaxBids.maxn;
