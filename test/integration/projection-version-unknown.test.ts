import { createDatabase, type Database } from '../../core/db';
import { readLiveSchema, switchLiveSchema } from '../../core/db/live-projection';
import { createProjectionSchema, dropProjectionSchema, inSchema, LIVE_SCHEMA } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { createProjectionBuild } from '../../indexer/build';
import { createIndexer } from '../../indexer/indexer';
import { newerProjectionProblem } from '../../indexer/projection-version';
import { createSimulatorSource } from '../../simulator/source';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';

/**
 * Issue 50, finding 4 (D-456): a built schema's projection version is recorded by its writer's
 * one check before it indexes. Were that check skipped, the version would stay unknown for good
 * (nothing records it once a transaction is processed), and a schema of unknown version is one
 * every release would write and the builder would switch the API to.
 */
describe("a schema's projection version is never unknown where it is written or switched to", () => {
  const S = 'p9';
  let tdb: TestDatabase;
  let live: Database;
  let built: Database;
  const common = () => testCommon({ PROGRAM_ID, TENANT_ID: 'version-unknown' });
  const waitFor = async (what: string, f: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 30_000;
    while (!(await f())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const processed = async () => (await built.db.one<{ n: number }>('SELECT count(*)::int AS n FROM processed_transactions')).n;
  const recorded = async () => (await live.db.one<{ version: number | null }>(`SELECT version FROM ${S}.projection_version`)).version;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    live = createDatabase({ url: tdb.url, poolMax: 2 });
    built = createDatabase({ url: inSchema(tdb.url, S), poolMax: 4 });
  });
  beforeEach(async () => {
    await switchLiveSchema(live.db, LIVE_SCHEMA);
    await dropProjectionSchema(live.db, 9);
    await createProjectionSchema(live.db, 9);
  });
  afterAll(async () => {
    await built?.close();
    await live?.close();
    await tdb?.drop();
  });

  const indexer = () =>
    createIndexer({ common: common(), db: built.db, pgp: built.pgp, databaseUrl: inSchema(tdb.url, S), updates: undefined, schema: S, instance: 'builder',
      source: createSimulatorSource({ seed: 5, programId: PROGRAM_ID, untilSlot: 40, epochSeconds: 30, wallets: 4 }) });

  it('a builder indexes nothing until its version check answers, then records its version', async () => {
    // The check's statement fails (as on a lost connection) until the column is back.
    await live.db.none(`ALTER TABLE ${S}.projection_version RENAME COLUMN version TO hidden`);
    const ix = indexer();
    const run = ix.run();
    try {
      await waitFor('the check to fail', () => ix.status().lastError === 'reading the projection version of the tables failed');
      expect(ix.status().role).toBe('writer');
      expect(await processed()).toBe(0);
    } finally {
      await live.db.none(`ALTER TABLE ${S}.projection_version RENAME COLUMN hidden TO version`);
    }
    await run;
    expect(await recorded()).toBe(PROJECTION_VERSION);
    expect(await processed()).toBeGreaterThan(0);
  });

  it('a schema that processed transactions with no version recorded is not written', async () => {
    await built.db.none("INSERT INTO processed_transactions (signature, slot, event_count) VALUES ('sig', 1, 0)");
    await expect(indexer().run()).rejects.toThrow(`projection schema ${S} has processed transactions but records no projection version`);
    expect(await processed()).toBe(1);
  });

  it('the builder does not switch the API to its schema while its version is unknown', async () => {
    const build = createProjectionBuild({ db: live.db, schema: S, version: PROJECTION_VERSION, withinSlots: 10, retainMs: 60_000, builtSlot: () => 1_000_000, logger: common().logger });
    await build.check();
    expect([await readLiveSchema(live.db), build.live()]).toEqual([LIVE_SCHEMA, false]);
    await live.db.none(`UPDATE ${S}.projection_version SET version = $1`, [PROJECTION_VERSION]);
    await build.check();
    expect([await readLiveSchema(live.db), build.live()]).toEqual([S, true]);
  });

  it('a live writer does not start on a built schema of unknown version', async () => {
    await switchLiveSchema(live.db, S);
    expect(await newerProjectionProblem(live.db, { schema: S, release: PROJECTION_VERSION })).toMatch(`the API reads schema ${S}, whose projection version is not recorded`);
    // `public` of no version was built before versions were recorded (projection 1), or holds nothing.
    expect(await newerProjectionProblem(live.db, { schema: LIVE_SCHEMA, release: PROJECTION_VERSION })).toBeUndefined();
  });
});
