import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { SETTINGS } from '../../core/config/settings';
import { migrate } from '../../core/db/migrate';
import { createRedis, redisReady } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { parseEnvelope } from '../../core/redis/updates';
import type { ChainNode } from '../../simulator/node';
import { openFreshChain } from './fresh-chain';
import { freshnessReport, type PhaseResult, type Sample } from './freshness-report';
import { nowMs, startLatencyProxy, type LatencyProxy } from './rpc-latency-proxy';
import { build, cpuSeconds, dropDatabase, freshDatabase, REDIS_URL, ROOT, spawnImage } from './support';
import { Receivers } from './ws-receivers';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1_000);
const CLIENT_PROCS = Number(process.env.BENCH_CLIENT_PROCS ?? 2);
const LATENCY_MS = Number(process.env.BENCH_RPC_LATENCY_MS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
/** BENCH_RPC_POOL (e.g. `0,2,5`): the chain's RPC served as a provider's pool of nodes that many slots behind (D-460, D-476). */
const POOL = process.env.BENCH_RPC_POOL ? process.env.BENCH_RPC_POOL.split(',').map(Number) : [];
/**
 * Another build's indexer (`dist/indexer/main.js` of a checkout built with `npm run build`, e.g.
 * the commit before a change), run as `before` in the same run, each round before this
 * checkout's (`after`): before and after on the same chain, machine and load.
 */
const BASE_INDEXER = process.env.BENCH_FRESHNESS_BASE_INDEXER;
/** One market for the whole run: a day-long epoch (markets are keyed by epoch). */
const EPOCH_SECONDS = 86_400;
const PROGRAM_ID = SETTINGS.PROGRAM_ID.default;

/** Stage boundaries the bench sees from outside, for one measured phase. */
interface Seen {
  /** slot -> when the chain produced it (in this process) and its program transactions (live ones). */
  produced: Map<number, { at: number; sigs: string[] }>;
  /** Cursor advances, in commit order: the batch's highest slot and when its commit was announced. */
  commits: { slot: number; at: number }[];
  /** Envelopes of the measured channel on the bus: seq, slot, when this process got them. */
  published: { seq: number; slot: number; at: number }[];
}

/**
 * An AFTER UPDATE trigger on the cursor row NOTIFYing its new slot: PostgreSQL delivers a NOTIFY
 * when the transaction commits, so the listener sees each batch commit without a change to the
 * indexer. Added to the bench's own scratch database only.
 */
const COMMIT_TRIGGER = `
CREATE FUNCTION bench_commit_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('bench_commit', NEW.last_processed_slot::text); RETURN NEW; END $$;
CREATE TRIGGER bench_commit AFTER UPDATE ON indexer_cursor FOR EACH ROW
  WHEN (NEW.last_processed_slot IS DISTINCT FROM OLD.last_processed_slot) EXECUTE FUNCTION bench_commit_notify();`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One phase: a fresh database and tenant, the indexer (`indexerFile`, on its rpc source through
 * the proxy) and the API, CLIENTS /ws clients on the market's channel; once the indexer has
 * caught up with the chain, SECONDS of recording, then the samples.
 */
async function phase(label: string, indexerFile: string | undefined, n: number, chain: ChainNode, proxy: LatencyProxy, seen: Seen): Promise<PhaseResult> {
  const name = `bench_freshness_${process.pid}_${n}`;
  const tenant = `bench-freshness-${process.pid}-${n}`;
  const databaseUrl = await freshDatabase(name);
  await migrate({ databaseUrl });
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  await pg.query(COMMIT_TRIGGER);
  pg.on('notification', (m) => seen.commits.push({ slot: Number(m.payload), at: nowMs() }));
  await pg.query('LISTEN bench_commit');
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    TENANT_ID: tenant,
    PROGRAM_ID,
    API_PORT: '0',
    INDEXER_PORT: '0',
    API_HOST: '127.0.0.1',
    RPC_URL: proxy.url,
    RPC_WS_URL: proxy.wsUrl,
    WS_MAX_CONNECTIONS_PER_IP: String(CLIENTS + 10),
    WS_MAX_CLIENTS: String(CLIENTS + 10),
  };
  // As the image runs them (core/constants.ts): the indexer under its node flags; another build's only swaps the entry point.
  const indexer = spawnImage('indexer', env, { entry: indexerFile, args: ['--source', 'rpc', '--no-progress'] });
  const api = spawnImage('api', env);
  const keys = createKeys(tenant);
  const sub = createRedis(REDIS_URL);
  const channel = `market:${Math.floor(chain.simulator.blockTimeOf(chain.simulator.slot) / EPOCH_SECONDS)}`;
  const rx = new Receivers(CLIENTS, CLIENT_PROCS, channel);
  try {
    await redisReady(sub);
    sub.on('message', (_c: string, message: string) => {
      const e = parseEnvelope(message);
      if (e) seen.published.push({ seq: e.seq, slot: e.slot, at: nowMs() });
    });
    await sub.subscribe(keys.channel(channel));
    const [apiPort] = await Promise.all([api.port, indexer.port]);
    await rx.connect(`ws://127.0.0.1:${apiPort}/ws`, true);
    // Caught up: the backfill of the chain so far is done and the cursor follows the tip.
    const caughtUpBy = Date.now() + 180_000;
    for (;;) {
      const { rows } = await pg.query<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor WHERE id = 1');
      if (Number(rows[0]?.s ?? 0) >= chain.simulator.slot - 2) break;
      if (Date.now() > caughtUpBy) throw new Error(`${label}: the indexer did not catch up with the chain in 180 s`);
      await sleep(250);
    }
    await sleep(2_000);
    await rx.reset();
    seen.produced.clear();
    seen.commits.length = 0;
    seen.published.length = 0;
    proxy.record(true);
    const pids = [indexer.child.pid!, api.child.pid!, ...rx.pids()];
    const cpu0 = pids.map(cpuSeconds);
    const own0 = process.cpuUsage();
    const from = chain.simulator.slot + 1;
    await sleep(SECONDS * 1000);
    const to = chain.simulator.slot;
    const calls = { getSignaturesForAddress: proxy.calls('getSignaturesForAddress'), getTransaction: proxy.calls('getTransaction') };
    const cpu = pids.map((p, i) => (cpuSeconds(p) - cpu0[i]!) / SECONDS);
    const own = process.cpuUsage(own0);
    // What was produced by `to` reaches the clients in well under this.
    await sleep(3_000);
    proxy.record(false);
    await rx.collect();
    const samples: Sample[] = [];
    let unseen = 0;
    let incomplete = 0;
    let txs = 0;
    for (let slot = from; slot <= to; slot++) {
      const block = seen.produced.get(slot);
      if (!block) continue;
      const commit = seen.commits.find((c) => c.slot >= slot);
      const updates = commit ? seen.published.filter((e) => e.slot === commit.slot) : [];
      for (const sig of block.sigs) {
        txs += 1;
        // The batch carrying this transaction published nothing on the channel: no update to time.
        if (!commit || !updates.length) continue;
        const notified = proxy.notifiedAt(sig);
        const fetched = proxy.answeredAt(sig);
        if (notified === undefined || fetched === undefined) {
          unseen += 1;
          continue;
        }
        const fanned = updates.map((u) => (rx.count.get(u.seq) === CLIENTS ? rx.last.get(u.seq) : undefined));
        if (fanned.some((t) => t === undefined)) {
          incomplete += 1;
          continue;
        }
        samples.push({
          block: block.at,
          notified,
          fetched,
          committed: commit.at,
          published: Math.max(...updates.map((u) => u.at)),
          delivered: Math.max(...(fanned as number[])),
        });
      }
    }
    return {
      label,
      samples,
      txs,
      unseen,
      incomplete,
      updates: seen.published.length,
      slots: to - from + 1,
      callsPerTx: { getSignaturesForAddress: calls.getSignaturesForAddress / Math.max(1, txs), getTransaction: calls.getTransaction / Math.max(1, txs) },
      cpuPct: { indexer: cpu[0]! * 100, api: cpu[1]! * 100, clients: cpu.slice(2).reduce((a, b) => a + b, 0) * 100, bench: ((own.user + own.system) / 1e6 / SECONDS) * 100 },
    };
  } finally {
    rx.close();
    for (const c of [indexer.child, api.child]) c.kill('SIGKILL');
    sub.disconnect();
    await pg.end().catch(() => {});
    await sleep(300);
    await removeKeys(keys.prefix);
    await dropDatabase(name);
  }
}

