-- Nexmark q4: average price for a category. The average of the winning bids (the highest bid
-- before the auction expires) of the auctions of each category.
CREATE SINK nexmark_q4 WITH (connector = 'blackhole') AS
SELECT
    Q.category,
    AVG(Q.final) AS avg
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
