import { applyEvent } from './apply';
import type { Applied, NewEvent } from './batch';
import { Contradiction } from './context';
import { timeSlicer } from './slices';
import type { BatchState } from './state';

/**
 * Applies events in chain order; an event that contradicts the state becomes a dead letter.
 * Yields to the event loop between slices so that the ledger insert in flight is answered (and
 * the next batch's parse goes on) meanwhile.
 */
export async function applyEvents(st: BatchState, events: NewEvent[]): Promise<Applied> {
  const out: Applied = { considered: events.length, count: 0, byKind: new Map(), contradictions: [] };
  const slicer = timeSlicer();
  for (const f of events) {
    try {
      applyEvent(st, f.event, f.ctx);
      out.count += 1;
      out.byKind.set(f.event.kind, (out.byKind.get(f.event.kind) ?? 0) + 1);
    } catch (err) {
      if (!(err instanceof Contradiction)) throw err;
      out.contradictions.push({ signature: f.ctx.signature, eventIndex: f.ctx.eventIndex, slot: f.ctx.slot, kind: f.event.kind, reason: err.reason, detail: err.message, data: f.bytes });
    }
    if (slicer.due()) await slicer.pause();
  }
  return out;
}
