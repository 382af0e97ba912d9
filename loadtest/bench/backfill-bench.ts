import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createShutdown } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createDatabase } from '../../core/db';
import { migrate } from '../../core/db/migrate';
import { IDL, type RawTransaction } from '../../core/events';
import { RPC_CREDITS } from '../../core/rpc-credits';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createIndexer } from '../../indexer/indexer';
import { createProjector } from '../../indexer/projection';
import { createRpcSource } from '../../indexer/sources/rpc';
import type { ProviderStats, RpcProviderOptions } from '../../simulator/rpc-provider';
import { tableDigests } from '../../core/db/table-digests';
import { backfillSimulator, type ChainBlock, type ChainReady } from './backfill-chain';
import { postgresCpuOf } from './indexer-bench';
import { dropDatabase, freshDatabase, ROOT } from './support';

/**
 * `npm run bench -- backfill`: the `rpc` source backfilling a new tenant's history from an empty
 * database through the simulated chain's JSON-RPC behaving like a hosted provider (40 ms ± 10 ms
 * a call, a credit rate limit answered with 429 + Retry-After, batches, random faults: D-240),
 * against what the provider's limit allows, and every run's tables against an in-process run of
 * the same chain (zero missed, zero duplicated). Scenarios by BENCH_SCENARIOS (comma-separated,
 * all by default); transactions per scenario by BENCH_TRANSACTIONS (each scenario's default
 * keeps the whole run to a few minutes).
 */

export const SEED = Number(process.env.BENCH_SEED ?? 1);
export const LATENCY = { latencyMs: 40, jitterMs: 10 };

interface Scenario {
  name: string;
  what: string;
  provider: RpcProviderOptions;
  client: { requestsPerSecond: number; concurrency: number; batchSize: number };
  transactions: number;
  /** Served as a provider's pool of nodes that many slots behind (D-460); one node unless set. */
  pool?: number[];
}

/** The pool scenarios' nodes: one up to date, two a few slots behind, as a provider's are (D-476). */
export const POOL_LAGS = [0, 2, 5];

const SCENARIOS: Scenario[] = [
  { name: '100', what: '100 credits/s, single calls', provider: { ...LATENCY, requestsPerSecond: 100 }, client: { requestsPerSecond: 100, concurrency: 8, batchSize: 1 }, transactions: 3_000 },
  { name: '1000', what: '1,000 credits/s, single calls', provider: { ...LATENCY, requestsPerSecond: 1_000 }, client: { requestsPerSecond: 1_000, concurrency: 64, batchSize: 1 }, transactions: 20_000 },
  { name: '1000-batch', what: '1,000 credits/s, batches of 20', provider: { ...LATENCY, requestsPerSecond: 1_000 }, client: { requestsPerSecond: 1_000, concurrency: 8, batchSize: 20 }, transactions: 20_000 },
  { name: 'discover', what: '1,000 credits/s, the source not told (AIMD on 429s)', provider: { ...LATENCY, requestsPerSecond: 1_000 }, client: { requestsPerSecond: 0, concurrency: 32, batchSize: 1 }, transactions: 20_000 },
  { name: 'refused', what: '1,000 credits/s, batches refused (falls back to single calls)', provider: { ...LATENCY, requestsPerSecond: 1_000, batches: false }, client: { requestsPerSecond: 1_000, concurrency: 32, batchSize: 20 }, transactions: 20_000 },
  { name: 'faults', what: '1,000 credits/s, batches of 20, 1 % random 429s/5xx/timeouts', provider: { ...LATENCY, requestsPerSecond: 1_000, faultRate: 0.01 }, client: { requestsPerSecond: 1_000, concurrency: 16, batchSize: 20 }, transactions: 20_000 },
  { name: 'none', what: 'no limit, batches of 50', provider: { ...LATENCY }, client: { requestsPerSecond: 0, concurrency: 32, batchSize: 50 }, transactions: 20_000 },
  { name: '1000-batch-pool', what: '1,000 credits/s, batches of 20, a pool of nodes 0, 2 and 5 slots behind', provider: { ...LATENCY, requestsPerSecond: 1_000 }, client: { requestsPerSecond: 1_000, concurrency: 8, batchSize: 20 }, transactions: 20_000, pool: POOL_LAGS },
];

