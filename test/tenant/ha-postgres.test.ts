import { Client } from 'pg';
import { startHaPostgres, type HaPostgres } from '../../local/tenant/ha-postgres';
import { eventually } from './support';

/**
 * The harness's HA PostgreSQL (local/tenant/ha-postgres.ts): Patroni + etcd + HAProxy over three
 * PostgreSQL 15 instances, standing for a CloudNativePG Cluster and its `-rw`/`-ro` Services.
 */
describe('the HA PostgreSQL of the tenant harness', () => {
  let ha: HaPostgres;
  beforeAll(async () => {
    ha = await startHaPostgres({ instances: 3, synchronous: true });
    await ha.healthy(2);
  }, 120_000);
  afterAll(async () => {
    await ha?.stop();
  });

  const session = async <T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> => {
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };

  it('answers on the primary through rw and on a synchronous standby through ro', async () => {
    const members = await ha.members();
    expect(members.map((m) => m.role).sort()).toEqual(['leader', 'replica', 'sync_standby']);
    const rw = await session(ha.rwUrl(), async (c) => (await c.query('SELECT pg_is_in_recovery() AS r, current_setting($1) AS sync', ['synchronous_standby_names'])).rows[0]);
    // Patroni names the synchronous standby in synchronous_standby_names (synchronous_mode_strict).
    expect(rw).toEqual({ r: false, sync: expect.stringMatching(/pg\d/) });
    await session(ha.rwUrl(), (c) => c.query('CREATE TABLE probe (id int PRIMARY KEY); INSERT INTO probe VALUES (1)'));
    // A commit returned once the synchronous standby flushed it; the ro front shows it once replayed.
    await eventually('the row on the ro front', () => session(ha.roUrl(), async (c) => (await c.query('SELECT count(*)::int AS n FROM probe').catch(() => ({ rows: [{ n: 0 }] }))).rows[0]?.n === 1), 10_000);
    const ro = await session(ha.roUrl(), async (c) => (await c.query('SELECT pg_is_in_recovery() AS r')).rows[0]);
    expect(ro).toEqual({ r: true });
    // What must write cannot on ro: a standby refuses it (25006, read-only transaction).
    await expect(session(ha.roUrl(), (c) => c.query('INSERT INTO probe VALUES (2)'))).rejects.toMatchObject({ code: '25006' });
  });
});
