// `npm run bench -- <name>`: benchmarks print a table; they are not tests and assert nothing.
import { spawnSync } from 'node:child_process';
import { parseArgsOrExit, usageExit } from '../../core/cli';
import { IMAGE } from '../../core/constants';

/** Each bench, what it measures in a line, and how it runs; the settings are in each file's header. */
const benches: Record<string, { what: string; run: () => Promise<void> }> = {
  indexer: { what: 'backfill events/s against the batched-insert ceiling of the same PostgreSQL', run: async () => (await import('./indexer-bench')).run() },
  api: { what: 'REST throughput, p99 and CPU per request under 64 connections, tracing off and on', run: async () => (await import('./api-bench')).run() },
  ws: { what: '/ws delivery to 1,000 clients on one channel against a raw corked broadcast', run: async () => (await import('./ws-bench')).run() },
  'api-profile': { what: "CPU profile of the production API process under load: its hottest functions", run: async () => (await import('./api-profile')).run() },
  operator: { what: '100 MarketIndexers at once: time until Ready, writes, operator memory', run: async () => (await import('./operator-bench')).run() },
  abuse: { what: "each attack on the API while a well-behaved client reads: that client's latency", run: async () => (await import('./abuse-bench')).run() },
  'ws-backpressure': { what: '1,000 subscribers, 10 of which stop reading: those closed, the others served', run: async () => (await import('./ws-backpressure')).run() },
  soak: { what: 'API and realtime indexer for --minutes N with --clients N /ws clients: RSS, loop delay', run: async () => (await import('./soak-bench')).run() },
  offset: { what: 'GET /markets?offset=1000000 over 2M markets, uncached', run: async () => (await import('./offset-bench')).run() },
  backfill: { what: 'the rpc source backfilling through a provider-like RPC (latency, rate limit, faults)', run: async () => (await import('./backfill-bench')).run() },
  freshness: { what: 'chain to /ws client freshness through the real-time chain, indexer and API', run: async () => (await import('./freshness-bench')).run() },
  'tenant-cost': { what: "one tenant's processes idle and under light reads: RSS and CPU against the kit's requests", run: async () => (await import('./tenant-cost-bench')).run() },
  reindex: { what: "a re-index beside a live writer through one provider allowance: time to the switch, the live writer's lag, space", run: async () => (await import('./reindex-bench')).run() },
  'notify-flood': { what: "another role's 100,000 NOTIFYs on the live-schema channel: the API pool's availability, heap, pointer reads", run: async () => (await import('./notify-flood-bench')).run() },
  'read-replicas': { what: 'API reads on a HA PostgreSQL: primary CPU per 1,000 reads with and without a replica, replica lag in a backfill, failover time', run: async () => (await import('./read-replicas-bench')).run() },
  failover: { what: 'ten freezes of the writer indexer: time until a standby commits, nothing lost or twice', run: async () => (await import('./failover-bench')).run() },
};

const USAGE = [
  'usage: npm run bench -- <name>   (benchmarks print a table; they assert nothing)',
  ...Object.entries(benches).map(([name, b]) => `  ${name.padEnd(16)} ${b.what}`),
  'each is loadtest/bench/<name>*.ts, whose header lists its BENCH_* settings; figures: docs/benchmarks.md',
].join('\n');

const cli = parseArgsOrExit({ options: { help: { type: 'boolean' }, minutes: { type: 'string' }, clients: { type: 'string' } }, allowPositionals: true, strict: true }, USAGE, { commands: Object.keys(benches) });
const name = cli.command!;
if (cli.positionals.length > 1) usageExit(`unexpected argument ${cli.positionals[1]}`, USAGE);
if (name !== 'soak' && (cli.values.minutes !== undefined || cli.values.clients !== undefined)) usageExit('--minutes and --clients are options of the soak bench', USAGE);
const bench = benches[name]!.run;
// The indexer benchmark runs the indexer in this process: under the node flags of the image's
// indexer command (core/constants.ts), so it measures what production runs. V8 reads them
// before the heap exists, hence a new process.
const nodeFlags = name === 'indexer' ? IMAGE.commands.indexer.slice(1, -1).filter((f) => !process.execArgv.includes(f)) : [];
if (nodeFlags.length) {
  const child = spawnSync(process.execPath, [...nodeFlags, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}
bench().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
