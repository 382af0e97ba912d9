import { createDatabase, type Database } from '../../core/db';
import { followLiveSchema, readLiveSchema, type LiveSchemaFollower } from '../../core/db/live-projection';
import { LIVE_SCHEMA, inSchema, projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import type { UpdateLog } from '../../core/redis/updates';
import type { RawTransaction } from '../../core/events/transaction';
import type { Source } from '../../indexer/sources/types';
import { startProjectionBuild } from '../../indexer/build';
import { createIndexerHttp } from '../../indexer/http';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { call, HIGH_LIMITS, testWallet, walletHeaders } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { tableDigests, waitFor } from '../support/tables';

/**
 * An indexer in build mode (D-411), with real PostgreSQL and the simulated chain: while the live
 * writer goes on writing `public`, it builds `p<version>` from the chain's start, switches the
 * pointer by itself once it has caught up, and the API's sessions read the built tables, which
 * equal the live writer's backfill of the same chain row for row.
 */
describe('an indexer building the projection schema and switching the API to it', () => {
  let tdb: TestDatabase;
  let live: Database;
  let api: Database;
  let follower: LiveSchemaFollower;
  const apis = createApiServers();
  const admin = testWallet();
  const schema = projectionSchema(PROJECTION_VERSION);
  const TENANT = 'build-mode';
  const UNTIL = 240;
  const chain = () => createSimulatorSource({ seed: 31, programId: PROGRAM_ID, untilSlot: UNTIL, epochSeconds: 30, wallets: 8, maxBatchTransactions: 20 });
  /** A source whose every batch waits for `gate` first: the test sets the live writer's pace. */
  const paced = (source: Source, gate: (batch: RawTransaction[]) => Promise<void>): Source => ({
    ...source,
    name: source.name,
    chainTip: () => source.chainTip(),
    connected: () => source.connected(),
    close: () => source.close(),
    async *batches(from, signal) {
      for await (const b of source.batches(from, signal)) {
        await gate(b);
        yield b;
      }
    },
  });
  const cursorOf = async (db: Database, s: string) => Number((await db.db.one<{ s: string }>(`SELECT last_processed_slot AS s FROM ${s}.indexer_cursor`)).s);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    live = createDatabase({ url: tdb.url, poolMax: 4 });
    api = createDatabase({ url: tdb.url, poolMax: 2, applicationName: 'api' });
    follower = followLiveSchema({ db: api.db, databaseUrl: tdb.url, retryMs: 50 });
    await waitFor('the pointer read', async () => follower.ready());
  });
  afterAll(async () => {
    await apis.closeAll();
    await follower.close();
    await api.close();
    await live.close();
    await tdb.drop();
  });

  it('builds beside the live writer, switches once caught up, publishes only once switched to, and equals the live backfill', async () => {
    // The live writer goes alone to slot 60, then at half the build's pace (one batch for every
    // two of the build's) until the build is done: the build catches up half way, with the live
    // writer still writing, and the live writer goes on writing public after the switch.
    let phase: 'alone' | 'paced' | 'free' = 'alone';
    let waitingAtGate = false;
    let builderBatches = 0;
    let liveBatchesSinceBuild = 0;
    const wake: (() => void)[] = [];
    const wakeAll = () => wake.splice(0).forEach((f) => f());
    const until = async (cond: () => boolean) => {
      while (!cond()) await new Promise<void>((r) => wake.push(r));
    };
    const gate = async (batch: RawTransaction[]) => {
      if (phase === 'free' || (batch.at(-1)?.slot ?? 0) < 60) return;
      waitingAtGate = true;
      await until(() => phase !== 'alone');
      liveBatchesSinceBuild += 1;
      await until(() => phase === 'free' || builderBatches >= 2 * liveBatchesSinceBuild);
    };
    const liveCommon = testCommon({ PROGRAM_ID, TENANT_ID: TENANT });
    const liveSource = paced(chain(), gate);
    const liveWriter = createIndexer({ common: liveCommon, db: live.db, pgp: live.pgp, databaseUrl: tdb.url, updates: undefined, source: liveSource, instance: 'live' });
    // The live writer's own /status, which the operator reads: the live schema and the build (D-435).
    const liveHttp = createIndexerHttp({ common: liveCommon, db: live.db, indexer: liveWriter, source: liveSource, sink: undefined });
    await new Promise<void>((r) => liveHttp.listen(0, '127.0.0.1', r));
    const liveStatus = async () => (await (await fetch(`http://127.0.0.1:${(liveHttp.address() as { port: number }).port}/status`)).json()) as { projection?: unknown; build?: unknown };
    expect((await liveStatus()).projection).toEqual({ live: LIVE_SCHEMA, build: null });
    const liveRun = liveWriter.run();
    await waitFor('the live writer at slot 60', async () => waitingAtGate);

    // Every append the build makes, with whether it was switched to at the time.
    const appends: { schema: string | undefined; live: boolean }[] = [];
    let switchedTo = () => false;
    const updates: UpdateLog = {
      append: async (_u, _tp, s) => void appends.push({ schema: s, live: switchedTo() }),
      since: async () => ({ ok: false, latest: 0 }),
    };
    const common = testCommon({ PROGRAM_ID, TENANT_ID: TENANT, INDEXER_MODE: 'build' });
    expect(common.config.indexerBuildSwitchSlots).toBe(4);
    const started = await startProjectionBuild({ common, db: live.db, databaseUrl: tdb.url, version: PROJECTION_VERSION, updates, source: chain(), instance: 'builder', checkMs: 50 });
    switchedTo = started.build.live;
    const liveAtBuildStart = await cursorOf(live, LIVE_SCHEMA);
    expect(liveAtBuildStart).toBeGreaterThan(0);
    expect(started.build.status()).toMatchObject({ schema, state: 'building', switchedAt: null });
    // GET /admin/indexer shows the build beside the live writer, until it is switched to.
    const apiUrl = await apis.start(testCommon({ PROGRAM_ID, TENANT_ID: TENANT, ...HIGH_LIMITS, ADMIN_WALLETS: admin.address }), api.db);
    const adminIndexer = async () => (await call(`${apiUrl}/api/v1/admin/indexer`, { headers: walletHeaders(admin, 'GET /admin/indexer') })).body.data;
    const adminBuild = (await adminIndexer()).build as Record<string, unknown>;
    expect(adminBuild).toMatchObject({ schema, lastProcessedSlot: '0', writerId: null });
    // The same facts, from the same query, on the live indexer's /status (and nothing of the build mode's `build`).
    const { writerId: _w, heartbeatAt: _h, ...progress } = adminBuild;
    expect(await liveStatus()).toMatchObject({ projection: { live: LIVE_SCHEMA, build: progress } });
    // The builder has not run yet: its writer has seen no tip.
    expect(progress).toEqual({ schema, lastProcessedSlot: '0', chainTipSlot: null, slotLag: null });
    expect(await liveStatus()).not.toHaveProperty('build');
    started.indexer.onBatch(() => {
      builderBatches += 1;
      wakeAll();
    });
    phase = 'paced';
    wakeAll();
    const buildRun = started.indexer.run().finally(() => {
      phase = 'free';
      wakeAll();
    });

    // The switch is the build's own doing: nothing here moves the pointer.
    await waitFor('the build switched to', async () => started.build.live(), 60_000);
    await waitFor('the API following', async () => follower.current() === schema);
    expect(await readLiveSchema(live.db)).toBe(schema);
    const s = started.build.status();
    expect(s).toMatchObject({ schema, state: 'live', liveWriterSlot: null, switchedAt: expect.any(String) });
    const liveAtSwitch = await cursorOf(live, LIVE_SCHEMA);
    expect(liveAtSwitch).toBeLessThan(UNTIL);

    // Switched: the live indexer's /status names the built schema, and no build.
    expect((await liveStatus()).projection).toEqual({ live: schema, build: null });
    await Promise.all([liveRun, buildRun]);
    await new Promise<void>((r) => liveHttp.close(() => r()));
    await started.close();
    // The live writer kept writing public during the build and after the switch, to the chain's end.
    expect(liveAtSwitch).toBeGreaterThan(liveAtBuildStart);
    expect(await cursorOf(live, LIVE_SCHEMA)).toBe(UNTIL);
    // The API's sessions read the build's tables: its cursor, its rows.
    const built = createDatabase({ url: inSchema(tdb.url, schema), poolMax: 2 });
    try {
      expect(Number((await api.db.one<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor')).s)).toBe(UNTIL);
      expect(await api.db.one('SELECT count(*)::int AS n FROM trades')).toEqual(await built.db.one('SELECT count(*)::int AS n FROM trades'));
      const [a, b] = [await tableDigests(live.db), await tableDigests(built.db)];
      expect(b).toEqual(a);
      expect(Object.values(b).some((t) => t.rows > 0)).toBe(true);
      // The API's admin view: the build is the live schema now, its writer the builder.
      expect(await adminIndexer()).toMatchObject({ cursor: { lastProcessedSlot: String(UNTIL) }, build: null });
    } finally {
      await built.close();
    }
    // Nothing was published while the API read public; what was, was under the build's schema.
    expect(appends.filter((x) => !x.live)).toEqual([]);
    expect(appends.length).toBeGreaterThan(0);
    expect(appends.every((x) => x.schema === schema)).toBe(true);
  });
});
