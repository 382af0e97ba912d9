/**
 * The longest stretch of CPU work between two turns of the event loop. The commit in flight
 * waits for its query results while the next batch is parsed on the same thread; with slices
 * of 100 transactions (several milliseconds here), every one of the commit's ~30 statements
 * waited that long for its turn and PostgreSQL sat idle meanwhile.
 */
export const SLICE_MS = 1;

export function timeSlicer(budgetMs = SLICE_MS) {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= budgetMs,
    async pause(): Promise<void> {
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    },
  };
}
