import { execFile, type ChildProcess } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type autocannon from 'autocannon';
import { createShutdown } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createDatabase } from '../../core/db';
import { migrate } from '../../core/db/migrate';
import { IDL } from '../../core/events';
import { createRedis, redisReady } from '../../core/redis/client';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createProjector } from '../../indexer/projection';
import { keyPairOf } from '../../simulator/ids';
import { MarketSimulator } from '../../simulator/simulation';
import { createApp } from '../../server/app';
import { createApiStores } from '../../server/stores';
import { walletHeaders } from './wallet-headers';
import { admin, benchApiEnv, build, cpuSeconds, dbUrl, insertBenchMarkets, loadSigned, pct, REDIS_URL, spawnImage, spawnListening } from './support';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const run_ = promisify(execFile);
const MARKETS = Number(process.env.BENCH_MARKETS ?? 2_000_000);
// Five at least: the tracing comparison is judged on the median of five interleaved rounds (issue 33);
// with three, one round's drift moved a path's ratio by more than the gap it measures.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Target {
  label: string;
  child: ChildProcess;
  base: string;
  /** The URL path this target answers `p` on. */
  path: (p: string) => string;
}
type Run = Awaited<ReturnType<typeof load>> & { cpuUs: number; round: number };


async function listen(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** autocannon in its own process, so the load generator does not share the servers' event loop. */
async function load(url: string) {
  const cli = require.resolve('autocannon/autocannon.js');
  const { stdout } = await run_(process.execPath, [cli, '-c', '64', '-d', String(DURATION), '-j', url], { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as autocannon.Result;
  return { rps: r.requests.average, p99: r.latency.p99, total: r.requests.total, errors: r.errors + r.non2xx };
}


async function sequential(url: string, n: number, headers?: () => Record<string, string>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: headers?.() });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
    times.push(performance.now() - t);
  }
  return { p50: pct(times, 50), p95: pct(times, 95) };
}