/** The chain behind its provider, in a child process (one per transaction count; the re-index bench's too). */
export async function startChain(transactions: number) {
  const child: ChildProcess = fork(path.join(__dirname, 'backfill-chain.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BACKFILL_CHAIN_CHILD: '1', BACKFILL_SEED: String(SEED), BACKFILL_TRANSACTIONS: String(transactions) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type?: string }) => {
        if (m?.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', reject);
        resolve(m as T);
      };
      child.on('message', onMessage);
      child.once('exit', reject);
    });
  const ready = await next<ChainReady>('listening');
  return {
    ready,
    url: `http://127.0.0.1:${ready.port}`,
    async configure(provider: RpcProviderOptions, pool: number[] = []) {
      const done = next('configured');
      child.send({ type: 'configure', provider, pool });
      await done;
    },
    async stats() {
      const s = next<{ stats: ProviderStats; cpuSeconds: number }>('stats');
      child.send({ type: 'stats' });
      return s;
    },
    /** The chain goes on at `transactionsPerSecond`, each new slot given to `onBlock`. */
    grow(transactionsPerSecond: number, onBlock: (b: ChainBlock) => void) {
      child.on('message', (m: { type?: string }) => m?.type === 'block' && onBlock(m as ChainBlock));
      child.send({ type: 'grow', transactionsPerSecond });
    },
    /** Stops the growth; resolves with the transactions the chain holds then. */
    async stopGrowing() {
      const stopped = next<{ transactions: number }>('stopped');
      child.send({ type: 'stopGrowing' });
      return (await stopped).transactions;
    },
    stop: () => child.disconnect(),
  };
}

/** The tables the same chain gives indexed in this process without an RPC: what every run must equal. */
async function referenceDigests(transactions: number) {
  const name = `bench_backfill_ref_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  const database = createDatabase({ url, poolMax: 4 });
  try {
    const projector = createProjector({ db: database.db, pgp: database.pgp, programId: IDL.address, source: 'rpc' });
    const sim = backfillSimulator(SEED);
    let count = 0;
    let batch: RawTransaction[] = [];
    while (count < transactions) {
      const txs = sim.nextBlock().transactions;
      count += txs.length;
      // Failed transactions are never fetched by the rpc source: the reference leaves them out too.
      batch.push(...txs.filter((t) => t.meta?.err === null || t.meta?.err === undefined));
      if (batch.length >= 2_000 || count >= transactions) {
        await projector.applyBatch(batch, { writerEpoch: 0 });
        batch = [];
      }
    }
    return await tableDigests(database.db);
  } finally {
    await database.close();
    await dropDatabase(name);
  }
}

async function runScenario(s: Scenario, chain: Awaited<ReturnType<typeof startChain>>, reference: Record<string, unknown>) {
  await chain.configure(s.provider, s.pool);
  const name = `bench_backfill_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  const database = createDatabase({ url, poolMax: 4 });
  const config = loadConfig({ LOG_LEVEL: 'error', PROGRAM_ID: IDL.address, TENANT_ID: `bench-${process.pid}` });
  const logger = createLogger({ level: 'error', service: 'bench', tenant: config.tenantId });
  const common = { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
  const source = createRpcSource({
    common, rpcUrl: chain.url, wsUrl: chain.url.replace('http', 'ws'), programId: IDL.address, subscribe: false, pollIntervalMs: 600_000,
    // A hung call (the fault switch's timeouts) counts as failed after 2 s, not the default 15 s.
    requestTimeoutMs: 2_000, fetchConcurrency: s.client.concurrency, requestsPerSecond: s.client.requestsPerSecond, rpcBatchSize: s.client.batchSize,
  });
  const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: url, updates: undefined, source, heartbeatMs: 5_000 });
  let committed = 0;
  // The first commit waits for the walk back over the signatures (newest first, a page at a
  // time: latency-bound) and the first chunk's bodies; the rate after it is the steady one.
  let first: { at: number; transactions: number } | undefined;
  const done = new Promise<void>((resolve) =>
    indexer.onBatch((r) => {
      committed += r.transactions;
      first ??= { at: performance.now(), transactions: r.transactions };
      // Every successful transaction committed, not only the newest slot reached: a batch may
      // end inside that slot and the rest of it come in the next (as on a pool, D-476).
      if (r.slot !== null && r.slot >= chain.ready.lastLiveSlot && committed >= chain.ready.live) resolve();
    }),
  );
  const ownPg = postgresCpuOf(name);
  await ownPg.start();
  const chainCpu0 = (await chain.stats()).cpuSeconds;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const running = indexer.run();
  await Promise.race([done, running]);
  const end = performance.now();
  const ms = end - t0;
  const firstMs = (first?.at ?? end) - t0;
  // Listed transactions per committed one (failed ones are listed, never fetched).
  const steady = first && end > first.at ? ((committed - first.transactions) / ((end - first.at) / 1000)) * (chain.ready.transactions / chain.ready.live) : 0;
  const cpu = process.cpuUsage(cpu0);
  const provider = await chain.stats();
  const pgCpu = await ownPg.stop();
  await indexer.stop();
  await source.close();
  const digests = await tableDigests(database.db);
  const { n: stored } = await database.db.one<{ n: number }>('SELECT count(*)::int AS n FROM processed_transactions');
  await database.close();
  await dropDatabase(name);
  const differing = Object.keys(reference).filter((t) => JSON.stringify(reference[t]) !== JSON.stringify(digests[t]));
  return { ms, firstMs, steady, cpuSeconds: (cpu.user + cpu.system) / 1e6, pgCpu, providerCpu: provider.cpuSeconds - chainCpu0, provider: provider.stats, client: source.rpc.stats(), limiter: source.limiter.stats(), committed, stored, differing };
}

