import { Client } from 'pg';
import { writerLockApplicationName, indexerPoolApplicationName } from '../../core/indexer-admin';
import { acquireWriterLease, type LeaseTiming, type WriterLease } from '../../indexer/writer-lease';
import { createTestDatabase, createTestRole, type TestDatabase, type TestRole } from '../support/pg';

/**
 * The writer lease among sessions of other roles (D-451): on a server shared by tenants, any role
 * that can connect to a tenant's database can name a session like the writer's. The lease counts
 * and ends only its own role's sessions.
 */
describe('the writer lease beside a foreign role session named like the holder', () => {
  let tdb: TestDatabase;
  let alpha: TestRole;
  let beta: TestRole;
  const timing: LeaseTiming = { durationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 200 };
  const open: Client[] = [];

  /** A session of `role` on the tenant's database, named `name`. */
  const session = async (role: TestRole, name: string) => {
    const c = new Client({ connectionString: role.url(tdb.name), application_name: name });
    c.on('error', () => {});
    await c.connect();
    open.push(c);
    return c;
  };
  const acquire = (instance: string) =>
    acquireWriterLease({ databaseUrl: alpha.url(tdb.name), tenant: 'lease-roles', instance, timing, signal: new AbortController().signal });
  const leaseRow = async () => {
    const c = await session(alpha, 'probe');
    const { rows } = await c.query<{ holder: string; acquired_at: Date; expires_at: Date }>('SELECT holder, acquired_at, expires_at FROM writer_lease WHERE id = 1');
    await c.end();
    return rows[0]!;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    // The tenant's role (not a superuser: it cannot end another role's sessions), and another tenant's.
    alpha = await createTestRole('alpha');
    beta = await createTestRole('beta');
    const owner = new Client({ connectionString: tdb.url });
    await owner.connect();
    await owner.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO "${alpha.name}"; GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "${alpha.name}"`);
    await owner.end();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) await c.end().catch(() => {});
  });
  afterAll(async () => {
    await tdb.drop();
    await alpha.drop();
    await beta.drop();
  });

  it('a released lease is taken over although a foreign session bears the holder names, which is left alone', async () => {
    const first = (await acquire('pod-a'))!;
    const lookalikes = [await session(beta, writerLockApplicationName('pod-a')), await session(beta, indexerPoolApplicationName('pod-a'))];
    await first.release();
    const second = (await acquire('pod-b'))!;
    try {
      expect(second.epoch).toBe(first.epoch + 1);
      expect((await leaseRow()).holder).toBe('pod-b');
      for (const c of lookalikes) expect((await c.query<{ ok: number }>('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    } finally {
      await second.release();
    }
  });

  it("a holder whose sessions are gone is replaced at once, a foreign lookalike not counted as the holder's", async () => {
    const first = (await acquire('pod-c'))!;
    await session(beta, writerLockApplicationName('pod-c'));
    const before = await leaseRow();
    // The holder's own session ends (a killed pod): its lease has 60 s left.
    const admin = new Client({ connectionString: tdb.url });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND usename = $1 AND application_name = $2', [
      alpha.name,
      writerLockApplicationName('pod-c'),
    ]);
    await admin.end();
    await first.lost;
    let second: WriterLease | undefined;
    try {
      second = (await acquire('pod-d'))!;
      const after = await leaseRow();
      expect(after.holder).toBe('pod-d');
      // Taken while the dead holder's lease was still running: its session was known gone.
      expect(after.acquired_at.getTime()).toBeLessThan(before.expires_at.getTime());
    } finally {
      await second?.release();
    }
  });
});
