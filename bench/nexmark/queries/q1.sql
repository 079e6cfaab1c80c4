-- Nexmark q1: currency conversion. Converts each bid from dollars to euros.
CREATE SINK nexmark_q1 WITH (connector = 'blackhole') AS
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid;