/** The phase's tenant leaves nothing in Redis. */
async function removeKeys(prefix: string): Promise<void> {
  const redis = createRedis(REDIS_URL);
  try {
    await redisReady(redis);
    const found = await redis.keys(`${prefix}*`);
    if (found.length) await redis.del(...found);
  } finally {
    redis.disconnect();
  }
}

/**
 * `npm run bench -- freshness`: chain-to-client freshness (issue 33 part 2). The simulated chain
 * runs in real time in this process (a block per 400 ms slot, its production time recorded:
 * block times on a Solana RPC are whole seconds) behind its JSON-RPC and a latency proxy
 * (BENCH_RPC_LATENCY_MS, 40 ms a call and per notification); the production indexer (rpc source:
 * logsSubscribe + getTransaction) and API run compiled, as the image runs them; CLIENTS /ws
 * clients subscribe to the one market's `market:` channel. Per transaction whose batch
 * updated the channel: block produced -> notification sent by the proxy -> getTransaction
 * answered by the proxy -> the cursor's commit (a NOTIFY trigger) -> the envelope on the Redis
 * channel (this process subscribes) -> the last client got it.
 */
export async function run(): Promise<void> {
  build();
  const load0 = execFileSync('uptime').toString().trim();
  const { chain, close: closeChain } = openFreshChain({ name: 'freshness', programId: PROGRAM_ID, seed: 7, epochSeconds: EPOCH_SECONDS });
  const seen: Seen = { produced: new Map(), commits: [], published: [] };
  const record = chain.rpc.record;
  chain.rpc.record = (block) => {
    const sigs = block.transactions.filter((t) => !t.meta?.err).map((t) => t.transaction.signatures[0]!);
    seen.produced.set(block.slot, { at: nowMs(), sigs });
    record(block);
  };
  chain.rpc.pool.configure({ lags: POOL });
  const endpoints = await chain.rpc.listen(0);
  const stop = chain.runRealtime();
  const proxy = await startLatencyProxy({ upstream: endpoints.url, upstreamWs: endpoints.wsUrl, latencyMs: LATENCY_MS });
  // This build's indexer is the image's (undefined: IMAGE.commands' entry point).
  const variants: [string, string | undefined][] = BASE_INDEXER
    ? [['before', path.relative(ROOT, path.resolve(BASE_INDEXER))], ['after', undefined]]
    : [['indexer', undefined]];
  const results: PhaseResult[] = [];
  try {
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) for (const [label, file] of variants) results.push(await phase(label, file, (n += 1), chain, proxy, seen));
  } finally {
    stop();
    await proxy.close();
    await closeChain();
  }
  const load1 = execFileSync('uptime').toString().trim();
  if (POOL.length) process.stdout.write(`the chain's RPC a pool of ${POOL.length} nodes, ${POOL.join(', ')} slots behind (BENCH_RPC_POOL); requests per node ${chain.rpc.pool.served().join(', ')}\n`);
  process.stdout.write(freshnessReport(results, { clients: CLIENTS, seconds: SECONDS, latencyMs: LATENCY_MS, loadBefore: load0, loadAfter: load1 }));
}
