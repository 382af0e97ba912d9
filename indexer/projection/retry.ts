import type { ITask } from 'pg-promise';
import { decodeEvent, EventDecodeError, type ProgramEvent } from '../../core/events';
import type { RetryOutcome } from '../../core/indexer-admin';
import type { ChannelUpdate } from '../../core/redis/updates';
import { applyEvents } from './apply-events';
import type { NewEvent } from './batch';
import { finalizeBook } from './book';
import { lockCursor } from './cursor';
import { loadState } from './load';
import { buildMessages } from './messages';
import type { AchievementDef } from './rows';
import { BatchState } from './state';
import { writeState, type Writers } from './write';

export interface RetryDone {
  requestId: number;
  deadLetterId: number;
  outcome: RetryOutcome;
  reason: string | null;
  messages: ChannelUpdate[];
}

/**
 * Takes the oldest pending retry request and settles it in `t`, the writer's transaction:
 * fence first (a writer that lost its lock settles nothing), then the dead letter locked, its
 * stored event decoded and applied through the very code a batch uses (load → apply → book →
 * write), the ledger row made sure of, the dead letter marked resolved and the id counters
 * advanced — or nothing of it when the event still contradicts the state. Undefined when no
 * request is pending.
 */
export async function settleNextRetry(
  t: ITask<unknown>,
  deps: { writerEpoch: number; writers: Writers; achievements: AchievementDef[] },
): Promise<RetryDone | undefined> {
  const startIds = await lockCursor(t, deps.writerEpoch);
  const req = await t.oneOrNone<{ id: string; dead_letter_id: string }>(
    // The requests for this writer's schema only: its session resolves names there first (D-442).
    'SELECT id, dead_letter_id FROM dead_letter_retries WHERE outcome IS NULL AND schema_name = current_schema() ORDER BY id LIMIT 1 FOR UPDATE',
  );
  if (!req) return undefined;
  const done = async (outcome: RetryOutcome, reason: string | null, detail: string | null, messages: ChannelUpdate[] = []): Promise<RetryDone> => {
    await t.none('UPDATE dead_letter_retries SET outcome = $2, reason = $3, detail = $4, done_at = now() WHERE id = $1', [req.id, outcome, reason, detail]);
    return { requestId: Number(req.id), deadLetterId: Number(req.dead_letter_id), outcome, reason, messages };
  };

  const dl = await t.oneOrNone<{ signature: string; event_index: number; slot: string | null; data: Buffer | null; resolved_at: Date | null }>(
    'SELECT signature, event_index, slot, data, resolved_at FROM dead_letters WHERE id = $1 FOR UPDATE',
    [req.dead_letter_id],
  );
  // The API checked it exists; a request for a row gone since (never deleted today) is settled all the same.
  if (!dl) return done('not_retryable', 'not_found', 'the dead letter does not exist');
  if (dl.resolved_at) return done('already_applied', null, null);
  // A whole transaction held back (malformed, log truncated, no block time) kept no event
  // bytes: there is nothing to re-apply; its transaction would have to be delivered again.
  if (dl.event_index < 0 || !dl.data || dl.slot === null) return done('not_retryable', 'no_event', 'the dead letter holds no event payload (the whole transaction was held back)');

  let event: ProgramEvent;
  try {
    event = decodeEvent(new Uint8Array(dl.data));
  } catch (err) {
    if (!(err instanceof EventDecodeError)) throw err;
    return done('still_failing', err.reason, err.message);
  }
  const bt = await t.one<{ block_time: Date | null }>(
    `SELECT COALESCE((SELECT block_time FROM raw_events WHERE signature = $1 AND event_index = $2),
                     (SELECT block_time FROM processed_transactions WHERE signature = $1)) AS block_time`,
    [dl.signature, dl.event_index],
  );
  const slot = Number(dl.slot);
  const ev: NewEvent = { ctx: { signature: dl.signature, eventIndex: dl.event_index, slot, blockTime: bt.block_time ?? new Date(0) }, event, bytes: new Uint8Array(dl.data) };
  const st = new BatchState({ ...startIds }, deps.achievements);
  await loadState(t, st, [event]);
  const applied = await applyEvents(st, [ev]);
  const contradiction = applied.contradictions[0];
  if (contradiction) return done('still_failing', contradiction.reason, contradiction.detail);

  finalizeBook(st);
  await writeState(t, deps.writers, st);
  // A contradicted event is in the ledger already; an event that failed to decode is not.
  await t.none(
    `INSERT INTO raw_events (signature, event_index, slot, block_time, kind, data) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [dl.signature, dl.event_index, slot, ev.ctx.blockTime, event.kind, dl.data],
  );
  await t.none('UPDATE dead_letters SET resolved_at = now(), resolved_by_retry = $2 WHERE id = $1', [req.dead_letter_id, req.id]);
  const cursor = await t.one<{ last_processed_slot: string }>(
    'UPDATE indexer_cursor SET next_ids = $1, events_applied = events_applied + 1 WHERE id = 1 RETURNING last_processed_slot',
    [st.idCounters()],
  );
  // Published as of the cursor's slot: the state the change lands in.
  return done('applied', null, null, buildMessages(st, Math.max(slot, Number(cursor.last_processed_slot))));
}
