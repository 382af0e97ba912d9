-- Up Migration
-- POST /admin/dead-letters/:id/retry (D-164). The API only records a request here; the
-- indexer's writer (the projection's single writer, fenced by writer_epoch) applies it through
-- the projection code, in one transaction with the cursor row locked, and writes the outcome.
-- A dead letter is resolved at most once: `resolved_at` is set in the transaction that applied
-- its event, so a repeated or concurrent retry finds it resolved ("already_applied").
ALTER TABLE dead_letters ADD COLUMN resolved_at TIMESTAMPTZ, ADD COLUMN resolved_by_retry BIGINT;

CREATE TABLE dead_letter_retries (
  id              BIGSERIAL PRIMARY KEY,
  dead_letter_id  BIGINT NOT NULL,
  requested_by    TEXT NOT NULL,
  requested_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- NULL while pending; written once by the indexer.
  outcome         TEXT CHECK (outcome IN ('applied', 'already_applied', 'still_failing', 'not_retryable')),
  reason          TEXT,
  detail          TEXT,
  done_at         TIMESTAMPTZ
);
-- The writer's queue: only pending rows are indexed.
CREATE INDEX dead_letter_retries_pending_idx ON dead_letter_retries (id) WHERE outcome IS NULL;

-- Recent batch timings (D-165): a ring the writer keeps in memory and writes with its
-- heartbeat, so a batch commit pays nothing for it.
ALTER TABLE indexer_status ADD COLUMN recent_batches JSONB NOT NULL DEFAULT '[]';

-- Down Migration
ALTER TABLE indexer_status DROP COLUMN recent_batches;
DROP TABLE dead_letter_retries;
ALTER TABLE dead_letters DROP COLUMN resolved_by_retry, DROP COLUMN resolved_at;
