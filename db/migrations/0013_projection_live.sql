-- Up Migration
-- The pointer to the schema whose projected tables the API reads (D-333): `public` (the tables
-- the migrations create) until a projection version built in a schema of its own (`p<version>`,
-- D-332) is switched to. One row, changed in one transaction with a NOTIFY on the channel
-- `projection_live`, so every API replica moves its sessions at the next statement.
-- Additive: a previous release neither reads nor writes it.
CREATE TABLE projection_live (
  id           SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  schema_name  TEXT NOT NULL DEFAULT 'public' CHECK (schema_name = 'public' OR schema_name ~ '^p[1-9][0-9]{0,8}$'),
  switched_at  TIMESTAMPTZ
);
INSERT INTO projection_live (id) VALUES (1);

-- Down Migration
DROP TABLE projection_live;
