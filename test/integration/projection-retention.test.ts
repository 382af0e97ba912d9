import { createDatabase, type Database } from '../../core/db';
import { dropExpiredSchema, readLiveSchema, switchLiveSchema } from '../../core/db/live-projection';
import { createProjectionSchema, LIVE_SCHEMA, projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { startProjectionBuild, startRetentionSweep } from '../../indexer/build';
import { createSimulatorSource } from '../../simulator/source';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { waitFor } from '../support/tables';

/** The schema switched away from, kept for its retention and then dropped by the live writer (D-412). */
describe('retention of the projection schema switched away from', () => {
  let tdb: TestDatabase;
  let db: Database;
  const V = PROJECTION_VERSION;
  const [current, next] = [projectionSchema(V), projectionSchema(V + 1)];
  const pointer = () =>
    db.db.one<{ live: string; previous: string | null; retained: string | null }>(
      "SELECT schema_name AS live, previous_schema AS previous, CASE WHEN retain_until IS NULL THEN NULL WHEN retain_until > now() THEN 'future' ELSE 'past' END AS retained FROM projection_live WHERE id = 1",
    );
  const exists = async (s: string) => (await db.db.oneOrNone('SELECT 1 FROM pg_namespace WHERE nspname = $1', [s])) !== null;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase({ url: tdb.url, poolMax: 4 });
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  it('records the previous schema and its retention at each switch; drops a p<version> once it has passed, never public', async () => {
    await createProjectionSchema(db.db, V);
    await switchLiveSchema(db.db, current, { retainMs: 3_600_000 });
    expect(await pointer()).toEqual({ live: current, previous: LIVE_SCHEMA, retained: 'future' });
    expect(await dropExpiredSchema(db.db)).toBeUndefined();
    expect(await pointer()).toEqual({ live: current, previous: LIVE_SCHEMA, retained: 'future' });
    // Its retention passed: public's ends, and public stays (it holds the API's tables).
    await db.db.none("UPDATE projection_live SET retain_until = now() - interval '1 second'");
    expect(await dropExpiredSchema(db.db)).toBeUndefined();
    expect(await pointer()).toEqual({ live: current, previous: null, retained: null });
    expect(await db.db.one("SELECT to_regclass('public.markets')::text AS t")).toEqual({ t: 'markets' });

    await createProjectionSchema(db.db, V + 1);
    await switchLiveSchema(db.db, next, { retainMs: 0 });
    expect(await pointer()).toEqual({ live: next, previous: current, retained: 'past' });
    expect(await dropExpiredSchema(db.db)).toBe(current);
    expect(await exists(current)).toBe(false);
    expect(await pointer()).toEqual({ live: next, previous: null, retained: null });

    // Switched without a retention: kept until dropped by hand. Switching to the live schema again changes nothing.
    await switchLiveSchema(db.db, LIVE_SCHEMA);
    await switchLiveSchema(db.db, LIVE_SCHEMA, { retainMs: 0 });
    expect(await pointer()).toEqual({ live: LIVE_SCHEMA, previous: next, retained: null });
    expect(await dropExpiredSchema(db.db)).toBeUndefined();
    expect(await exists(next)).toBe(true);
  });

  it('a builder that switched drops the schema it replaced once PROJECTION_RETAIN_HOURS has passed (0: at its next sweep)', async () => {
    // The live schema is p<version+1> (empty, cursor 0): the builder of p<version> catches up with its first batch.
    await switchLiveSchema(db.db, next);
    const common = testCommon({ PROGRAM_ID, TENANT_ID: 'retention', INDEXER_MODE: 'build', PROJECTION_RETAIN_HOURS: '0' });
    const source = createSimulatorSource({ seed: 7, programId: PROGRAM_ID, untilSlot: 30, epochSeconds: 30, wallets: 4 });
    const b = await startProjectionBuild({ common, db: db.db, databaseUrl: tdb.url, version: V, updates: undefined, source, instance: 'builder', checkMs: 50 });
    try {
      await b.indexer.run();
      await waitFor('the switch', async () => b.build.live());
      expect(await readLiveSchema(db.db)).toBe(current);
      await waitFor('the replaced schema dropped', async () => !(await exists(next)));
      expect(await pointer()).toEqual({ live: current, previous: null, retained: null });
    } finally {
      await b.close();
    }
  });

  it('a live writer sweeps too, only while it writes', async () => {
    // The pointer is on p<version> (the builder's switch above); back to public with no time to keep p<version>.
    await switchLiveSchema(db.db, LIVE_SCHEMA, { retainMs: 0 });
    const { logger } = testCommon();
    let writing = false;
    let sweeps = 0;
    const stop = startRetentionSweep(db.db, logger, () => (sweeps++, writing), 20);
    try {
      await waitFor('a few sweeps as a standby', async () => sweeps >= 3);
      expect(await exists(current)).toBe(true);
      writing = true;
      await waitFor('dropped by the writer', async () => !(await exists(current)));
      expect(await pointer()).toEqual({ live: LIVE_SCHEMA, previous: null, retained: null });
    } finally {
      stop();
    }
  });
});
