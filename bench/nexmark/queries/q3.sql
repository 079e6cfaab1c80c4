-- Nexmark q3: local item suggestion. Who sells in category 10 in Oregon, Idaho or California.
CREATE SINK nexmark_q3 WITH (connector = 'blackhole') AS
SELECT P.name, P.city, P.state, A.id
FROM auction AS A INNER JOIN person AS P ON A.seller = P.id
WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
