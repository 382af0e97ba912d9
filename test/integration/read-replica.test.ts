import { createDatabase, type Database } from '../../core/db';
import { createReadRouter, type ReadPool } from '../../core/db/read-router';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { startFreezableProxy } from '../support/tcp-proxy';

// The read router (D-510, D-511) over two real databases standing in for the primary and its
// replica (the streaming replica itself runs in the failover journey): each behind a TCP proxy
// that can go down as a killed server does. Which one served a read is what `current_database()`
// says.
describe('reads from a replica, never from the past', () => {
  const dbs: TestDatabase[] = [];
  const pools: Database[] = [];
  const proxies: Awaited<ReturnType<typeof startFreezableProxy>>[] = [];
  let primary: Database;
  let replica: Database;
  let names: { primary: string; replica: string };
  let pPrimary: (typeof proxies)[number];
  let pReplica: (typeof proxies)[number];
  const through = async (tdb: TestDatabase) => {
    const u = new URL(tdb.url);
    const proxy = await startFreezableProxy({ host: u.hostname, port: Number(u.port || 5432) });
    proxies.push(proxy);
    u.port = new URL(proxy.url).port;
    const database = createDatabase({ url: u.toString(), poolMax: 3 });
    pools.push(database);
    return { proxy, database };
  };
  beforeAll(async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    dbs.push(a!, b!);
    names = { primary: a!.name, replica: b!.name };
    ({ proxy: pPrimary, database: primary } = await through(a!));
    ({ proxy: pReplica, database: replica } = await through(b!));
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
    await Promise.all(proxies.map((p) => p.close()));
    await Promise.all(dbs.map((d) => d.drop()));
  });

  const cursor = (d: Database, slot: number) => d.db.none('UPDATE indexer_cursor SET last_processed_slot = $1 WHERE id = 1', [slot]);
  const served: ReadPool[] = [];
  const router = (maxLagSlots: number) => createReadRouter({ primary: primary.db, replica: replica.db, maxLagSlots, probeMs: 60_000, onRead: (p) => served.push(p) });
  const whoAnswers = async (db: Database['db']) => {
    const { d } = await db.one<{ d: string }>('SELECT current_database() AS d');
    return d === names.primary ? 'primary' : d === names.replica ? 'replica' : d;
  };

  it('serves from the replica within the bound and from the primary once it is further behind', async () => {
    await cursor(primary, 1_000);
    await cursor(replica, 999);
    const r = router(1);
    try {
      await r.probe();
      expect(r.state()).toMatchObject({ highWater: 1_000, replicaSlot: 999, replicaServing: true });
      expect(await whoAnswers(r.db)).toBe('replica');
      // The primary moves on; a read from it raises what this process has seen.
      await cursor(primary, 1_005);
      await cursor(replica, 1_004);
      expect(await whoAnswers(r.db)).toBe('replica');
      // The probe has not seen 1,005 yet, but reads do: the next one comes from the primary...
      await r.probe();
      await cursor(primary, 1_010);
      await r.probe();
      expect(r.state().replicaServing).toBe(false);
      expect(await whoAnswers(r.db)).toBe('primary');
      // ...and each read on the replica checks the replica's slot in its own session, so one
      // that fell behind since the last probe is not served from.
      await cursor(replica, 1_009);
      await r.probe();
      expect(await whoAnswers(r.db)).toBe('replica');
      await cursor(primary, 1_020);
      expect(await whoAnswers(r.db)).toBe('replica');
      // Once the probe has seen 1,020, the replica at 1,009 serves nothing more.
      await r.probe();
      expect(await whoAnswers(r.db)).toBe('primary');
      expect(r.state().highWater).toBe(1_020);
    } finally {
      r.close();
    }
  });

  it('never serves a slot more than the bound behind one it served before', async () => {
    await cursor(primary, 2_000);
    await cursor(replica, 2_000);
    const r = router(2);
    try {
      await r.probe();
      let seen = 0;
      let fellBack = 0;
      for (let i = 0; i < 30; i++) {
        // The primary moves one slot at a time, the replica trails it by 0..5 slots.
        const p = 2_000 + i;
        await cursor(primary, p);
        await cursor(replica, p - (i % 6));
        await r.probe();
        const { slot } = await r.db.one<{ slot: string }>('SELECT last_processed_slot AS slot FROM indexer_cursor WHERE id = 1');
        expect(Number(slot)).toBeGreaterThanOrEqual(seen - 2);
        seen = Math.max(seen, Number(slot));
        if (i % 6 > 2 && (await whoAnswers(r.db)) === 'primary') fellBack++;
      }
      expect(fellBack).toBeGreaterThan(0);
    } finally {
      r.close();
    }
  });

  it('reads from the primary while the replica is down, from the replica while the primary is down', async () => {
    await cursor(primary, 3_000);
    await cursor(replica, 3_000);
    const r = router(1);
    try {
      await r.probe();
      pReplica.down();
      served.length = 0;
      expect(await whoAnswers(r.db)).toBe('primary');
      expect(r.state().replicaServing).toBe(false);
      pReplica.up();
      // The primary goes away (a killed server) before any probe saw the replica back: the
      // read that fails on the primary is served by the replica.
      pPrimary.down();
      expect(await whoAnswers(r.db)).toBe('replica');
      await r.probe();
      expect(r.state()).toMatchObject({ highWater: 3_000, replicaServing: true });
      expect(await whoAnswers(r.db)).toBe('replica');
      // What must write has nowhere to go: it fails as unreachable, not on the replica.
      await expect(primary.db.none('INSERT INTO admin_audit (wallet, action, status, outcome) VALUES ($1, $2, 200, $3)', ['w', 'a', 'o'])).rejects.toThrow();
      pPrimary.up();
    } finally {
      r.close();
    }
  });

  it('with both down, a read fails as the primary\'s does (the API answers 503)', async () => {
    const r = router(1);
    try {
      await r.probe();
      pPrimary.down();
      pReplica.down();
      await expect(whoAnswers(r.db)).rejects.toThrow();
    } finally {
      pPrimary.up();
      pReplica.up();
      r.close();
    }
  });
});
