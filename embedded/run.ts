import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config';
import { createDatabase } from '../core/db';
import { migrate } from '../core/db/migrate';
import { createCommon } from '../core/process';
import { createMemoryBus } from '../core/redis/bus';
import { createMemoryUpdateLog } from '../core/redis/updates';
import { createIndexer } from '../indexer/indexer';
import { createOracleIngest, runOracleIngest } from '../indexer/oracle';
import { createSimulatorSource } from '../simulator/source';
import { startApiServer } from '../server/run';
import { createLiveStores } from '../server/stores';
import { openChainNode, type Genesis } from '../simulator/node';
import { listenScope, PortInUseError } from '../simulator/rpc-http';
import { startEmbeddedPostgres } from './postgres';

export interface EmbeddedOptions {
  fresh: boolean;
  dataDir: string;
  seed: number | undefined;
  epochSeconds: number | undefined;
  feeds: number | undefined;
}

function banner(port: number, rpc: string, rpcScope: string, dataDir: string, sim: Genesis, variant: 'v1' | 'legacy'): string {
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
          `  npm run tail -- --port ${port} orderbook:current market:current     (the current market's live updates; a channel names a market by its marketId field)`,
          `  npm run wallet -- trade --api ${base} --rpc ${rpc}     (a wallet's order through /tx, signed, sent, indexed)`,
        ];
  return [
    '',
    `market-indexer is running in single-process mode (simulated chain, ${sim.epochSeconds} s markets, data in ${dataDir})`,
    '',
    `  REST API    ${base}/api/v1${variant === 'legacy' ? '   (the spec appendix variant: API_VARIANT=legacy)' : ''}`,
    `  WebSocket   ws://localhost:${port}/ws`,
    `  API docs    ${base}/docs${variant === 'legacy' ? `   (contracts: ${base}/docs/openapi-legacy.yaml, ${base}/docs/asyncapi-legacy.yaml)` : ''}`,
    `  Metrics     ${base}/metrics`,
    `  Chain RPC   ${rpc}   (Solana JSON-RPC over HTTP and WebSocket: sendTransaction, getTransaction, logsSubscribe, …)`,
    `              ${rpcScope}`,
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
    // The chain keeps its genesis and the transactions wallets sent beside the database, so a
    // restart rebuilds the same chain (wallets' transactions included) and resumes.
    const chain = openChainNode({ programId: config.programId, dataDir, seed: opts.seed, epochSeconds: opts.epochSeconds, feeds: opts.feeds });
    const sim = chain.genesis;
    shutdown.add('chain', () => chain.close());

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
    const source = createSimulatorSource({ seed: sim.seed, programId: config.programId, realtime: true, wallClock: true, chain });
    const { port } = await startApiServer({ common, db: database.db, redis: undefined, live, busCarriesIndexer: true, chain: chain.simulator.chainAccess() });
    // A taken port rejects with PortInUseError: its message, printed below, names CHAIN_RPC_PORT.
    const rpc = await chain.rpc.listen(config.chainRpcPort, config.chainRpcHost);

    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: pg.url, updates, source });
    shutdown.add('indexer', () => indexer.stop());
    // Stops before the indexer (hooks run last added first): no poll outlives the pool.
    shutdown.add('oracle', runOracleIngest(indexer, createOracleIngest({ db: database.db, source, logger: common.logger })));
    const running = indexer.run();

    process.stdout.write(banner(port, rpc.url.replace('127.0.0.1', 'localhost'), listenScope(rpc.address), dataDir, sim, config.apiVariant));
    process.send?.({ type: 'listening', port, rpcPort: rpc.port });
    await running;
  } catch (err) {
    if (shutdown.isShuttingDown) return;
    // The chain's port: its own line (CHAIN_RPC_PORT); another EADDRINUSE is the API's.
    const chainInUse = err instanceof PortInUseError;
    const inUse = !chainInUse && (err as { code?: string }).code === 'EADDRINUSE';
    if (!inUse && !chainInUse) logger.error({ err }, 'single-process mode failed');
    process.stderr.write(inUse ? `port ${config.apiPort} is in use: stop what holds it or set API_PORT\n` : `${err instanceof Error ? err.message : String(err)}\n`);
    await shutdown.run('failure');
    process.exit(1);
  }
}
