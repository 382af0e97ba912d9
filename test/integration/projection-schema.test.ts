import { createDatabase, type Database } from '../../core/db';
import { createProjectionSchema, dropProjectionSchema, inSchema, LIVE_SCHEMA, PROJECTION_SCHEMA_TABLES, projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { createIndexer } from '../../indexer/indexer';
import { acquireWriterLease } from '../../indexer/writer-lease';
import { createSimulatorSource } from '../../simulator/source';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { tableDigests } from '../support/tables';

/**
 * A projection version's tables built in a schema of their own (D-332) from the same chain,
 * while the live schema is left as it was and its writer keeps its lease.
 */
describe('building the projection in its own schema (p<version>)', () => {
  let tdb: TestDatabase;
  let live: Database;
  let built: Database;
  const schema = projectionSchema(PROJECTION_VERSION);
  const TENANT = 'schema-build';
  const chain = (untilSlot: number) => createSimulatorSource({ seed: 23, programId: PROGRAM_ID, untilSlot, epochSeconds: 30, wallets: 8 });
  const index = (db: Database, url: string, untilSlot: number, opts: { schema?: string; instance: string }) =>
    createIndexer({ common: testCommon({ PROGRAM_ID, TENANT_ID: TENANT }), db: db.db, pgp: db.pgp, databaseUrl: url, updates: undefined, source: chain(untilSlot), ...opts }).run();

  beforeAll(async () => {
    tdb = await createTestDatabase();
    live = createDatabase({ url: tdb.url, poolMax: 4 });
    built = createDatabase({ url: inSchema(tdb.url, schema), poolMax: 4 });
  });
  afterAll(async () => {
    await built.close();
    await live.close();
    await tdb.drop();
  });

  it('creates the schema with empty tables shaped like the live ones, seeded as the migrations seed them; twice is refused', async () => {
    await index(live, tdb.url, 60, { instance: 'live-1' });
    expect(await createProjectionSchema(live.db, PROJECTION_VERSION)).toBe(schema);
    const shape = (s: string) =>
      live.db.map<string>(
        `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable AS c FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = ANY($2) ORDER BY table_name, ordinal_position`,
        [s, PROJECTION_SCHEMA_TABLES],
        (r: { c: string }) => r.c,
      );
    expect(await shape(schema)).toEqual(await shape(LIVE_SCHEMA));
    const fks = (s: string) => live.db.one<{ n: number }>("SELECT count(*)::int AS n FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE k.contype = 'f' AND n.nspname = $1", [s]);
    expect((await fks(schema)).n).toBe((await fks(LIVE_SCHEMA)).n);
    expect(await built.db.one('SELECT last_processed_slot, next_ids FROM indexer_cursor')).toEqual({ last_processed_slot: '0', next_ids: {} });
    expect(await built.db.one('SELECT count(*)::int AS n FROM markets')).toEqual({ n: 0 });
    expect(await built.db.one('SELECT count(*)::int AS n FROM achievements')).toEqual(await live.db.one('SELECT count(*)::int AS n FROM achievements'));
    await expect(createProjectionSchema(live.db, PROJECTION_VERSION)).rejects.toThrow(/already exists/);
  });

  it('an indexer backfills the schema while the live writer holds its lease; the live tables stay as they were', async () => {
    const before = await tableDigests(live.db);
    // The live tenant's writer lease, held by another process for the whole build.
    const common = testCommon({ PROGRAM_ID, TENANT_ID: TENANT });
    const controller = new AbortController();
    const liveLease = await acquireWriterLease({ databaseUrl: tdb.url, tenant: TENANT, instance: 'live-2', timing: common.config.writerLease, signal: controller.signal });
    const cursor = await live.db.one('SELECT * FROM indexer_cursor');
    try {
      await index(built, inSchema(tdb.url, schema), 120, { schema, instance: 'builder' });
      expect(liveLease!.valid()).toBe(true);
    } finally {
      await liveLease!.release();
    }
    expect(await tableDigests(live.db)).toEqual(before);
    expect(await live.db.one('SELECT * FROM indexer_cursor')).toEqual(cursor);
    const b = await built.db.one<{ last_processed_slot: string }>('SELECT last_processed_slot FROM indexer_cursor');
    expect(Number(b.last_processed_slot)).toBeGreaterThan(Number(cursor.last_processed_slot));
    expect(await built.db.one('SELECT version FROM projection_version')).toEqual({ version: PROJECTION_VERSION });
    expect((await built.db.one<{ n: number }>('SELECT count(*)::int AS n FROM trades')).n).toBeGreaterThan(0);
  });

  it('the tables built in the schema equal the live ones once both indexed the same chain', async () => {
    await index(live, tdb.url, 120, { instance: 'live-3' });
    const [a, b] = [await tableDigests(live.db), await tableDigests(built.db)];
    expect(b).toEqual(a);
    expect(a.trades!.rows).toBeGreaterThan(0);
  });

  it('drops the schema and only it; an indexer told to build a schema that does not exist refuses to start', async () => {
    const before = await tableDigests(live.db);
    await dropProjectionSchema(live.db, PROJECTION_VERSION);
    expect(await live.db.one("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1", [schema])).toEqual({ n: 0 });
    expect(await tableDigests(live.db)).toEqual(before);
    await expect(index(built, inSchema(tdb.url, schema), 180, { schema, instance: 'builder-2' })).rejects.toThrow(`projection schema ${schema} does not exist (names resolve to public): create it first`);
    expect(await tableDigests(live.db)).toEqual(before);
    expect(() => projectionSchema(0)).toThrow('projection version must be a positive integer, not 0');
  });
});
