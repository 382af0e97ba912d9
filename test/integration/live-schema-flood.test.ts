import { Client } from 'pg';
import { createDatabase, type Database, type Db } from '../../core/db';
import { followLiveSchema, LIVE_PROJECTION_CHANNEL, switchLiveSchema, type LiveSchemaFollower } from '../../core/db/live-projection';
import { LIVE_SCHEMA } from '../../core/db/projection-schema';
import { createTestDatabase, createTestRole, type TestDatabase, type TestRole } from '../support/pg';
import { waitFor } from '../support/tables';

/**
 * The pointer's followers under notifications they did not ask for (D-450): NOTIFY needs no
 * privilege, so any role that can connect to the tenant's database can send a flood on the
 * pointer's channel. Reads of the pointer are serialised: one in flight, at most one queued.
 */
describe('the live schema follower under a flood of notifications', () => {
  let tdb: TestDatabase;
  let admin: Database;
  let beta: TestRole;
  const built = 'p901';

  /** `db` with its pointer reads counted (the follower's only `one` calls) and, if `hold` is set, the first one's answer held back until released. */
  const counted = (db: Db, hold?: Promise<void>) => {
    const stats = { reads: 0, answered: 0, inFlight: 0, maxInFlight: 0 };
    let first = true;
    const one = async (...args: unknown[]) => {
      stats.reads++;
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        const held = first && hold;
        first = false;
        const answer = await (db.one as (...a: unknown[]) => Promise<unknown>)(...args);
        stats.answered++;
        if (held) await held;
        return answer;
      } finally {
        stats.inFlight--;
      }
    };
    return { db: new Proxy(db, { get: (t, p) => (p === 'one' ? one : Reflect.get(t, p)) }), stats };
  };

  const follow = (db: Db) => {
    const switches: [string, string][] = [];
    const follower = followLiveSchema({ db, databaseUrl: tdb.url, onSwitch: (from, to) => switches.push([from, to]), retryMs: 50 });
    return { follower, switches };
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    admin = createDatabase({ url: tdb.url, poolMax: 2 });
    await admin.db.none(`CREATE SCHEMA ${built}`);
    // Another tenant's role: PostgreSQL grants CONNECT to PUBLIC unless a database says otherwise.
    beta = await createTestRole('beta');
  });
  afterAll(async () => {
    await admin.close();
    await tdb.drop();
    await beta.drop();
  });

  /** Another role's session sends `n` notifications on the pointer's channel in one statement. */
  const flood = async (n: number) => {
    const c = new Client({ connectionString: beta.url(tdb.name) });
    await c.connect();
    try {
      await c.query("SELECT count(pg_notify($1, 'p' || g)) FROM generate_series(1, $2::int) g", [LIVE_PROJECTION_CHANNEL, n]);
    } finally {
      await c.end();
    }
  };

  it('100,000 notifications from another role leave the pool available: one pointer read at a time, and the schema right', async () => {
    const api = createDatabase({ url: tdb.url, poolMax: 4, applicationName: 'flood-api' });
    const { db, stats } = counted(api.db);
    const { follower, switches } = follow(db);
    try {
      await waitFor('the pointer read', async () => follower.ready());
      await flood(100_000);
      // The flood is being heard: the API's own statement goes through its pool meanwhile.
      await waitFor('the flood heard', async () => stats.reads > 1, 10_000);
      expect(api.db.$pool.waitingCount).toBe(0);
      await expect(api.db.one('SELECT 1 AS ok')).resolves.toEqual({ ok: 1 });
      // A switch after the flood (its notification comes after all of the flood's): adopted.
      await switchLiveSchema(admin.db, built);
      await waitFor('the switch heard', async () => follower.current() === built, 20_000);
      await waitFor('the reads settled', async () => stats.inFlight === 0);
      expect(stats.maxInFlight).toBe(1);
      expect(stats.reads).toBeLessThan(100_000);
      expect(switches).toEqual([[LIVE_SCHEMA, built]]);
      // The payloads name schemas (p1..p100000, which do not exist): none is ever adopted.
      await flood(1_000);
      await switchLiveSchema(admin.db, LIVE_SCHEMA);
      await waitFor('the switch back heard', async () => follower.current() === LIVE_SCHEMA, 20_000);
      expect(switches).toEqual([[LIVE_SCHEMA, built], [built, LIVE_SCHEMA]]);
    } finally {
      await follower.close();
      await api.close();
    }
  });

  it('a first read answered late never steps back over a later switch', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const api = createDatabase({ url: tdb.url, poolMax: 4, applicationName: 'late-api' });
    const { db, stats } = counted(api.db, hold);
    const { follower, switches } = follow(db);
    try {
      // The first read (after LISTEN) has read `public` and is held; the switch's notification is
      // heard meanwhile (a Client's handlers run within its emit).
      await waitFor('the first read answered', async () => stats.answered === 1 && stats.inFlight === 1);
      const emit = Client.prototype.emit;
      const heard = new Promise<void>((resolve) => {
        jest.spyOn(Client.prototype, 'emit').mockImplementation(function (this: Client, event: string | symbol, ...args: unknown[]) {
          const out = emit.call(this, event, ...args);
          if (event === 'notification') resolve();
          return out;
        });
      });
      await switchLiveSchema(admin.db, built);
      await heard;
      // Had the notification started a read of its own, it would answer (the new schema) before
      // the held one (the old): the order the step back needs.
      if (stats.reads > 1) await waitFor('the second read answered', async () => stats.answered === 2);
      release();
      // Both reads done (the first, and the one the notification asked for), whichever order.
      await waitFor('both reads answered', async () => stats.reads === 2 && stats.inFlight === 0);
      expect(follower.current()).toBe(built);
      expect(switches).toEqual([[LIVE_SCHEMA, built]]);
      expect(stats.maxInFlight).toBe(1);
    } finally {
      jest.restoreAllMocks();
      release();
      await follower.close();
      await api.close();
      await switchLiveSchema(admin.db, LIVE_SCHEMA);
    }
  });
});
