// The backfill benchmark's provider (loadtest/bench/backfill-bench.ts): a simulated chain of
// BACKFILL_TRANSACTIONS transactions (seed BACKFILL_SEED), generated as fast as it goes, behind
// the simulated chain's JSON-RPC in provider mode, in its own process so its CPU is not counted
// as the indexer's. Driven over IPC: `configure` sets the provider's behaviour (and clears its
// counters), `stats` reports them with this process's CPU seconds, `grow` makes the chain go on
// at a number of transactions a second (the re-index bench's live traffic: each new slot is
// reported as a `block` with its wall-clock time), `stopGrowing` stops it and reports the tip.
import { IDL } from '../../core/events';
import type { RpcProviderOptions } from '../../simulator/rpc-provider';
import { createSimulatorRpcServer } from '../../simulator/rpc-server';
import { MarketSimulator } from '../../simulator/simulation';

/** The benchmark's chain: what the reference run regenerates from the same seed and count. */
export function backfillSimulator(seed: number): MarketSimulator {
  return new MarketSimulator({ seed, programId: IDL.address, feeds: 3, wallets: 200, ordersPerSlot: 2 });
}

/** A slot the growing chain produced, and when (wall clock, comparable across processes). */
export interface ChainBlock {
  type: 'block';
  slot: number;
  at: number;
  transactions: number;
}

export interface ChainReady {
  type: 'listening';
  port: number;
  transactions: number;
  /** Transactions that did not fail: what the source fetches. */
  live: number;
  /** The newest slot holding a successful transaction: the backfill is done when it is committed. */
  lastLiveSlot: number;
}

// Imported by the benchmark for `backfillSimulator`; run as the provider only when forked as it.
if (process.env.BACKFILL_CHAIN_CHILD === '1') {
  const seed = Number(process.env.BACKFILL_SEED ?? 1);
  const want = Number(process.env.BACKFILL_TRANSACTIONS ?? 10_000);
  const simulator = backfillSimulator(seed);
  const rpc = createSimulatorRpcServer({ simulator });
  let live = 0;
  let lastLiveSlot = 0;
  while (rpc.ledgerSize() < want) {
    for (const tx of rpc.advance(1)) {
      if (tx.meta?.err !== null && tx.meta?.err !== undefined) continue;
      live++;
      lastLiveSlot = tx.slot;
    }
  }
  void rpc.listen(0).then(({ port }) => {
    process.send!({ type: 'listening', port, transactions: rpc.ledgerSize(), live, lastLiveSlot } satisfies ChainReady);
  });
  let growth: NodeJS.Timeout | undefined;
  process.on('message', (m: { type: string; provider?: RpcProviderOptions; pool?: number[]; transactionsPerSecond?: number }) => {
    if (m.type === 'grow') {
      // Whole slots, as many as keep the transactions produced at the rate asked since growth began.
      const t0 = Date.now();
      let produced = 0;
      growth = setInterval(() => {
        while (produced < ((Date.now() - t0) / 1000) * m.transactionsPerSecond!) {
          const txs = rpc.advance(1);
          produced += txs.length;
          process.send!({ type: 'block', slot: simulator.slot, at: Date.now(), transactions: txs.length } satisfies ChainBlock);
        }
      }, 50);
    } else if (m.type === 'stopGrowing') {
      clearInterval(growth);
      process.send!({ type: 'stopped', transactions: rpc.ledgerSize() });
    } else if (m.type === 'configure') {
      rpc.provider.configure(m.provider ?? {});
      rpc.pool.configure({ lags: m.pool ?? [] });
      rpc.provider.resetStats();
      process.send!({ type: 'configured' });
    } else if (m.type === 'stats') {
      const cpu = process.cpuUsage();
      process.send!({ type: 'stats', stats: rpc.provider.stats(), cpuSeconds: (cpu.user + cpu.system) / 1e6 });
    }
  });
  process.on('disconnect', () => void rpc.close().then(() => process.exit(0)));
}
