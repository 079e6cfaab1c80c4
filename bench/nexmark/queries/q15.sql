-- Nexmark q15: bidding statistics of each day: bids, bidders and auctions in three price ranks.
CREATE SINK nexmark_q15 WITH (connector = 'blackhole') AS
SELECT
    CAST(date_time AS date) AS day,
    count(*) AS total_bids,
    count(CASE WHEN price < 10000 THEN 1 END) AS rank1_bids,
    count(CASE WHEN price >= 10000 AND price < 1000000 THEN 1 END) AS rank2_bids,
    count(CASE WHEN price >= 1000000 THEN 1 END) AS rank3_bids,
    count(DISTINCT bidder) AS total_bidders,
    count(DISTINCT CASE WHEN price < 10000 THEN bidder END) AS rank1_bidders,
    count(DISTINCT CASE WHEN price >= 10000 AND price < 1000000 THEN bidder END) AS rank2_bidders,
    count(DISTINCT CASE WHEN price >= 1000000 THEN bidder END) AS rank3_bidders,
    count(DISTINCT auction) AS total_auctions,
    count(DISTINCT CASE WHEN price < 10000 THEN auction END) AS rank1_auctions,
    count(DISTINCT CASE WHEN price >= 10000 AND price < 1000000 THEN auction END) AS rank2_auctions,
    count(DISTINCT CASE WHEN price >= 1000000 THEN auction END) AS rank3_auctions
FROM bid
GROUP BY CAST(date_time AS date);
