import http from 'node:http';
import { createShutdown } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createDatabase, type Db } from '../../core/db';
import { migrate } from '../../core/db/migrate';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createApp } from '../../server/app';
import { marketsPage } from '../../server/read/queries/markets';
import { createApiStores } from '../../server/stores';
import { freshDatabase, dropDatabase, insertBenchMarkets, pct } from './support';

/**
 * `npm run bench -- offset`: GET /markets at offset 1,000,000 over 2M markets (issue 25,
 * target 3; D-130). Each round measures, back to back and uncached: the route over HTTP with and
 * without the state filter, and the page query alone, as it is (block counts) and as it was
 * before D-130 (OFFSET over the index), so the ratio compares runs of the same round.
 * BENCH_MARKETS, BENCH_ROUNDS, BENCH_REQUESTS, BENCH_PER_EPOCH (markets sharing an epoch id).
 */

const MARKETS = Number(process.env.BENCH_MARKETS ?? 2_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40);
const PER_EPOCH = Number(process.env.BENCH_PER_EPOCH ?? 1);
const OFFSET = 1_000_000;

/** The page query before D-130: a deferred join, the offset skipped on the narrow index. */
const BEFORE = `SELECT m.* FROM markets m JOIN (SELECT id FROM markets ORDER BY market_id DESC, id DESC LIMIT $1 OFFSET $2) page USING (id)
  ORDER BY m.market_id DESC, m.id DESC`;

async function timed(n: number, once: () => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await once();
    times.push(performance.now() - t);
  }
  return { p50: pct(times, 50), p95: pct(times, 95) };
}

async function fetchOk(url: string) {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
}

export async function run(): Promise<void> {
  const name = `bench_offset_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  const database = createDatabase({ url, poolMax: 10 });
  const db: Db = database.db;
  process.stderr.write(`inserting ${MARKETS} markets...\n`);
  await insertBenchMarkets(db, MARKETS, PER_EPOCH);

  const env = { LOG_LEVEL: 'silent', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000000', RATE_LIMIT_MAX_REQUESTS: '100000000', TENANT_ID: `bench-${process.pid}` };
  const config = loadConfig(env);
  const logger = createLogger({ level: 'silent', service: 'bench', tenant: config.tenantId });
  const common = { config, logger, metrics: createMetrics(), shutdown: createShutdown(logger) };
  const server = http.createServer(createApp({ common, db, hotTtlMs: 0, ...createApiStores(common, undefined) }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1/markets?limit=50&offset=${OFFSET}`;

  // The same page both ways, or the comparison means nothing.
  const [now, before] = await Promise.all([marketsPage(db, { limit: 50, offset: OFFSET }), db.any(BEFORE, [50, OFFSET])]);
  if (JSON.stringify(now.rows) !== JSON.stringify(before) || now.rows.length !== 50) throw new Error('the two page queries disagree');

  const variants: [string, () => Promise<unknown>][] = [
    [`GET /markets?offset=${OFFSET}&limit=50 (HTTP, uncached)`, () => fetchOk(base)],
    [`GET /markets?offset=${OFFSET}&limit=50&state=5 (HTTP, uncached)`, () => fetchOk(`${base}&state=5`)],
    ['page query + total, block counts (D-130)', () => marketsPage(db, { limit: 50, offset: OFFSET })],
    ['page query, OFFSET over the index (before D-130)', () => db.any(BEFORE, [50, OFFSET])],
  ];
  for (const [, once] of variants) await timed(5, once); // warm the JIT, the pool and the buffers
  const results = new Map<string, { p50: number; p95: number }[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, once] of variants) (results.get(label) ?? results.set(label, []).get(label)!).push(await timed(REQUESTS, once));
  }
  server.close();
  await database.close();
  await dropDatabase(name);

  const fmt = (xs: number[]) => `${pct(xs, 50).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
  process.stdout.write(
    `\nDeep offset benchmark (${new Date().toISOString()}, ${MARKETS} markets, ${PER_EPOCH} per epoch id, ${ROUNDS} rounds of ${REQUESTS} sequential requests; ms, median (min–max) over rounds)\n`,
  );
  for (const [label, rs] of results) {
    process.stdout.write(`  ${label.padEnd(66)}  p50 ${fmt(rs.map((r) => r.p50))}, p95 ${fmt(rs.map((r) => r.p95))}; p95 per round ${rs.map((r) => r.p95.toFixed(1)).join(' ')}\n`);
  }
  const nowP95 = results.get(variants[2]![0])!.map((r) => r.p95);
  const beforeP95 = results.get(variants[3]![0])!.map((r) => r.p95);
  const ratios = nowP95.map((p, i) => beforeP95[i]! / p);
  process.stdout.write(`  query p95, before / after, per round: ${ratios.map((r) => `${r.toFixed(0)}×`).join(', ')}\n`);
}
