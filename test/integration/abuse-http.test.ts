import { createShutdown, type Common } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createDatabase, type Database } from '../../core/db';
import { createRedis, redisReady, type Redis } from '../../core/redis/client';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { keyPairOf } from '../../simulator/ids';
import { verifyEd25519, type SignatureVerifier } from '../../server/auth/verify';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { walletHeaders } from '../support/api';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { rawGet } from '../support/raw-http';
import { TEST_REDIS_URL, testTenant } from '../support/redis';

/** Issue 23 findings 2 and 3 under a concurrent flood, at the default log level (D-75, D-77, D-105). */
describe('HTTP floods from one address (real sockets, real Redis)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const redis: Redis[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
  });
  afterAll(async () => {
    redis.forEach((r) => r.disconnect());
    await database.close();
    await tdb.drop();
  });

  async function api(env: Record<string, string>, verify: SignatureVerifier) {
    const r = createRedis(TEST_REDIS_URL, { enableAutoPipelining: true });
    redis.push(r);
    await redisReady(r);
    const config = loadConfig({ API_PORT: '0', API_HOST: '127.0.0.1', TENANT_ID: testTenant(), ...env });
    const bytes = { written: 0 };
    const logger = createLogger({ level: config.logLevel, service: 'test', tenant: config.tenantId, destination: { write: (s: string) => void (bytes.written += s.length) } });
    const common: Common = { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
    const live = createLiveStores(common, r);
    const { port } = await startApiServer({ common, db: database.db, redis: r, live, busCarriesIndexer: false, verifySignature: verify });
    return { port, bytes, close: async () => (await common.shutdown.run('test'), await live.close()) };
  }

  it('verifies no more than the budget of a concurrent burst of bad signatures, and logs nothing for it or for malformed escapes', async () => {
    let calls = 0;
    const s = await api({ RATE_LIMIT_MAX_REQUESTS: '5' }, (m, sig, k) => (calls++, verifyEd25519(m, sig, k)));
    const startup = s.bytes.written;
    try {
      const forged = walletHeaders(keyPairOf('http-flood'), 'GET /stats', { forge: true });
      const [bad, malformed] = await Promise.all([
        Promise.all(Array.from({ length: 300 }, () => rawGet(s.port, '/api/v1/stats', { localAddress: '127.0.0.2', headers: forged }))),
        Promise.all(Array.from({ length: 300 }, (_, i) => rawGet(s.port, `/api/v1/markets/%ff${i}`, { localAddress: '127.0.0.3' }))),
      ]);
      const count = (rs: { status: number }[], st: number) => rs.filter((r) => r.status === st).length;
      expect([count(bad, 401), count(bad, 429)]).toEqual([5, 295]);
      expect(calls).toBe(5);
      expect([count(malformed, 400), count(malformed, 429)]).toEqual([5, 295]);
      // Client errors are not the server's: nothing at the default level, whatever the volume.
      expect(s.bytes.written - startup).toBe(0);
    } finally {
      await s.close();
    }
  });
});
