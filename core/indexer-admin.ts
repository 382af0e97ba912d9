/**
 * What the indexer and the API's `/admin/*` routes agree on, declared once: the writer lock's
 * key and session name (the standby list reads PostgreSQL's lock table), the channel a retry
 * request is notified on and its outcomes, and the batch timings the writer records (D-164,
 * D-165).
 */

/** The advisory lock's key for a tenant: the writer lease's second guard, and what a previous release's indexers wait on (D-300). */
export const writerLockKey = (tenant: string) => `market-indexer:${tenant}`;

/**
 * The session every indexer keeps for the writer lease (the writer's renewals, a standby's
 * polls): the prefix says what it is, the rest which process (cut to PostgreSQL's 63 bytes).
 * The standby list is these sessions less the writer's (D-165, D-300).
 */
export const WRITER_LOCK_APPLICATION = 'market-indexer-writer-lock';
export const writerLockApplicationName = (instance?: string) => (instance ? `${WRITER_LOCK_APPLICATION} ${instance}`.slice(0, 63) : WRITER_LOCK_APPLICATION);

/** The indexer's pool sessions, named for the process so that a standby taking over from a hung writer can end them (D-300). */
export const INDEXER_POOL_APPLICATION = 'market-indexer-indexer';
export const indexerPoolApplicationName = (instance: string) => `${INDEXER_POOL_APPLICATION} ${instance}`.slice(0, 63);

/** The PostgreSQL channel the API notifies when it records a dead-letter retry request. */
export const RETRY_CHANNEL = 'dead_letter_retry';

/** What a dead-letter retry came to; `pending` is only ever the API's answer while it waits. */
export const RETRY_OUTCOMES = ['applied', 'already_applied', 'still_failing', 'not_retryable'] as const;
export type RetryOutcome = (typeof RETRY_OUTCOMES)[number];

/**
 * How a batch's events were applied: `ahead` (before the commit, D-62), `reapplied` (applied
 * ahead on a state that did not come to be, or holding events already in the ledger, so
 * applied again inside the transaction) or `in_transaction` (not applied ahead).
 */
export const BATCH_PATHS = ['ahead', 'reapplied', 'in_transaction'] as const;
export type BatchPath = (typeof BATCH_PATHS)[number];

/** Batches the writer keeps for `GET /admin/indexer`. */
export const RECENT_BATCHES = 20;

/** One committed batch as `GET /admin/indexer` shows it. */
export interface BatchTiming {
  at: string;
  slot: number | null;
  transactions: number;
  events: number;
  deadLetters: number;
  path: BatchPath;
  /** Parse to commit, milliseconds (parse and apply run while the previous batch commits). */
  totalMs: number;
  phasesMs: { parse: number; ledger: number; load: number; apply: number; write: number; commit: number };
}
