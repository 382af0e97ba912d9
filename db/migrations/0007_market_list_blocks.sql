-- Up Migration
-- GET /markets pages by (market_id DESC, id DESC). A deep OFFSET used to skip up to a million
-- index entries one by one; with the number of markets per block of 1,024 consecutive epoch
-- ids and per state, kept by the projector in the batch transaction (like market_counts), a
-- page is found by summing block counts and skipping at most one block's entries (D-130).
-- The block of an epoch id and where a block ends are defined here and nowhere else.
CREATE FUNCTION market_list_block(market_id NUMERIC) RETURNS BIGINT
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN div(market_id, 1024);
-- The first epoch id after the block (exclusive upper bound of its ids).
CREATE FUNCTION market_list_block_end(block BIGINT) RETURNS NUMERIC
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (block + 1)::NUMERIC * 1024;

-- One row per state for every block that has ever held a market, so that which rows exist
-- depends only on the markets, never on how the events were split into batches (a replay
-- with other batch boundaries leaves the same table). No CHECK (n >= 0): an upsert's proposed
-- row carries the delta, which is negative when markets leave a state; the test suite
-- compares the counts with the table after every simulated run.
CREATE TABLE market_list_blocks (
  block  BIGINT NOT NULL,
  state  SMALLINT NOT NULL CHECK (state BETWEEN 0 AND 5),
  n      BIGINT NOT NULL,
  PRIMARY KEY (block, state)
);
-- The state-filtered list walks one state's blocks newest first.
CREATE INDEX market_list_blocks_state_idx ON market_list_blocks (state, block);

-- The states are market_counts' rows (one per state), here and in the projector's upsert.
WITH c AS (SELECT market_list_block(market_id) AS block, state, count(*) AS n FROM markets GROUP BY 1, 2)
INSERT INTO market_list_blocks (block, state, n)
SELECT b.block, s.state, COALESCE(c.n, 0)
  FROM (SELECT DISTINCT block FROM c) b
 CROSS JOIN market_counts s
  LEFT JOIN c ON c.block = b.block AND c.state = s.state;

-- Down Migration
DROP TABLE market_list_blocks;
DROP FUNCTION market_list_block_end(BIGINT);
DROP FUNCTION market_list_block(NUMERIC);
