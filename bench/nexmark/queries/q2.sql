-- Nexmark q2: selection. The bids of the auctions whose id is a multiple of 123.
CREATE SINK nexmark_q2 WITH (connector = 'blackhole') AS
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
