-- Up Migration
-- Which projection version built the projected tables (D-331; the version is PROJECTION_VERSION
-- in core/db/projection-version.ts, D-330). NULL until a table holds a row: the first writer of
-- a database that has processed no transaction records its own version. A database that has
-- processed transactions before versions were recorded was built by release 0.1.0 or 0.2.0,
-- whose projection is version 1. Additive: a previous release neither reads nor writes it.
CREATE TABLE projection_version (
  id           SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  version      INTEGER CHECK (version >= 1),
  recorded_at  TIMESTAMPTZ
);
INSERT INTO projection_version (id, version, recorded_at)
  SELECT 1, CASE WHEN built THEN 1 END, CASE WHEN built THEN now() END
    FROM (SELECT EXISTS (SELECT 1 FROM processed_transactions) AS built) AS t;

-- The projection version of the writer's release, written with its heartbeat, so the API can
-- tell a writer whose release expects other tables than the ones it writes.
ALTER TABLE indexer_status ADD COLUMN projection_version INTEGER;

-- Down Migration
ALTER TABLE indexer_status DROP COLUMN projection_version;
DROP TABLE projection_version;
