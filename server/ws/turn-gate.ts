import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Lets one caller through per event-loop turn, in arrival order: `await pass()` resolves only
 * after a `setImmediate` that was queued once the previous caller went through, so whatever
 * I/O is ready runs between two callers. `/ws` puts each signature verification behind it
 * (D-100): a burst of subscribes, on one connection or many, can no longer hold the event
 * loop for a run of back-to-back verifications.
 */
export function createTurnGate(): { pass(): Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  return {
    pass() {
      const mine = last.then(() => nextTurn());
      last = mine;
      return mine;
    },
  };
}
