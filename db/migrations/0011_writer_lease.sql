-- Up Migration
-- The indexer's writer lease (D-300). A session lock alone keeps a hung writer in place for as
-- long as its PostgreSQL session lives (a stopped process's does); the lease expires instead.
-- `token` is the fencing token: set to indexer_cursor.writer_epoch in the transaction that takes
-- the lease, and checked by every batch commit together with the expiry. Times are PostgreSQL's
-- (clock_timestamp()), never a process's. Additive: a previous release neither reads nor writes
-- this table, and keeps its own guard (the advisory lock, which the lease holder also takes).
CREATE TABLE writer_lease (
  id           SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  -- The holding process (host:pid, the pod name in a cluster); NULL until a writer first takes it.
  holder       TEXT,
  token        BIGINT NOT NULL DEFAULT 0,
  acquired_at  TIMESTAMPTZ,
  renewed_at   TIMESTAMPTZ,
  expires_at   TIMESTAMPTZ
);
INSERT INTO writer_lease (id) VALUES (1);

-- Down Migration
DROP TABLE writer_lease;
