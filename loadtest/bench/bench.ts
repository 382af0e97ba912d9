// `npm run bench -- <name>`: benchmarks print a table; they are not tests and assert nothing.
import { spawnSync } from 'node:child_process';
import { IMAGE } from '../../core/constants';

const benches: Record<string, () => Promise<void>> = {
  indexer: async () => (await import('./indexer-bench')).run(),
  api: async () => (await import('./api-bench')).run(),
  ws: async () => (await import('./ws-bench')).run(),
  'api-profile': async () => (await import('./api-profile')).run(),
  operator: async () => (await import('./operator-bench')).run(),
  abuse: async () => (await import('./abuse-bench')).run(),
  'ws-backpressure': async () => (await import('./ws-backpressure')).run(),
  soak: async () => (await import('./soak-bench')).run(),
  offset: async () => (await import('./offset-bench')).run(),
  backfill: async () => (await import('./backfill-bench')).run(),
  freshness: async () => (await import('./freshness-bench')).run(),
  failover: async () => (await import('./failover-bench')).run(),
};

const name = process.argv[2];
const usage = `usage: npm run bench -- <${Object.keys(benches).join('|')}>\n(each in loadtest/bench/; what each measures and its settings: the README's table of benchmarks)\n`;
if (name === '--help' || name === '-h') {
  process.stdout.write(usage);
  process.exit(0);
}
const bench = name ? benches[name] : undefined;
if (!bench) {
  process.stderr.write(usage);
  process.exit(2);
}
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
