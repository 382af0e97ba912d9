import type { RawTransaction } from '../core/events';
import type { Cursor, Progress, Source } from '../indexer/sources/types';
import type { Block } from './chain/types';
import { MarketSimulator, type SimulatorOptions } from './simulation';

export interface SimulatorSourceOptions extends SimulatorOptions {
  /** Stop after this slot (reproducible runs); unset runs forever. */
  untilSlot?: number;
  /** Pace slots by the wall clock (slotMs each) instead of as fast as possible. */
  realtime?: boolean;
  /**
   * With `realtime`: a block is produced at its own block time (startTime + slot × slotMs),
   * so chain time is wall time and a restart catches up with the time it was down.
   */
  wallClock?: boolean;
  /** Most transactions in one batch (a batch always ends on a slot boundary). */
  maxBatchTransactions?: number;
  /**
   * A chain node to take blocks from (`simulator/node.ts`: it also serves them over JSON-RPC
   * and replays wallets' transactions after a restart); unset, the source runs its own simulator.
   */
  chain?: { simulator: MarketSimulator; produce(): Block };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * The simulated chain as an in-process source. The chain is regenerated from slot 1 on
 * every start (it is deterministic); blocks before the cursor's slot are produced but not
 * delivered.
 */
export function createSimulatorSource(opts: SimulatorSourceOptions): Source & { simulator: MarketSimulator } {
  const simulator = opts.chain?.simulator ?? new MarketSimulator(opts);
  const produce = opts.chain ? () => opts.chain!.produce() : () => simulator.nextBlock();
  const maxBatch = opts.maxBatchTransactions ?? 2_000;
  return {
    name: 'simulator',
    simulator,
    async *batches(from: Cursor, signal: AbortSignal) {
      let batch: RawTransaction[] = [];
      // Realtime: catch up to the cursor at full speed, then one slot per slotMs.
      let nextDue = 0;
      while (!signal.aborted && (opts.untilSlot === undefined || simulator.slot < opts.untilSlot)) {
        if (opts.realtime && simulator.slot >= from.lastSlot) {
          const now = Date.now();
          if (opts.wallClock) nextDue = simulator.startTime * 1000 + simulator.slot * simulator.slotMs;
          else if (nextDue === 0) nextDue = now;
          if (nextDue > now) {
            if (batch.length) {
              yield batch;
              batch = [];
            }
            await sleep(nextDue - now, signal);
          }
          nextDue += simulator.slotMs;
        }
        const block = produce();
        if (block.slot < from.lastSlot) continue;
        batch.push(...block.transactions);
        if (batch.length >= maxBatch) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length && !signal.aborted) yield batch;
    },
    chainTip: async () => (opts.realtime || opts.untilSlot === undefined ? simulator.slot : opts.untilSlot),
    connected: () => true,
    readAccounts: async (addresses) =>
      addresses.map((a) => {
        const acc = simulator.oracleAccount(a);
        return acc ? { data: acc.data, owner: acc.owner, slot: acc.slot } : null;
      }),
    progress: (): Progress | undefined =>
      opts.untilSlot === undefined ? undefined : { done: simulator.slot, total: opts.untilSlot, unit: 'slots' },
    close: async () => {},
  };
}
