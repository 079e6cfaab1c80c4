-- Nexmark q0: pass-through. Measures the monitoring overhead, the cost of reading the bids.
CREATE SINK nexmark_q0 WITH (connector = 'blackhole') AS
SELECT auction, bidder, price, date_time, extra FROM bid;
