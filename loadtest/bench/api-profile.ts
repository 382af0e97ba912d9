/**
 * `npm run bench -- api-profile`: CPU profile of the production API process (from dist/)
 * under 64 connections on one path, with tracing on (every request, exported to a local
 * sink) unless BENCH_TRACING=off. Prints the hottest functions and packages; the profile is
 * kept for a closer look (BENCH_PROFILE). BENCH_SIGNED=1 signs every request (a new nonce each)
 * as a wallet with stored stats: for `/api/v1/stats` and the other wallet-signed routes.
 * BENCH_NODE_FLAGS adds node flags to the API process (after the image's).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { migrate } from '../../core/db/migrate';
import { createDatabase } from '../../core/db';
import { IDL } from '../../core/events';
import { createProjector } from '../../indexer/projection';
import { MarketSimulator } from '../../simulator/simulation';
import { benchApiEnv, build, cpuSeconds, dropDatabase, freshDatabase, loadSigned, spawnImage } from './support';

const run_ = promisify(execFile);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function summarize(p: Profile, top: number): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let total = 0;
  p.samples.forEach((s, i) => {
    const d = p.timeDeltas[i] ?? 0;
    total += d;
    const n = byId.get(s)!;
    const url = n.callFrame.url;
    const where = url.includes('node_modules/') ? url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, '$1') : url.replace(/.*\/dist\//, 'dist/') || '(native)';
    fn.set(`${n.callFrame.functionName || '(anonymous)'}  ${where}`, (fn.get(`${n.callFrame.functionName || '(anonymous)'}  ${where}`) ?? 0) + d);
    pkg.set(where, (pkg.get(where) ?? 0) + d);
  });
  const lines = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `  ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  return [`total ${(total / 1e6).toFixed(2)} s`, 'by function:', ...lines(fn), 'by package or file:', ...lines(pkg)].join('\n');
}

export async function run(): Promise<void> {
  const name = `bench_apiprof_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  const database = createDatabase({ url, poolMax: 2 });
  const sim = new MarketSimulator({ seed: 3, programId: IDL.address });
  const projector = createProjector({ db: database.db, pgp: database.pgp, programId: IDL.address });
  for (let i = 0; i < 4; i++) {
    const txs = [];
    for (let s = 0; s < 200; s++) txs.push(...sim.nextBlock().transactions);
    await projector.applyBatch(txs, { writerEpoch: 0 });
  }
  const statsWallet = (await database.db.one<{ wallet: string }>('SELECT wallet FROM user_stats ORDER BY total_trades DESC, wallet LIMIT 1')).wallet;
  const signer = process.env.BENCH_SIGNED
    ? sim.walletKeys.find((k) => k.address === statsWallet)!
    : undefined;
  await database.close();

  const sink = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
  build();
  const dir = os.tmpdir();
  const file = process.env.BENCH_PROFILE && process.env.BENCH_PROFILE !== 'off' ? process.env.BENCH_PROFILE : path.join(dir, `api-${process.pid}.cpuprofile`);
  // BENCH_PROFILE=off measures the same run without the profiler's own cost.
  const profiling = process.env.BENCH_PROFILE !== 'off';
  const target = process.env.BENCH_PATH ?? '/api/v1/markets/current';
  const { child, port: listening } = spawnImage('api', {
    ...benchApiEnv(url),
    ...(process.env.BENCH_TRACING === 'off' ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl }),
    // The sampler under test, e.g. OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1,
    // and the batch span processor's settings.
    ...Object.fromEntries(['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_BSP_MAX_QUEUE_SIZE'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
  }, {
    flags: [
      ...(profiling ? ['--cpu-prof', `--cpu-prof-name=${path.basename(file)}`, `--cpu-prof-dir=${path.dirname(file)}`] : []),
      // More node flags for the API, e.g. `--require <file>` to count async resources per request.
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
    ],
  });
  const port = await listening;
  const cli = require.resolve('autocannon/autocannon.js');
  const seconds = process.env.BENCH_SECONDS ?? '8';
  // CPU per request varies far less than req/s on a shared machine: it is what a change
  // to the request path is judged by; throughput also depends on what else runs.
  const cpu0 = cpuSeconds(child.pid!);
  const r = signer
    ? await loadSigned(`http://127.0.0.1:${port}${target}`, signer.secretKey.subarray(0, 32), Number(seconds))
    : await (async () => {
        const { stdout } = await run_(process.execPath, [cli, '-c', '64', '-d', seconds, '-j', `http://127.0.0.1:${port}${target}`], { maxBuffer: 16 << 20 });
        const a = JSON.parse(stdout) as { requests: { average: number; total: number }; latency: { p99: number }; errors: number; non2xx: number };
        return { rps: a.requests.average, p99: a.latency.p99, total: a.requests.total, errors: a.errors + a.non2xx };
      })();
  const cpu = cpuSeconds(child.pid!) - cpu0;
  child.kill('SIGTERM');
  await new Promise((res) => child.once('exit', res));
  sink.close();
  await dropDatabase(name);
  const sampler = process.env.OTEL_TRACES_SAMPLER ? ` (${process.env.OTEL_TRACES_SAMPLER}${process.env.OTEL_TRACES_SAMPLER_ARG ? ` ${process.env.OTEL_TRACES_SAMPLER_ARG}` : ''})` : '';
  process.stdout.write(
    `\nAPI profile: GET ${target}${signer ? ' (signed)' : ''}, tracing ${process.env.BENCH_TRACING === 'off' ? 'off' : `on${sampler}`}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, API process CPU ${((cpu * 1e6) / r.total).toFixed(0)} µs/request, errors ${r.errors}\n`,
  );
  if (profiling) process.stdout.write(`${summarize(JSON.parse(await readFile(file, 'utf8')) as Profile, Number(process.env.BENCH_TOP ?? 25))}\nprofile: ${file}\n`);
}
