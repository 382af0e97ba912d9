import { createDatabase } from '../../core/db';
import { HIGH_LIMITS } from '../support/api';
import { createTestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, tenantEnv } from '../support/processes';
import { waitFor } from '../support/tables';
import { startFreezableProxy } from '../support/tcp-proxy';
import { differingTables, uninterruptedDigests } from './digests';
import { get, OUTAGE_MS, report, startLoad, supervise, until } from './support';

const SEED = 52;
const UNTIL = 2_400;

/** `url` with its host and port replaced by the proxy's. */
const through = (url: string, port: number) => {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
};

it('PostgreSQL cut under load: reads answer 503 SERVICE_UNAVAILABLE leaking nothing, /ready goes false and back to true without a restart, and the indexer resumes exactly once (tables equal an uninterrupted run)', async () => {
  // The same chain indexed without interruption: what the interrupted run must equal.
  const expected = await uninterruptedDigests(SEED, UNTIL);
  const tdb = await createTestDatabase();
  const direct = createDatabase({ url: tdb.url, poolMax: 1 });
  const pg = new URL(tdb.url);
  // Every connection of the service goes through this proxy; the machine's server is never touched.
  const proxy = await startFreezableProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  const env = tenantEnv(through(tdb.url, Number(new URL(proxy.url).port)), HIGH_LIMITS);
  const api = spawnApi(env);
  let indexer: ReturnType<typeof supervise> | undefined;
  try {
    const port = await api.port;
    const apiPid = api.child.pid;
    const cursor = async () => Number((await direct.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot);
    indexer = supervise(() => spawnIndexer(['--source', 'simulator', '--seed', String(SEED), '--until-slot', String(UNTIL), '--batch-size', '20'], env));
    const reads = startLoad(4, () => get(port, '/api/v1/markets?limit=5'));
    await waitFor('a first commit', async () => (await cursor()) > 0, 60_000);
    const cutAt = Date.now();
    proxy.down();
    const slotAtCut = await cursor();
    const notReady = await waitFor('/ready false', async () => {
      const r = await get(port, '/ready');
      return r.status === 503 ? r : undefined;
    });
    await until(OUTAGE_MS);
    const slotDuring = await cursor();
    const upAt = Date.now();
    proxy.up();
    const recovered = await waitFor('a read answered 200', async () => reads.after(upAt).find((o) => o.status === 200), 60_000);
    await waitFor('/ready true', async () => (await get(port, '/ready')).status === 200, 60_000);
    const outcomes = await reads.stop();
    expect(await indexer.done).toBe(0);
    const differing = await differingTables(expected, direct.db);

    const during = outcomes.filter((o) => o.at > cutAt && o.at < upAt);
    const unexpected = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
    report({
      scenario: 'PostgreSQL cut: 503, /ready false→true, indexer exactly once',
      requests: outcomes.length,
      errors: unexpected.length,
      dataLost: differing.length,
      recoveryMs: recovered.at - upAt,
      note: `${OUTAGE_MS / 1000}s cut at slot ${slotAtCut} (${slotDuring} during); ${during.filter((o) => o.status === 503).length} 503 while cut; indexer restarts: ${indexer.restarts()}`,
    });
    expect(unexpected.map((o) => `${o.status} ${o.body}`)).toEqual([]);
    for (const o of outcomes.filter((x) => x.status === 503)) expect(JSON.parse(o.body)).toEqual({ error: 'A required service is unavailable', code: 'SERVICE_UNAVAILABLE' });
    expect(JSON.parse(notReady.body)).toMatchObject({ ready: false, dbConnected: false });
    expect(slotDuring).toBe(slotAtCut);
    expect(api.child.pid).toBe(apiPid);
    expect(api.child.exitCode).toBeNull();
    expect(await cursor()).toBe(UNTIL);
    expect(differing).toEqual([]);
  } finally {
    indexer?.kill();
    api.child.kill('SIGKILL');
    await Promise.all([api.exited, indexer?.done]);
    await proxy.close();
    await direct.close();
    await tdb.drop();
  }
});
