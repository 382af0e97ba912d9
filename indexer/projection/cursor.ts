import type { ITask } from 'pg-promise';
import type { ParsedTransaction } from '../../core/events';
import type { BatchResult } from './batch';

/** Thrown when another process became the writer: this one must stop writing. */
export class FencedError extends Error {
  override name = 'FencedError';
}

type CursorRow = { writer_epoch: string; next_ids: Record<string, number>; lease_token: string | null; lease_current: boolean | null };

/**
 * Locks the cursor row for the batch transaction and checks the fencing token: a process that
 * is not the current holder of the writer lease (D-300), or whose lease expired by PostgreSQL's
 * clock, cannot write. The cursor's epoch and the lease's token move together when a writer
 * takes over, under this row's lock, so a commit is either before the take-over (and the new
 * writer starts after it) or refused. A lease never held (token 0) lets epoch 0 write: tools and
 * tests that run the projector without a writer. Returns the id counters the batch starts from.
 * Sets the savepoint `ledger` (what a batch holding known events rolls back to) in the same
 * round trip; nothing is written before the check, so a fenced process rolls back an empty
 * transaction.
 */
export async function lockCursor(t: ITask<unknown>, writerEpoch: number): Promise<Record<string, number>> {
  const [rows] = await t.multi<CursorRow>(
    `SELECT c.writer_epoch, c.next_ids, l.token AS lease_token, (l.holder IS NULL OR l.expires_at > clock_timestamp()) AS lease_current
       FROM indexer_cursor c LEFT JOIN writer_lease l ON l.id = 1 WHERE c.id = 1 FOR UPDATE OF c; SAVEPOINT ledger`,
  );
  const cursor = rows?.[0];
  if (!cursor) throw new Error('indexer_cursor has no row: the migrations were not run');
  if (Number(cursor.writer_epoch) !== writerEpoch) {
    throw new FencedError(`writer epoch is ${cursor.writer_epoch}, this process holds ${writerEpoch}`);
  }
  if (cursor.lease_token !== null && (Number(cursor.lease_token) !== writerEpoch || !cursor.lease_current)) {
    throw new FencedError(`the writer lease (token ${cursor.lease_token}) is not current for this process's token ${writerEpoch}`);
  }
  return cursor.next_ids;
}

/** Advances the cursor past the batch, in its transaction. */
export async function advanceCursor(t: ITask<unknown>, result: BatchResult, parsed: ParsedTransaction[], nextIds: Record<string, number>): Promise<void> {
  const last = parsed[parsed.length - 1];
  await t.none(
    `UPDATE indexer_cursor SET
       last_processed_slot = GREATEST(last_processed_slot, $1),
       last_signature = COALESCE($2, last_signature),
       last_block_time = COALESCE($3, last_block_time),
       last_activity_at = now(),
       events_applied = events_applied + $4,
       next_ids = $5
     WHERE id = 1`,
    [result.slot ?? 0, last?.signature ?? null, last?.blockTime ? new Date(last.blockTime * 1000) : null, result.applied, nextIds],
  );
}

export function sameIds(a: Record<string, number>, b: Record<string, number>): boolean {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if ((a[k] ?? 1) !== (b[k] ?? 1)) return false;
  return true;
}
