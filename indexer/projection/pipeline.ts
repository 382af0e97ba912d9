import type { Ahead } from './batch';
import { RowCache } from './cache';

/**
 * The apply-ahead bookkeeping (D-62): the row cache holds the committed rows plus what the
 * batches applied ahead and not yet committed will write, and `generation` changes whenever
 * that stops being true. Batches are numbered in the order they go through `applyAhead` (or,
 * without it, are committed).
 */
export class Pipeline {
  readonly cache: RowCache | undefined;
  generation = 0;
  /** Id counters after the last batch the cache reflects; unknown after a clear. */
  aheadIds: Record<string, number> | undefined;
  lastSeq = 0;
  lastCommitted = 0;
  /** The last batch that went through applyAhead. */
  tail: { seq: number; ahead: Ahead | undefined } | undefined;
  /** The commit in flight, if any. */
  inflight: Promise<unknown> | undefined;

  constructor(cacheRows: number) {
    this.cache = cacheRows > 0 ? new RowCache(cacheRows) : undefined;
  }

  clear(): void {
    this.cache?.clear();
    this.generation += 1;
    this.aheadIds = undefined;
  }

  /** True when the cache holds what every batch before the next one leaves behind. */
  coherent(): boolean {
    return !this.tail || this.tail.seq === this.lastCommitted || this.tail.ahead?.generation === this.generation;
  }

  /** Waits until no commit is in flight (a failed one included). */
  async settle(): Promise<void> {
    while (this.inflight) await this.inflight.catch(() => {});
  }

  /** `ahead` when it was applied on exactly the state the commits so far left behind. */
  usable(ahead: Ahead | undefined): Ahead | undefined {
    return ahead?.generation === this.generation && ahead.after === this.lastCommitted ? ahead : undefined;
  }
}
