import { SingleBar } from 'cli-progress';
import type { Config } from '../core/config';
import { applyKeepAlive } from '../core/http/keep-alive';
import { STORES } from '../core/telemetry/metrics';
import { createDatabase } from '../core/db';
import { migrate } from '../core/db/migrate';
import { indexerPoolApplicationName } from '../core/indexer-admin';
import { createCommon, exitWith, requireAllowed, requireSettings } from '../core/process';
import { createMemoryBus } from '../core/redis/bus';
import { createMemoryUpdateLog, createRedisUpdateLog, type UpdateLog } from '../core/redis/updates';
import { createRedis } from '../core/redis/client';
import { databaseProblem, redisProblem, unreachableLine } from '../core/store-reach';
import { createKeys } from '../core/redis/keys';
import type { Tracing } from '../core/telemetry/tracing';
import { createIndexerHttp } from './http';
import { readLiveSchema } from '../core/db/live-projection';
import { inSchema, LIVE_SCHEMA } from '../core/db/projection-schema';
import { PROJECTION_VERSION } from '../core/db/projection-version';
import { startProjectionBuild, startRetentionSweep, type ProjectionBuild } from './build';
import { createIndexer, type Indexer } from './indexer';
import { newerProjectionProblem } from './projection-version';
import { writerInstance } from './writer-lease';
import { createOracleIngest, runOracleIngest } from './oracle';
import { createRpcSource } from './sources/rpc';
import type { Source } from './sources/types';
import type { TransactionSink } from './sources/webhook';
import { createWebhookSource } from './sources/webhook-source';

/**
 * A source that runs inside the process, built by the entry point that offers it: the
 * simulated chain (`--source simulator`) is given by `main.ts`, so nothing else under indexer/
 * depends on it (D-220).
 */
export type InProcessSource = (ctx: { programId: string; maxBatchTransactions: number }) => Source;

export interface IndexerCliOptions {
  source: 'rpc' | 'simulator' | 'webhook';
  /** Required with `source: 'simulator'`. */
  simulated?: InProcessSource;
  batchSize: number;
  progress: boolean;
}

