import { readdirSync } from 'node:fs';
import { migrate, MIGRATIONS_DIR } from '../../core/db/migrate';
import { createDatabase, type Database } from '../../core/db';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import type { Common } from '../../core/common';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { call, HIGH_LIMITS, testWallet, walletHeaders, type Json } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { testTenant } from '../support/redis';

/** Which projection built the tables (D-331): recorded by the first writer, reported on a mismatch. */
describe('the projection version of the tables (migration 0012, the writer, /admin/indexer)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const apis = createApiServers();
  const admin = testWallet();
  const OTHER = PROJECTION_VERSION + 1;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
  });
  afterAll(async () => {
    await apis.closeAll();
    await database.close();
    await tdb.drop();
  });

  const recorded = () => database.db.one<{ version: number | null; recorded_at: Date | null }>('SELECT version, recorded_at FROM projection_version WHERE id = 1');
  /** Runs a writer over the simulated chain up to `untilSlot`; returns what it reported. */
  async function index(untilSlot: number) {
    const lines: Json[] = [];
    const common: Common = testCommon({ PROGRAM_ID, LOG_LEVEL: 'info' }, { logTo: (l) => void lines.push(JSON.parse(l) as Json) });
    const source = createSimulatorSource({ seed: 41, programId: PROGRAM_ID, untilSlot, epochSeconds: 30, wallets: 6 });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source });
    await indexer.run();
    const gauge = async (m: { get(): Promise<{ values: { value: number; labels: Record<string, unknown> }[] }> }) =>
      Object.fromEntries((await m.get()).values.map((v) => [String(v.labels.of ?? ''), v.value]));
    return {
      status: indexer.status(),
      versions: await gauge(common.metrics.indexerProjectionVersion),
      due: (await gauge(common.metrics.indexerReindexDue))[''],
      lines: lines.filter((l) => /projection version/.test(String(l.msg))),
    };
  }

  it('a database that has processed no transaction records nothing, then takes the first writer\'s version, whatever was recorded before', async () => {
    expect(await recorded()).toEqual({ version: null, recorded_at: null });
    // As if a writer of another release had started here and processed nothing.
    await database.db.none('UPDATE projection_version SET version = $1 WHERE id = 1', [OTHER]);
    const r = await index(60);
    expect((await recorded()).version).toBe(PROJECTION_VERSION);
    expect((await recorded()).recorded_at).toBeInstanceOf(Date);
    expect(r.status.projection).toEqual({ tables: PROJECTION_VERSION, reindexDue: false });
    expect(r.versions).toEqual({ release: PROJECTION_VERSION, tables: PROJECTION_VERSION });
    expect(r.due).toBe(0);
    expect(r.lines.map((l) => [l.level, l.projectionVersion])).toEqual([['info', PROJECTION_VERSION]]);
    expect(Number((await database.db.one('SELECT count(*) AS n FROM processed_transactions')).n)).toBeGreaterThan(0);
  });

  it('tables built by another version are reported, kept as recorded, and indexing goes on', async () => {
    await database.db.none('UPDATE projection_version SET version = $1 WHERE id = 1', [OTHER]);
    const before = Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor WHERE id = 1')).last_processed_slot);
    const r = await index(120);
    expect((await recorded()).version).toBe(OTHER);
    expect(r.status.projection).toEqual({ tables: OTHER, reindexDue: true });
    expect(r.versions).toEqual({ release: PROJECTION_VERSION, tables: OTHER });
    expect(r.due).toBe(1);
    expect(r.lines.map((l) => [l.level, l.tablesProjectionVersion, l.releaseProjectionVersion])).toEqual([['warn', OTHER, PROJECTION_VERSION]]);
    expect(r.status.lastProcessedSlot).toBeGreaterThan(before);
  });

  it('/admin/indexer shows the tables\' version, the writer\'s and whether a re-index is due', async () => {
    const api = await apis.start(testCommon({ PROGRAM_ID, TENANT_ID: testTenant(), ...HIGH_LIMITS, ADMIN_WALLETS: admin.address }), database.db);
    const get = async () => (await call(`${api}/api/v1/admin/indexer`, { headers: walletHeaders(admin, 'GET /admin/indexer') })).body.data.projection as Json;
    // No projection schema is being built here (D-411).
    expect((await call(`${api}/api/v1/admin/indexer`, { headers: walletHeaders(admin, 'GET /admin/indexer') })).body.data.build).toBeNull();
    expect(await get()).toEqual({ release: PROJECTION_VERSION, tables: OTHER, recordedAt: expect.any(String), reindexDue: true });
    await database.db.none('UPDATE projection_version SET version = $1 WHERE id = 1', [PROJECTION_VERSION]);
    expect(await get()).toMatchObject({ release: PROJECTION_VERSION, tables: PROJECTION_VERSION, reindexDue: false });
    // A writer of a release before versions were recorded leaves its own version unknown: nothing is claimed.
    await database.db.none('UPDATE indexer_status SET projection_version = NULL WHERE id = 1');
    expect(await get()).toMatchObject({ release: null, reindexDue: false });
  });

  it('the migration records version 1 on a database that processed transactions before versions were recorded', async () => {
    // Down to the release before it: 0012 and every migration after it.
    const after = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f >= '0012_projection_version.sql');
    await migrate({ databaseUrl: tdb.url, direction: 'down', count: after.length });
    expect((await database.db.one("SELECT to_regclass('projection_version') AS t")).t).toBeNull();
    await migrate({ databaseUrl: tdb.url });
    expect(await recorded()).toEqual({ version: 1, recorded_at: expect.any(Date) });
  });
});
