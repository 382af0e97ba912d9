-- Up Migration
-- Oracle prices (issue 21, D-150…D-152): each aggregate a market's Pyth price account
-- published, as the indexer read it, stored once. The aggregate's publish slot identifies it:
-- reading an unchanged account again, or a replayed poll, inserts nothing.
CREATE TABLE oracle_observations (
  feed          TEXT NOT NULL,
  pub_slot      BIGINT NOT NULL CHECK (pub_slot > 0),
  publish_time  TIMESTAMPTZ NOT NULL,
  -- i64 × 10^expo; a price may be negative (spreads), its confidence may not.
  price         NUMERIC(20, 0) NOT NULL,
  conf          u64 NOT NULL,
  expo          INTEGER NOT NULL,
  -- Pyth's aggregate status: 0 unknown, 1 trading, 2 halted, 3 auction, 4 ignored.
  status        SMALLINT NOT NULL CHECK (status BETWEEN 0 AND 4),
  ema_price     NUMERIC(20, 0) NOT NULL,
  ema_conf      NUMERIC(20, 0) NOT NULL,
  PRIMARY KEY (feed, pub_slot)
);
-- The latest observation of a feed, and observations by time for naive recomputation.
CREATE INDEX oracle_observations_by_time ON oracle_observations (feed, publish_time);

-- One-minute OHLC candles of the trading observations, maintained by the statement that
-- inserts them (only from the rows that insert created, so exactly once like them). Longer
-- intervals (5m, 15m, 1h) are rolled up from these at read time. The merge is order-free:
-- open is the price of the lowest publish slot seen, close of the highest.
CREATE TABLE oracle_candles_1m (
  feed          TEXT NOT NULL,
  bucket        TIMESTAMPTZ NOT NULL,
  open          NUMERIC(20, 0) NOT NULL,
  high          NUMERIC(20, 0) NOT NULL,
  low           NUMERIC(20, 0) NOT NULL,
  close         NUMERIC(20, 0) NOT NULL,
  expo          INTEGER NOT NULL,
  open_slot     BIGINT NOT NULL,
  close_slot    BIGINT NOT NULL,
  observations  INTEGER NOT NULL CHECK (observations > 0),
  PRIMARY KEY (feed, bucket),
  CHECK (low <= high AND open BETWEEN low AND high AND close BETWEEN low AND high AND open_slot <= close_slot)
);

-- API keys of the appendix variant's plans (D-153): only the SHA-256 of a key is stored; the
-- key itself is printed once when it is created. `key_id` is the key's public part, what an
-- operator lists and revokes by. The plan is one of core/plans.ts (checked where keys are made).
CREATE TABLE api_keys (
  key_id      TEXT PRIMARY KEY CHECK (key_id ~ '^[0-9a-f]{12}$'),
  tenant      TEXT NOT NULL,
  key_hash    TEXT NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  plan        TEXT NOT NULL,
  label       TEXT,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  revoked_at  TIMESTAMPTZ
);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created_at);

-- Down Migration
DROP TABLE api_keys;
DROP TABLE oracle_candles_1m;
DROP TABLE oracle_observations;
