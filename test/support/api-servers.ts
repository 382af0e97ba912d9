import type { Common } from '../../core/common';
import { createDatabase, type Database, type Db } from '../../core/db';
import type { RedisOptions } from 'ioredis';
import { createRedis, redisReady, type Redis } from '../../core/redis/client';
import { createApp } from '../../server/app';
import type { SignatureVerifier } from '../../core/ed25519';
import { startApiServer } from '../../server/run';
import { createApiStores, createLiveStores } from '../../server/stores';
import { serve } from './api';
import { testCommon } from './common';
import { createTestDatabase, type TestDatabase } from './pg';
import { connectRedis, TEST_REDIS_URL, testTenant } from './redis';

type AppOptions = Parameters<typeof createApp>[0];

/** An API server as its process runs it, started by `startProcess`. */
export interface ApiProcess {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  common: Common;
  /** Its own Redis connection. */
  redis: Redis;
  /** Its shutdown (refuse upgrades, drain, close /ws with 1001), then its Redis connection; once. */
  close(): Promise<void>;
}

/**
 * The API servers of one suite, on loopback; `closeAll` closes every one started and not yet
 * closed (and may be called again, after each test).
 */
export function createApiServers() {
  const open = new Set<() => Promise<void>>();
  const track = (close: () => Promise<void>) => {
    let closing: Promise<void> | undefined;
    const once = () => (closing ??= (open.delete(once), close()));
    open.add(once);
    return once;
  };
  return {
    /** Serves the app for `common` on `db` over its own real Redis connection, as `server/run.ts` wires it; `extra` adds or replaces createApp options. */
    async start(common: Common, db: Db, extra: Partial<AppOptions> = {}): Promise<string> {
      const redis = connectRedis();
      // Tracked before the app is built: an app that refuses its settings (a test of that)
      // must not leave its Redis connection open, or the Jest worker cannot exit.
      let s: Awaited<ReturnType<typeof serve>> | undefined;
      const close = track(async () => (await s?.close(), redis.disconnect()));
      try {
        s = await serve(createApp({ common, db, ...createApiStores(common, redis), ...extra }));
      } catch (err) {
        await close();
        throw err;
      }
      return s.url;
    },
    /** Serves the app for `common` on `db` with no Redis at all (the stores in memory, as `npm start` runs them). */
    async startInMemory(common: Common, db: Db, extra: Partial<AppOptions> = {}): Promise<string> {
      const s = await serve(createApp({ common, db, ...createApiStores(common, undefined), ...extra }));
      track(() => s.close());
      return s.url;
    },
    /**
     * The API server as the API process runs it (`startApiServer`: real sockets, `/ws`, its
     * shutdown hooks), on a Redis connection of its own (the shared Redis unless `redisUrl`),
     * with `env`'s settings, a tenant of its own unless `env` names one, on a port the system
     * picks. `logTo` gets its log lines (see testCommon).
     */
    async startProcess(
      env: Record<string, string>,
      db: Db,
      opts: {
        redisUrl?: string;
        redisOptions?: RedisOptions;
        busCarriesIndexer?: boolean;
        docs?: boolean;
        verifySignature?: SignatureVerifier;
        logTo?: (line: string) => void;
      } = {},
    ): Promise<ApiProcess> {
      const redis = createRedis(opts.redisUrl ?? TEST_REDIS_URL, { enableAutoPipelining: true, ...opts.redisOptions });
      // Its reconnections are what some suites test; the errors meanwhile are expected.
      redis.on('error', () => undefined);
      await redisReady(redis, 5_000).catch((err: unknown) => {
        redis.disconnect();
        throw err;
      });
      const common = testCommon({ TENANT_ID: testTenant(), API_PORT: '0', API_HOST: '127.0.0.1', ...env }, { logTo: opts.logTo });
      const live = createLiveStores(common, redis);
      // Closed after the server's own hooks (last added, first run).
      common.shutdown.add('live', () => live.close());
      // Tracked first, so a server that refuses to start still closes its stores.
      const close = track(async () => (await common.shutdown.run('test over'), redis.disconnect()));
      let port: number;
      try {
        ({ port } = await startApiServer({
          common,
          db,
          redis,
          live,
          busCarriesIndexer: opts.busCarriesIndexer ?? false,
          docs: opts.docs,
          verifySignature: opts.verifySignature,
        }));
      } catch (err) {
        await close();
        throw err;
      }
      return { port, url: `http://127.0.0.1:${port}`, common, redis, close };
    },
    async closeAll(): Promise<void> {
      await Promise.all([...open].map((close) => close()));
    },
  };
}

/**
 * A suite of API tests: its own database (a copy of the migrated template) made before its
 * tests, and after them every API server it started closed, then the database dropped. Call it
 * in the describe body, before any hook that must run after it (a Redis the servers use).
 */
export function apiSuite(opts: { poolMax?: number } = {}) {
  const servers = createApiServers();
  let tdb: TestDatabase | undefined;
  let database: Database | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: opts.poolMax ?? 4 });
  });
  afterAll(async () => {
    await servers.closeAll();
    await database?.close();
    await tdb?.drop();
  });
  return {
    ...servers,
    /** The suite's database (from beforeAll on). */
    get database(): Database {
      return database!;
    },
    get db(): Db {
      return database!.db;
    },
    /** Its connection string. */
    get url(): string {
      return tdb!.url;
    },
  };
}
