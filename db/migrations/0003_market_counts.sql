-- Up Migration
-- Exact market counts per state, maintained by the projector in the batch transaction, so the
-- `total` of GET /markets is O(1) instead of a count over millions of rows.
CREATE TABLE market_counts (
  state  SMALLINT PRIMARY KEY CHECK (state BETWEEN 0 AND 5),
  n      BIGINT NOT NULL CHECK (n >= 0)
);
INSERT INTO market_counts (state, n) SELECT s, 0 FROM generate_series(0, 5) s;
UPDATE market_counts c SET n = x.n FROM (SELECT state, count(*) AS n FROM markets GROUP BY state) x WHERE x.state = c.state;

-- Down Migration
DROP TABLE market_counts;