export async function run(): Promise<void> {
  const name = `bench_api_${process.pid}`;
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const url = dbUrl(name);
  await migrate({ databaseUrl: url });
  const database = createDatabase({ url, poolMax: 10 });
  const programId = IDL.address;

  // Data written by the indexer's own projector from a simulated chain.
  const sim = new MarketSimulator({ seed: 3, programId });
  const projector = createProjector({ db: database.db, pgp: database.pgp, programId });
  for (let i = 0; i < 8; i++) {
    const txs = [];
    for (let s = 0; s < 200; s++) txs.push(...sim.nextBlock().transactions);
    await projector.applyBatch(txs, { writerEpoch: 0 });
  }

  const config = loadConfig(benchApiEnv(url));
  const logger = createLogger({ level: 'silent', service: 'bench', tenant: config.tenantId });
  const common = { config, logger, metrics: createMetrics(), shutdown: createShutdown(logger) };
  const redis = createRedis(REDIS_URL);
  await redisReady(redis);
  // BENCH_PATHS=/api/v1/markets/current measures one path (more rounds in the same time).
  const paths = process.env.BENCH_PATHS ? process.env.BENCH_PATHS.split(',') : ['/api/v1/markets/current', '/api/v1/orderbook/top', '/api/v1/markets?limit=50'];
  // The signed route measured against the public current market: a wallet with stored stats, so
  // the handler is one indexed read, and the rest is what signing costs the server (budget
  // check, Ed25519 verification, nonce claim, per-wallet limit; D-77).
  const SIGNED = '/api/v1/stats';
  const statsWallet = (await database.db.one<{ wallet: string }>('SELECT wallet FROM user_stats ORDER BY total_trades DESC, wallet LIMIT 1')).wallet;
  const signer = sim.walletKeys.find((k) => k.address === statsWallet)!;
  const PUBLIC_ROW = `/api/v1/v2/referral/${statsWallet}`;
  const rows: [string, string][] = [];

  // The real API process (production build, plain node, full middleware: Redis rate limiter
  // with the limit raised, metrics, request ids), without and with tracing: every span
  // exported over OTLP/HTTP to a local sink that only counts what it gets.
  let exports = 0;
  const sink = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  build();
  const variants: [string, Record<string, string>][] = [
    ['tracing off', {}],
    ['tracing on, every request', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }],
    ['tracing on, 1 in 10 sampled', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }],
    // Context propagation switched on by the rare sampled request, nearly nothing traced: what
    // every request pays for tracing being possible (Node's AsyncLocalStorage hooks).
    ['tracing on, 1 in 1,000 sampled', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.001' }],
    // The SDK and the instrumentations loaded, nothing sampled: what an unsampled request pays.
    ['tracing on, none sampled', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_off' }],
  ];
  // BENCH_TRACING=off: only the untraced variants (a shorter run for A/B comparisons).
  const tracingOff = process.env.BENCH_TRACING === 'off';
  // BENCH_API_ALT=<another build's dist/server/main.js>: that build measured in the same rounds,
  // for a before/after ratio that machine drift cannot fake.
  const alt = process.env.BENCH_API_ALT ? [[`tracing off, other build (${process.env.BENCH_API_ALT})`, {}, process.env.BENCH_API_ALT] as const] : [];
  const targets: Target[] = [];
  for (const [label, tracingEnv, entry] of [...variants.filter(([, e]) => !tracingOff || !e.OTEL_EXPORTER_OTLP_ENDPOINT).map(([l, e]) => [l, e, undefined] as const), ...alt]) {
    // As the image runs the API (IMAGE.commands.api); the other build's entry under the same flags.
    const { child, port } = spawnImage('api', { ...benchApiEnv(url), ...tracingEnv }, { entry });
    targets.push({ label: `API process, ${label}`, child, base: `http://127.0.0.1:${await port}`, path: (p) => p });
  }
  // The ceiling of each path: a plain Express process sending that path's body from memory (a
  // 50-market page is many times the size of the current market, and costs more to write).
  const bodies = await Promise.all(paths.map(async (p) => (await (await fetch(`${targets[0]!.base}${p}`)).text())));
  const bodiesFile = path.join(os.tmpdir(), `bench-api-bodies-${process.pid}.json`);
  await writeFile(bodiesFile, JSON.stringify(bodies));
  const plain = spawnListening('loadtest/bench/plain-express.ts', { BODIES_FILE: bodiesFile });
  // What tracing alone costs: the same app with the API's server span exported on every request.
  const plainPath = (p: string) => `/${paths.indexOf(p)}`;
  if (!tracingOff) {
    const traced = spawnListening('loadtest/bench/plain-express.ts', { BODIES_FILE: bodiesFile, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
    targets.unshift({ label: 'plain Express + server span only, tracing on', child: traced.child, base: `http://127.0.0.1:${await traced.port}`, path: plainPath });
  }
  targets.unshift({ label: 'plain Express, same body from memory', child: plain.child, base: `http://127.0.0.1:${await plain.port}`, path: plainPath });
  // Fresh processes: warm the JIT, the pools and the cache before measuring.
  for (const t of targets) for (const p of paths) await sequential(`${t.base}${t.path(p)}`, 300);
  const signedTarget = targets.find((t) => t.label === 'API process, tracing off')!;
  await sequential(`${signedTarget.base}${SIGNED}`, 300, () => walletHeaders(signer, `GET ${SIGNED.slice('/api/v1'.length)}`));

  // Interleaved rounds: this machine's speed drifts by tens of percent within minutes, so each
  // round measures the ceiling and every variant back to back, and a ratio only ever compares
  // runs of the same round. CPU per request is the server process's own (user + system).
  const runs = new Map<string, Run[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of paths) {
      for (const t of targets) {
        const cpu0 = cpuSeconds(t.child.pid!);
        const r = await load(`${t.base}${t.path(p)}`);
        const cpuUs = ((cpuSeconds(t.child.pid!) - cpu0) * 1e6) / Math.max(1, r.total);
        const key = `${p}\u0000${t.label}`;
        (runs.get(key) ?? runs.set(key, []).get(key)!).push({ ...r, cpuUs, round });
        // Right after the public current market on the same process: the signed route, and a
        // public route that also reads one indexed row, which tells the signature's cost from the read's.
        if (t === signedTarget && p === paths[0]) {
          for (const [route, loader] of [
            [SIGNED, () => loadSigned(`${t.base}${SIGNED}`, signer.secretKey.subarray(0, 32), DURATION)],
            [PUBLIC_ROW, () => load(`${t.base}${PUBLIC_ROW}`)],
          ] as const) {
            const c0 = cpuSeconds(t.child.pid!);
            const s = await loader();
            const sKey = `${route}\u0000${t.label}`;
            (runs.get(sKey) ?? runs.set(sKey, []).get(sKey)!).push({ ...s, cpuUs: ((cpuSeconds(t.child.pid!) - c0) * 1e6) / Math.max(1, s.total), round });
          }
        }
      }
    }
  }
  const median = (xs: number[]) => pct(xs, 50);
  for (const p of paths) {
    rows.push([`GET ${p} (${Buffer.byteLength(bodies[paths.indexOf(p)]!)} bytes)`, '']);
    const ceiling = runs.get(`${p}\u0000${targets[0]!.label}`)!;
    const off = runs.get(`${p}\u0000API process, tracing off`)!;
    const span = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
    for (const t of targets) {
      const rs = runs.get(`${p}\u0000${t.label}`)!;
      const ratios = rs.map((r) => r.rps / ceiling.find((c) => c.round === r.round)!.rps);
      // The tracing variants against the same process with tracing off, round by round.
      // Throughput and CPU per request, each as tracing off's over this one's in the same round: CPU
      // per request moves far less than req/s with what else runs on the machine.
      const offOf = (r: Run) => off.find((c) => c.round === r.round)!;
      const vsOff = t.label.startsWith('API process, tracing on')
        ? `, vs tracing off ${span(rs.map((r) => r.rps / offOf(r).rps))} (by CPU/request ${span(rs.map((r) => offOf(r).cpuUs / r.cpuUs))})`
        : '';
      const ratio = t === targets[0] ? '' : `, ratio ${span(ratios)}${vsOff}`;
      rows.push([
        `  ${t.label}`,
        `${Math.round(median(rs.map((r) => r.rps)))} req/s${ratio}, p99 ${median(rs.map((r) => r.p99))} ms, ${Math.round(median(rs.map((r) => r.cpuUs)))} µs CPU/request, errors ${rs.reduce((n, r) => n + r.errors, 0)}`,
      ]);
    }
  }
  {
    // Ratios to the public current market measured just before, on the same process.
    const pub = runs.get(`${paths[0]}\u0000${signedTarget.label}`)!;
    rows.push([`Signed vs public, ${signedTarget.label}; ratio to GET ${paths[0]} of the same round`, '']);
    for (const [route, label] of [
      [paths[0], `GET ${paths[0]} (public, from memory)`],
      [SIGNED, `GET ${SIGNED} (wallet-signed, a new nonce per request, one indexed read)`],
      [PUBLIC_ROW, 'GET /api/v1/v2/referral/:wallet (public, one indexed read)'],
    ] as const) {
      const rs = runs.get(`${route}\u0000${signedTarget.label}`)!;
      const ratios = rs.map((r) => r.rps / pub.find((c) => c.round === r.round)!.rps);
      rows.push([
        `  ${label}`,
        `${Math.round(median(rs.map((r) => r.rps)))} req/s, ratio ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}), p99 ${median(rs.map((r) => r.p99))} ms, ${Math.round(median(rs.map((r) => r.cpuUs)))} µs CPU/request, errors ${rs.reduce((n, r) => n + r.errors, 0)}`,
      ]);
    }
  }
  for (const t of targets) {
    t.child.kill('SIGTERM');
    await new Promise((r) => t.child.once('exit', r));
  }
  await rm(bodiesFile, { force: true });
  rows.push(['OTLP export requests received (tracing on)', String(exports)]);
  sink.server.close();

  // Deep paging and computed stats, uncached (TTL 0).
  process.stderr.write(`inserting ${MARKETS} markets...\n`);
  await insertBenchMarkets(database.db, MARKETS);
  const w = keyPairOf('bench-stats-wallet');
  await database.db.none(
    `INSERT INTO settled_trades (id, wallet, market_address, market_id, side, shares, cost, payout, pnl, is_win, market_outcome, settled_at, t_start, t_end, slot, tx_signature)
     SELECT 10000000 + g, $1, 'bench' || g, 1000000 + g, 'yes', 10, 5, 10, 5, true, 1, to_timestamp(g), to_timestamp(0), to_timestamp(60), g, 's'
       FROM generate_series(1, 10000) g`,
    [w.address],
  );
  const cold = await listen(createApp({ common, db: database.db, hotTtlMs: 0, ...createApiStores(common, redis) }));
  const deep = await sequential(`${cold.url}/api/v1/markets?offset=1000000&limit=50`, 40);
  rows.push([`GET /markets?offset=1000000 (${MARKETS} markets, uncached)`, `p50 ${deep.p50.toFixed(1)} ms, p95 ${deep.p95.toFixed(1)} ms`]);
  const stats = await sequential(`${cold.url}/api/v1/stats`, 40, () => walletHeaders(w, 'GET /stats'));
  rows.push(['GET /stats computed over 10,000 records (signed)', `p50 ${stats.p50.toFixed(1)} ms, p95 ${stats.p95.toFixed(1)} ms`]);

  cold.server.close();
  redis.disconnect();
  await database.close();
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\nAPI benchmark (${new Date().toISOString()}, 64 connections, ${DURATION} s a run, medians of ${ROUNDS} interleaved rounds)\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
}
