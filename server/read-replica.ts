import type { Common } from '../core/common';
import { createDatabase, type Db } from '../core/db';
import { createReadRouter, READ_POOLS } from '../core/db/read-router';

/**
 * The API's reads from a replica (D-510): with `DATABASE_READ_URL` set, a second pool on it and
 * a read router that sends each read there while the replica is within
 * `DATABASE_READ_MAX_LAG_SLOTS` of the primary (D-511). Unset: nothing, every read is the primary's.
 */
export function startReadRouter(common: Common, primary: Db, read: { url: string | undefined; maxLagSlots: number }): { db: Db; replica: Db; close(): Promise<void> } | undefined {
  if (!read.url) return undefined;
  const { config, metrics, logger } = common;
  const replica = createDatabase({
    url: read.url,
    poolMax: config.databasePoolMax,
    applicationName: 'market-indexer-api-read',
    statementTimeoutMs: config.requestTimeoutMs,
  });
  for (const pool of Object.values(READ_POOLS)) metrics.dbReads.inc({ pool }, 0);
  metrics.dbReplicaLagSlots.set(Number.NaN);
  metrics.dbReplicaServing.set(0);
  const router = createReadRouter({
    primary,
    replica: replica.db,
    maxLagSlots: read.maxLagSlots,
    onRead: (pool) => metrics.dbReads.inc({ pool }),
    onProbe: (lag, serving) => {
      metrics.dbReplicaLagSlots.set(lag);
      metrics.dbReplicaServing.set(serving ? 1 : 0);
    },
    onChange: (serving, why) => {
      metrics.dbReplicaServing.set(serving ? 1 : 0);
      if (serving) logger.info({ setting: 'DATABASE_READ_URL' }, `the read replica serves reads again (${why})`);
      else logger.warn({ setting: 'DATABASE_READ_URL' }, `the read replica does not serve reads (${why}): they go to DATABASE_URL`);
    },
  });
  void router.probe();
  return {
    db: router.db,
    replica: replica.db,
    async close() {
      router.close();
      await replica.close();
    },
  };
}
