-- Up Migration
-- The projection schema a dead-letter retry request is for (D-442): dead letters live in each
-- projection schema (D-332) while the requests are one shared queue, so a request names the
-- schema whose dead letter it means (the one the API read when it was made) and the writer of
-- that schema settles it. Additive: a previous release inserts without it and reads it not; its
-- requests are the live tables', `public`.
ALTER TABLE dead_letter_retries
  ADD COLUMN schema_name TEXT NOT NULL DEFAULT 'public' CHECK (schema_name = 'public' OR schema_name ~ '^p[1-9][0-9]{0,8}$');

-- Down Migration
ALTER TABLE dead_letter_retries DROP COLUMN schema_name;
