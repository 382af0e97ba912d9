import { createDatabase, type Database } from '../../core/db';
import { followLiveSchema, readLiveSchema, switchLiveSchema, type LiveSchemaFollower } from '../../core/db/live-projection';
import { createProjectionSchema, inSchema, LIVE_SCHEMA, projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { waitFor } from '../support/tables';

/** The pointer to the live schema (D-333): every replica's sessions follow a switch at their next statement. */
describe('the live schema pointer and its followers', () => {
  let tdb: TestDatabase;
  let admin: Database;
  const replicas: { database: Database; follower: LiveSchemaFollower; switches: [string, string][] }[] = [];
  const schema = projectionSchema(PROJECTION_VERSION);
  const index = (db: Database, url: string, untilSlot: number, extra: { schema?: string } = {}) =>
    createIndexer({
      common: testCommon({ PROGRAM_ID, TENANT_ID: 'live-schema' }), db: db.db, pgp: db.pgp, databaseUrl: url, updates: undefined,
      source: createSimulatorSource({ seed: 5, programId: PROGRAM_ID, untilSlot, epochSeconds: 30, wallets: 6 }), instance: `i-${untilSlot}`, ...extra,
    }).run();
  const slotOf = async (db: Database) => Number((await db.db.one<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor')).s);
  /** What each of a replica's pooled sessions reads: as many concurrent statements as the pool holds. */
  const readAll = (r: (typeof replicas)[number]) => Promise.all(Array.from({ length: 4 }, () => slotOf(r.database)));

  beforeAll(async () => {
    tdb = await createTestDatabase();
    admin = createDatabase({ url: tdb.url, poolMax: 2 });
    // The live tables indexed to slot 60; the build in its own schema to slot 120.
    await index(admin, tdb.url, 60);
    await createProjectionSchema(admin.db, PROJECTION_VERSION);
    const builder = createDatabase({ url: inSchema(tdb.url, schema), poolMax: 2 });
    await index(builder, inSchema(tdb.url, schema), 120, { schema });
    await builder.close();
    for (let i = 0; i < 2; i++) {
      const database = createDatabase({ url: tdb.url, poolMax: 4, applicationName: `replica-${i}` });
      const switches: [string, string][] = [];
      const follower = followLiveSchema({ db: database.db, databaseUrl: tdb.url, onSwitch: (from, to) => switches.push([from, to]), retryMs: 50 });
      replicas.push({ database, follower, switches });
    }
    for (const r of replicas) await waitFor('the pointer read', async () => r.follower.ready());
  });
  afterAll(async () => {
    for (const r of replicas) {
      await r.follower.close();
      await r.database.close();
    }
    await admin.close();
    await tdb.drop();
  });

  it('reads the live tables until the switch, and the built ones on every session of every replica after it', async () => {
    expect(await readLiveSchema(admin.db)).toBe(LIVE_SCHEMA);
    const liveSlot = await slotOf(admin);
    for (const r of replicas) {
      expect(r.follower.current()).toBe(LIVE_SCHEMA);
      expect(await readAll(r)).toEqual([liveSlot, liveSlot, liveSlot, liveSlot]);
    }
    await switchLiveSchema(admin.db, schema);
    expect(await readLiveSchema(admin.db)).toBe(schema);
    for (const r of replicas) await waitFor('the switch heard', async () => r.follower.current() === schema);
    const builtSlot = Number((await admin.db.one<{ s: string }>(`SELECT last_processed_slot AS s FROM ${schema}.indexer_cursor`)).s);
    expect(builtSlot).toBeGreaterThan(liveSlot);
    for (const r of replicas) {
      expect(await readAll(r)).toEqual([builtSlot, builtSlot, builtSlot, builtSlot]);
      // A transaction's statements too: the session is moved before its BEGIN.
      expect(await r.database.db.tx((t) => t.one<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor'))).toEqual({ s: String(builtSlot) });
      expect(r.switches).toEqual([[LIVE_SCHEMA, schema]]);
    }
    // What is not in the built schema (the API's own tables) is still the live schema's.
    expect(await replicas[0]!.database.db.one("SELECT to_regclass('admin_audit')::text AS t")).toEqual({ t: 'admin_audit' });
  });

  it('refuses a name that is not a projection schema, or one that does not exist; the pointer stays', async () => {
    await expect(switchLiveSchema(admin.db, 'pg_catalog')).rejects.toThrow('not a projection schema: "pg_catalog" (public or p<version>)');
    await expect(switchLiveSchema(admin.db, 'p999')).rejects.toThrow('schema p999 does not exist');
    expect(await readLiveSchema(admin.db)).toBe(schema);
  });

  it('a replica whose listening session was lost hears the next switch once it has reconnected', async () => {
    const listeners = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'market-indexer-live-schema' AND query ILIKE 'LISTEN%'";
    const before = await admin.db.map<number>(listeners, [], (r: { pid: number }) => r.pid);
    expect(before).toHaveLength(2);
    await admin.db.any('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [before]);
    await waitFor('two new listening sessions', async () => (await admin.db.map<number>(listeners, [], (r: { pid: number }) => r.pid)).filter((p) => !before.includes(p)).length === 2);
    await switchLiveSchema(admin.db, LIVE_SCHEMA);
    const liveSlot = await slotOf(admin);
    for (const r of replicas) {
      await waitFor('the switch back heard', async () => r.follower.current() === LIVE_SCHEMA);
      expect(await readAll(r)).toEqual([liveSlot, liveSlot, liveSlot, liveSlot]);
    }
  });
});
