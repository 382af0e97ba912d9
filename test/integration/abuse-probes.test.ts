import { createDatabase, type Db } from '../../core/db';
import { apiSuite } from '../support/api-servers';
import { testCommon } from '../support/common';
import { rawGet } from '../support/raw-http';

/** The database, with every query method call counted. */
function counted(db: Db): { db: Db; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (['one', 'oneOrNone', 'any', 'many', 'none', 'query', 'result', 'manyOrNone'].includes(String(prop))) calls++;
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { db: proxy, calls: () => calls };
}

/** Issue 23 finding 6: probes flooded from several addresses (D-101). */
describe('/health and /ready under a flood (real PostgreSQL)', () => {
  const suite = apiSuite();
  /** The app on the database `db`, no Redis: the port it listens on. */
  const serveOn = async (env: Record<string, string>, db: Db) => Number(new URL(await suite.startInMemory(testCommon(env), db)).port);

  it('costs the database one dependency check per interval, however many probes arrive', async () => {
    const c = counted(suite.db);
    const port = await serveOn({ HEALTH_CHECK_CACHE_MS: '60000' }, c.db);
    const flood = await Promise.all(
      Array.from({ length: 600 }, (_, i) => rawGet(port, i % 2 ? '/health' : '/ready', { localAddress: `127.0.0.${2 + (i % 3)}` })),
    );
    expect(flood.every((r) => r.status === 200)).toBe(true);
    expect(flood.find((r) => r.json.checks)?.json).toMatchObject({ status: 'degraded', dbConnected: true, indexerRunning: false });
    // One check: the ping and the indexer state row.
    expect(c.calls()).toBe(2);
  });

  it('stays live without its database (degraded, 200) and is not ready (503)', async () => {
    const down = createDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolMax: 1 });
    const port = await serveOn({ HEALTH_CHECK_CACHE_MS: '0' }, down.db);
    try {
      const h = await rawGet(port, '/health');
      expect([h.status, h.json.status, h.json.dbConnected]).toEqual([200, 'degraded', false]);
      expect(h.json.checks.map((x: { name: string; status: string }) => `${x.name}:${x.status}`)).toEqual(['database:warn', 'rpc:warn', 'indexer:warn', 'slot_lag:warn']);
      const r = await rawGet(port, '/ready');
      expect([r.status, r.json]).toEqual([503, { ready: false, dbConnected: false, indexerRunning: false }]);
    } finally {
      void down.close();
    }
  });
});