export async function runIndexer(config: Config, tracing: Tracing, opts: IndexerCliOptions): Promise<void> {
  const common = createCommon(config, 'indexer', tracing);
  const { logger, shutdown } = common;
  const databaseUrl = config.databaseUrl;
  if (!databaseUrl) exitWith('the indexer process needs DATABASE_URL (postgres://user@host:5432/dbname)');
  if (!config.redisUrl) requireAllowed(config, 'the indexer in production needs REDIS_URL (its updates would reach no API replica)');
  requireSettings(config, process.env, 'indexer', opts.source);
  // A database that does not answer at start is named in one line, not a stack trace; the
  // process exits and its supervisor starts it again (D-110), printing the line each time.
  const dbProblem = await databaseProblem(databaseUrl);
  if (dbProblem) {
    await shutdown.run('failure');
    exitWith(`the indexer cannot start: ${unreachableLine('DATABASE_URL', databaseUrl, dbProblem)}`);
  }
  try {
    const { applied } = await migrate({ databaseUrl });
    if (applied.length) logger.info({ applied }, 'migrations applied');
    // Named for this process: a standby taking over from this one, hung, ends these sessions (D-300).
    const instance = writerInstance();
    const database = createDatabase({ url: databaseUrl, poolMax: config.databasePoolMax, applicationName: indexerPoolApplicationName(instance) });
    shutdown.add('database', () => database.close());

    let updates: UpdateLog;
    if (config.redisUrl) {
      const redis = createRedis(config.redisUrl, { commandTimeout: config.redisCommandTimeoutMs });
      redis.on('error', (err) => {
        common.metrics.storeErrors.inc({ store: STORES.redis });
        logger.warn({ err: err.message }, 'redis error');
      });
      updates = createRedisUpdateLog({ redis, keys: createKeys(config.tenantId) });
      shutdown.add('redis', async () => redis.disconnect());
      // Publishing fails fast while Redis is unreachable; do not start with a guaranteed gap.
      const redisDown = await redisProblem(redis, 5_000);
      if (redisDown) logger.warn({ setting: 'REDIS_URL' }, `${unreachableLine('REDIS_URL', config.redisUrl, redisDown)}; live updates are lost until it answers`);
    } else {
      logger.warn('REDIS_URL is not set: live updates stay inside this process');
      updates = createMemoryUpdateLog({ bus: createMemoryBus() });
    }

    let source: Source;
    let sink: TransactionSink | undefined;
    if (opts.source === 'simulator') {
      if (!opts.simulated) throw new Error('--source simulator needs the simulated chain from the entry point');
      source = opts.simulated({ programId: config.programId, maxBatchTransactions: opts.batchSize });
    } else if (opts.source === 'webhook') {
      // A build starts from the chain's first transaction: a webhook only delivers what comes.
      if (config.indexerMode === 'build') exitWith('INDEXER_MODE=build needs a source that backfills (rpc or simulator), not webhook');
      // Deliveries bring bodies; the order, the gaps and the chain tip come from the RPC (D-472).
      const webhook = createWebhookSource({ common, rpcUrl: config.rpcUrl, programId: config.programId, requestsPerSecond: config.rpcLimits.requestsPerSecond, maxBatchTransactions: opts.batchSize });
      source = webhook;
      sink = webhook;
    } else {
      const rpc = createRpcSource({
        common, rpcUrl: config.rpcUrl, wsUrl: config.rpcWsUrl, programId: config.programId, maxBatchTransactions: opts.batchSize,
        requestsPerSecond: config.rpcLimits.requestsPerSecond, fetchConcurrency: config.rpcLimits.concurrency, rpcBatchSize: config.rpcLimits.batchSize,
      });
      source = rpc;
      sink = rpc;
    }
    shutdown.add('source', () => source.close());

    // Build mode (D-411): this release's projection schema beside the live one, switched to once
    // it has caught up; its own pool then serves the indexer's HTTP (its status is the build's).
    let indexer: Indexer;
    let build: ProjectionBuild | undefined;
    let indexerDb = database.db;
    if (config.indexerMode === 'build') {
      const b = await startProjectionBuild({ common, db: database.db, databaseUrl, version: PROJECTION_VERSION, updates, source, instance });
      shutdown.add('build', () => b.close());
      ({ indexer, build } = b);
      indexerDb = b.db;
    } else {
      // The live writer writes the schema the pointer names at its start (D-411): after a switch,
      // a release in live mode goes on with the built tables, as the build's standby.
      const liveSchema = await readLiveSchema(database.db);
      const newer = await newerProjectionProblem(database.db, { schema: liveSchema, release: PROJECTION_VERSION });
      if (newer) exitWith(`the indexer cannot start: ${newer}`);
      if (liveSchema === LIVE_SCHEMA) indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl, updates, source, instance });
      else {
        const url = inSchema(databaseUrl, liveSchema);
        const pool = createDatabase({ url, poolMax: config.databasePoolMax, applicationName: indexerPoolApplicationName(instance) });
        shutdown.add('live-schema-database', () => pool.close());
        logger.info({ schema: liveSchema }, 'the API reads a built projection schema: writing it');
        indexer = createIndexer({ common, db: pool.db, pgp: pool.pgp, databaseUrl: url, updates, source, instance, schema: liveSchema });
        indexerDb = pool.db;
      }
      // The schema switched away from is dropped by the live writer once kept long enough (D-412).
      const live = indexer;
      const stopSweep = startRetentionSweep(database.db, logger, () => live.status().role === 'writer');
      shutdown.add('retention', async () => stopSweep());
    }
    const server = applyKeepAlive(createIndexerHttp({ common, db: indexerDb, indexer, source, sink, build }), config.httpKeepAliveTimeoutMs);
    await new Promise<void>((resolve) => server.listen(config.indexerPort, config.apiHost, resolve));
    const port = (server.address() as { port: number }).port;
    logger.info({ port, source: source.name }, 'indexer listening');
    process.send?.({ type: 'listening', port });
    shutdown.add('http', () => new Promise<void>((resolve) => server.close(() => resolve())));
    shutdown.add('indexer', () => indexer.stop());
    // Stops before the indexer (hooks run last added first): no poll outlives the pool.
    shutdown.add('oracle', runOracleIngest(indexer, createOracleIngest({ db: database.db, source, logger: common.logger }), { when: build?.live }));

    const stopProgress = opts.progress ? startProgress(source) : () => {};
    shutdown.add('progress', stopProgress);
    await indexer.run();
    stopProgress();
    const s = indexer.status();
    logger.info({ lastProcessedSlot: s.lastProcessedSlot }, 'source finished');
    await shutdown.run('source finished');
    process.exit(0);
  } catch (err) {
    logger.error({ err }, 'indexer failed');
    await shutdown.run('failure');
    process.exit(1);
  }
}

/**
 * A progress bar with rate and ETA while a bounded backfill runs (on stderr, only when it is a
 * terminal). It appears once the source knows its total: the RPC source after its first poll.
 */
function startProgress(source: Source): () => void {
  if (!source.progress || !process.stderr.isTTY) return () => {};
  let bar: SingleBar | undefined;
  let last = { t: Date.now(), done: 0 };
  const timer = setInterval(() => {
    const p = source.progress!();
    if (!p) return;
    if (!bar) {
      bar = new SingleBar({
        format: `backfill [{bar}] {percentage}% | {value}/{total} ${p.unit} | {speed} ${p.unit}/s | ETA {eta_formatted}`,
        stream: process.stderr,
        etaBuffer: 50,
      });
      bar.start(p.total, p.done, { speed: '0' });
      last = { t: Date.now(), done: p.done };
      return;
    }
    const now = Date.now();
    const speed = ((p.done - last.done) * 1000) / Math.max(1, now - last.t);
    last = { t: now, done: p.done };
    bar.setTotal(p.total);
    bar.update(p.done, { speed: speed.toFixed(0) });
  }, 250);
  return () => {
    clearInterval(timer);
    bar?.stop();
  };
}
