import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config';
import { createDatabase } from '../core/db';
import { migrate } from '../core/db/migrate';
import { createCommon } from '../core/process';
import { createMemoryBus } from '../core/redis/bus';
import { createMemoryUpdateLog } from '../core/redis/updates';
import { createIndexer } from '../indexer/indexer';
import { createOracleIngest, runOracleIngest } from '../indexer/oracle';
import { createSimulatorSource } from '../indexer/sources/simulator';
import { startApiServer } from '../server/run';
import { createLiveStores } from '../server/stores';
import { startEmbeddedPostgres } from './postgres';

export interface EmbeddedOptions {
  fresh: boolean;
  dataDir: string;
  seed: number | undefined;
  epochSeconds: number | undefined;
  feeds: number | undefined;
}

/** What makes the simulated chain reproducible across restarts, kept beside the database. */
interface Simulation {
  seed: number;
  epochSeconds: number;
  feeds: number;
  /** Unix seconds of slot 1: two epochs before the first start, so there is history at once. */
  startTime: number;
}

function loadSimulation(file: string, opts: EmbeddedOptions): Simulation {
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Simulation;
    for (const k of ['seed', 'epochSeconds', 'feeds'] as const) {
      if (opts[k] !== undefined && opts[k] !== saved[k]) {
        throw new Error(`the data folder holds a chain with ${k} ${saved[k]}; start with --fresh to change it`);
      }
    }
    return saved;
  }
  const epochSeconds = opts.epochSeconds ?? 60;
  const now = Math.floor(Date.now() / 1000);
  const sim = { seed: opts.seed ?? 1, epochSeconds, feeds: opts.feeds ?? 2, startTime: Math.floor(now / epochSeconds) * epochSeconds - 2 * epochSeconds };
  writeFileSync(file, `${JSON.stringify(sim, null, 2)}\n`);
  return sim;
}

function banner(port: number, dataDir: string, sim: Simulation, variant: 'v1' | 'legacy'): string {
  const base = `http://localhost:${port}`;
  const tryLines =
    variant === 'legacy'
      ? [
          `  curl ${base}/api/v1/markets/current`,
          `  curl '${base}/api/v1/markets?limit=5'`,
          `  curl ${base}/api/v1/oracle/<pythFeed from the first command>/history`,
          `  on ws://localhost:${port}/ws send {"type":"subscribe","channel":"market.update","marketId":<marketId from the first command>}`,
        ]
      : [
          `  curl ${base}/api/v1/markets/current`,
          `  curl '${base}/api/v1/markets?limit=5'`,
          `  npm run tail -- --port ${port} orderbook:<marketId from the first command>`,
        ];
  return [
    '',
    `market-indexer is running in single-process mode (simulated chain, ${sim.epochSeconds} s markets, data in ${dataDir})`,
    '',
    `  REST API    ${base}/api/v1${variant === 'legacy' ? '   (the spec appendix variant: API_VARIANT=legacy)' : ''}`,
    `  WebSocket   ws://localhost:${port}/ws`,
    `  API docs    ${base}/docs${variant === 'legacy' ? `   (contracts: ${base}/docs/openapi-legacy.yaml, ${base}/docs/asyncapi-legacy.yaml)` : ''}`,
    `  Metrics     ${base}/metrics`,
    '',
    'Try:',
    ...tryLines,
    '',
    'Ctrl-C stops it; start again to resume where it stopped (--fresh starts over).',
    '',
  ].join('\n');
}

/**
 * Single-process mode: embedded PostgreSQL, the in-memory bus, update log, nonce store, rate
 * limiter and connection leases, the simulated chain paced by the wall clock, the indexer and
 * the API, in one process with one shutdown sequence.
 */
export async function runEmbedded(config: Config, opts: EmbeddedOptions): Promise<void> {
  const common = createCommon(config, 'embedded');
  const { logger, shutdown } = common;
  // Added first, so it runs last: the line says every other shutdown step has finished.
  shutdown.add('stopped', () => void process.stdout.write('market-indexer stopped\n'));
  try {
    const dataDir = path.resolve(opts.dataDir);
    if (opts.fresh) rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    const sim = loadSimulation(path.join(dataDir, 'simulation.json'), opts);

    const pg = await startEmbeddedPostgres(path.join(dataDir, 'pglite'));
    shutdown.add('postgres', () => pg.close());
    await migrate({ databaseUrl: pg.url });
    // One pool for both halves: PGlite runs one query at a time anyway.
    const database = createDatabase({ url: pg.url, poolMax: 6, applicationName: 'market-indexer-embedded' });
    shutdown.add('database', () => database.close());

    const bus = createMemoryBus({ onError: (err) => logger.warn({ err }, 'bus handler failed') });
    const updates = createMemoryUpdateLog({ bus });
    const live = createLiveStores(common, undefined, { bus, updates });
    shutdown.add('live', () => live.close());
    const source = createSimulatorSource({ seed: sim.seed, programId: config.programId, feeds: sim.feeds, epochSeconds: sim.epochSeconds, startTime: sim.startTime, realtime: true, wallClock: true });
    const { port } = await startApiServer({ common, db: database.db, redis: undefined, live, busCarriesIndexer: true, chain: source.simulator.chainAccess() });

    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: pg.url, updates, source });
    shutdown.add('indexer', () => indexer.stop());
    // Stops before the indexer (hooks run last added first): no poll outlives the pool.
    shutdown.add('oracle', runOracleIngest(indexer, createOracleIngest({ db: database.db, source, logger: common.logger })));
    const running = indexer.run();

    process.stdout.write(banner(port, dataDir, sim, config.apiVariant));
    process.send?.({ type: 'listening', port });
    await running;
  } catch (err) {
    if (shutdown.isShuttingDown) return;
    const inUse = (err as { code?: string }).code === 'EADDRINUSE';
    if (!inUse) logger.error({ err }, 'single-process mode failed');
    process.stderr.write(inUse ? `port ${config.apiPort} is in use: stop what holds it or set API_PORT\n` : `${err instanceof Error ? err.message : String(err)}\n`);
    await shutdown.run('failure');
    process.exit(1);
  }
}
