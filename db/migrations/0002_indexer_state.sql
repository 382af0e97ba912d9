-- Up Migration
-- The indexer's own bookkeeping. raw_events is the exactly-once ledger: a batch inserts its
-- events here with ON CONFLICT DO NOTHING and applies only the rows that were new, in the
-- same transaction that advances indexer_cursor.

CREATE TABLE raw_events (
  signature    TEXT NOT NULL,
  event_index  INTEGER NOT NULL CHECK (event_index >= 0),
  slot         BIGINT NOT NULL,
  block_time   TIMESTAMPTZ,
  kind         TEXT NOT NULL,
  -- discriminator + Borsh payload exactly as emitted, so an event can be decoded again.
  data         BYTEA NOT NULL,
  PRIMARY KEY (signature, event_index)
);

-- Every program transaction seen, with or without events, so sources can skip what is done.
CREATE TABLE processed_transactions (
  signature    TEXT PRIMARY KEY,
  slot         BIGINT NOT NULL,
  block_time   TIMESTAMPTZ,
  event_count  INTEGER NOT NULL,
  failed       BOOLEAN NOT NULL DEFAULT false
);

-- Written only in the batch transaction, together with the projections.
CREATE TABLE indexer_cursor (
  id                   SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  last_processed_slot  BIGINT NOT NULL,
  last_signature       TEXT,
  last_activity_at     TIMESTAMPTZ,
  last_block_time      TIMESTAMPTZ,
  events_applied       BIGINT NOT NULL DEFAULT 0,
  -- Fencing token: bumped by each process that becomes the writer; a batch commits only
  -- while the token is still its own, so a writer that lost its lock cannot write.
  writer_epoch         BIGINT NOT NULL DEFAULT 0,
  -- Next row id per table (see 0001).
  next_ids             JSONB NOT NULL DEFAULT '{}'
);
INSERT INTO indexer_cursor (id, last_processed_slot) VALUES (1, 0);

-- Written outside batches (heartbeat, chain tip, RPC health) so it never contends with them.
CREATE TABLE indexer_status (
  id              SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  writer_id       TEXT NOT NULL,
  chain_tip_slot  BIGINT,
  rpc_connected   BOOLEAN NOT NULL DEFAULT false,
  started_at      TIMESTAMPTZ NOT NULL,
  heartbeat_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE dead_letters (
  id           BIGSERIAL PRIMARY KEY,
  signature    TEXT NOT NULL,
  -- -1 when the whole transaction could not be read (undecodable, truncated logs).
  event_index  INTEGER NOT NULL CHECK (event_index >= -1),
  slot         BIGINT,
  kind         TEXT,
  reason       TEXT NOT NULL,
  detail       TEXT,
  data         BYTEA,
  source       TEXT NOT NULL,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (signature, event_index)
);
CREATE INDEX dead_letters_reason_idx ON dead_letters (reason, id DESC);

-- Down Migration
DROP TABLE dead_letters, indexer_status, indexer_cursor, processed_transactions, raw_events;