export async function run(): Promise<void> {
  const only = process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim());
  const override = process.env.BENCH_TRANSACTIONS ? Number(process.env.BENCH_TRANSACTIONS) : undefined;
  const scenarios = SCENARIOS.filter((s) => !only || only.includes(s.name)).map((s) => ({ ...s, transactions: override ?? s.transactions }));
  if (!scenarios.length) throw new Error(`BENCH_SCENARIOS: none of ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const cores = os.availableParallelism();
  const rows: string[][] = [];
  const chains = new Map<number, { chain: Awaited<ReturnType<typeof startChain>>; reference: Record<string, unknown> }>();
  try {
    for (const s of scenarios) {
      let c = chains.get(s.transactions);
      if (!c) {
        const t0 = Date.now();
        const [chain, reference] = await Promise.all([startChain(s.transactions), referenceDigests(s.transactions)]);
        c = { chain, reference };
        chains.set(s.transactions, c);
        process.stderr.write(`chain of ${chain.ready.transactions} transactions (${chain.ready.live} successful) and its reference tables: ${Date.now() - t0} ms\n`);
      }
      const { transactions, live } = c.chain.ready;
      process.stderr.write(`scenario ${s.name}: ${s.what}, ${transactions} transactions…\n`);
      const r = await runScenario(s, c.chain, c.reference);
      const rate = (transactions / r.ms) * 1000;
      // The least a backfill must spend: a getTransaction per successful transaction and the
      // signature pages (1,000 a page, and the empty one that ends the walk).
      const minCredits = RPC_CREDITS.getTransaction! * live + RPC_CREDITS.getSignaturesForAddress! * (Math.ceil(transactions / 1_000) + 1);
      const limit = s.provider.requestsPerSecond;
      const allowance = limit ? (limit * transactions) / minCredits : undefined;
      const fault429 = r.provider.faults.rateLimited;
      const cpuBound = r.pgCpu === null ? undefined : (cores * transactions) / (r.cpuSeconds + r.pgCpu);
      // What the latency-bound walk back over the signature pages leaves of it: the walk, then every transaction at the CPU-bound rate.
      const walkBound = cpuBound === undefined ? undefined : transactions / (r.firstMs / 1000 + transactions / cpuBound);
      const machineBound = r.pgCpu === null ? undefined : (cores * transactions) / (r.cpuSeconds + r.pgCpu + r.providerCpu);
      rows.push([
        s.name,
        s.what,
        String(transactions),
        `${(r.ms / 1000).toFixed(1)} s (first commit after ${(r.firstMs / 1000).toFixed(1)} s)`,
        `${Math.round(rate)} (after the first commit ${Math.round(r.steady)})`,
        allowance
          ? `${Math.round(allowance)} (${(rate / allowance).toFixed(2)})`
          : cpuBound
            ? `CPU-bound ${Math.round(cpuBound)} (${(rate / cpuBound).toFixed(2)}, after the first commit ${(r.steady / cpuBound).toFixed(2)}); with the walk before the first commit ${Math.round(walkBound!)} (${(rate / walkBound!).toFixed(2)}); with the provider's CPU too ${Math.round(machineBound!)} (${(rate / machineBound!).toFixed(2)})`
            : 'n/a',
        `${(r.client.calls / transactions).toFixed(3)} / ${(r.client.requests / transactions).toFixed(3)}`,
        `${r.client.rateLimited} (${((100 * r.client.rateLimited) / r.client.requests).toFixed(2)} %; ${r.provider.rateLimited} over the limit, ${fault429} faults)`,
        `${r.client.retries} (5xx ${r.provider.faults.serverError}, timeouts ${r.provider.faults.timeout}, batches refused ${r.provider.batchesRefused})`,
        String(r.provider.refetched),
        r.differing.length || r.stored !== live ? `DIFFER: ${r.differing.join(', ')} (stored ${r.stored} of ${live})` : `equal (${r.stored} stored)`,
        `${r.cpuSeconds.toFixed(1)} / ${r.pgCpu?.toFixed(1) ?? 'n/a'} / ${r.providerCpu.toFixed(1)}`,
      ]);
    }
  } finally {
    for (const { chain } of chains.values()) chain.stop();
  }
  const head = ['scenario', 'provider', 'transactions', 'wall', 'tx/s', 'allowed tx/s (ratio)', 'calls / HTTP requests per tx', '429s (% of requests)', 'retries', 'bodies fetched twice', 'tables vs reference', 'CPU s indexer / PG / provider'];
  process.stdout.write(`\nbackfill benchmark (${new Date().toISOString()}, node ${process.version}, ${cores} cores, latency ${LATENCY.latencyMs} ± ${LATENCY.jitterMs} ms, seed ${SEED}; credits: ${Object.entries(RPC_CREDITS).map(([m, c]) => `${m} ${c}`).join(', ')})\n`);
  for (const r of rows) {
    process.stdout.write(`\n  ${r[0]}: ${r[1]}\n`);
    for (let i = 2; i < head.length; i++) process.stdout.write(`    ${head[i]!.padEnd(30)}  ${r[i]}\n`);
  }
}
