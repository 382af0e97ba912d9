import type { Common } from '../../core/common';
import type { Db } from '../../core/db';
import type { Redis } from '../../core/redis/client';
import { createApp } from '../../server/app';
import { createApiStores } from '../../server/stores';
import { serve } from './api';
import { connectRedis } from './redis';

type AppOptions = Parameters<typeof createApp>[0];

/**
 * The API apps of one suite, each served on loopback over its own real Redis connection, as
 * `server/run.ts` wires them; `closeAll` closes every one started.
 */
export function createApiServers() {
  const servers: { close(): Promise<void> }[] = [];
  const redisClients: Redis[] = [];
  return {
    /** Serves an app for `common` on `db`; `extra` adds or replaces createApp options. */
    async start(common: Common, db: Db, extra: Partial<AppOptions> = {}): Promise<string> {
      const redis = connectRedis();
      redisClients.push(redis);
      const s = await serve(createApp({ common, db, ...createApiStores(common, redis), ...extra }));
      servers.push(s);
      return s.url;
    },
    async closeAll(): Promise<void> {
      await Promise.all(servers.map((s) => s.close()));
      redisClients.forEach((r) => r.disconnect());
    },
  };
}
