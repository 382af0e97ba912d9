-- Up Migration
-- The schema switched away from and until when it is kept (D-412): a projection schema
-- (`p<version>`) is dropped by the live writer once `retain_until` has passed; `public` is
-- recorded but never dropped. NULL when nothing is retained. Additive: nullable columns that a
-- previous release neither reads nor writes.
ALTER TABLE projection_live
  ADD COLUMN previous_schema TEXT CHECK (previous_schema = 'public' OR previous_schema ~ '^p[1-9][0-9]{0,8}$'),
  ADD COLUMN retain_until    TIMESTAMPTZ;

-- Down Migration
ALTER TABLE projection_live DROP COLUMN retain_until, DROP COLUMN previous_schema;
