import { createDatabase, type Database } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createOracleIngest } from '../../indexer/oracle';
import { createSimulatorSource } from '../../simulator/source';
import { LEGACY_STATES, legacyOutcome } from '../../server/read/serialize-legacy';
import type { Json } from '../support/api';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createOpenApiChecker, OPENAPI_LEGACY_PATH, OPENAPI_PATH } from '../support/openapi';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, type ApiChild } from '../support/processes';
import { TEST_REDIS_URL, testTenant } from '../support/redis';
import { assertMatchesAsyncApi, assertMatchesLegacyAsyncApi, WsClient } from '../support/ws';

// Both variants end to end (issue 21, D-155): the simulated chain is indexed once into one
// database, then the real API entry point runs twice over it, one process per variant, as two
// tenants of the kit would. Every response is checked against its variant's OpenAPI document,
// every /ws frame against its AsyncAPI document.
jest.setTimeout(60_000);

const VARIANTS = ['v1', 'legacy'] as const;
type Variant = (typeof VARIANTS)[number];
const CONTRACTS = { v1: createOpenApiChecker(OPENAPI_PATH), legacy: createOpenApiChecker(OPENAPI_LEGACY_PATH) };

describe('both variants over the same indexed data (two API processes, one per variant)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const apis = {} as Record<Variant, ApiChild>;
  const bases = {} as Record<Variant, string>;
  const clients: WsClient[] = [];

  async function get(variant: Variant, path: string): Promise<{ status: number; body: Json }> {
    const url = `${bases[variant]}/api/v1${path}`;
    const res = await fetch(url);
    const body = (await res.json()) as Json;
    CONTRACTS[variant].assertMatches('GET', url, res.status, res.headers.get('content-type'), body);
    return { status: res.status, body };
  }
  const legacyData = async (path: string) => {
    const r = await get('legacy', path);
    expect([path, r.status, r.body.success]).toEqual([path, 200, true]);
    return r.body.data;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    // Two tenants of the kit over one database: each its own TENANT_ID (Redis keys, API keys).
    // They start while the data is indexed (the tests read only once both are done).
    for (const variant of VARIANTS) {
      apis[variant] = spawnApi({ DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), PROGRAM_ID, API_VARIANT: variant });
    }
    const common = testCommon({ PROGRAM_ID });
    const source = createSimulatorSource({ seed: 4141, programId: PROGRAM_ID, untilSlot: 1_000, epochSeconds: 30 });
    await createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source }).run();
    await createOracleIngest({ db: database.db, source, logger: common.logger }).poll();
    for (const variant of VARIANTS) bases[variant] = `http://127.0.0.1:${await apis[variant].port}`;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const api of Object.values(apis)) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await database?.close();
    await tdb?.drop();
  });

  it('reads the same markets through both shapes', async () => {
    const v1List = await get('v1', '/markets?limit=100');
    expect(v1List.status).toBe(200);
    const v1Markets = v1List.body.data.markets as Json[];
    expect(v1Markets.length).toBeGreaterThan(10);
    expect(v1List.body.data.total).toBe(v1Markets.length);
    // The variant's list, page by page: the same markets.
    const legacyMarkets: Json[] = [];
    let cursor: string | null = null;
    do {
      const r = await get('legacy', `/markets?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      legacyMarkets.push(...(r.body.data as Json[]));
      cursor = r.body.pagination.nextCursor;
    } while (cursor);
    const ids = (ms: Json[], key: string) => ms.map((m) => String(m[key])).sort();
    expect(ids(legacyMarkets, 'marketId')).toEqual(ids(v1Markets, 'marketId'));

    // One resolved market and the current one, field by field (D-157).
    const resolved = v1Markets.find((m) => m.state === 4 && m.outcome !== null)!;
    const currentId = String((await get('v1', '/markets/current')).body.data.market.marketId);
    for (const marketId of [String(resolved.marketId), currentId]) {
      const v1 = await get('v1', `/markets/${marketId}`);
      expect([marketId, v1.status, v1.body]).toMatchObject([marketId, 200, {}]);
      const m = v1.body.data.market as Json;
      const l = (await legacyData(`/markets/${marketId}`)) as Json;
      expect(l).toMatchObject({
        id: m.address,
        marketId: String(m.marketId),
        pythFeed: m.oracleFeed,
        tStart: Math.floor(Date.parse(m.tStart) / 1000),
        tEnd: Math.floor(Date.parse(m.tEnd) / 1000),
        state: LEGACY_STATES[m.state],
        outcome: legacyOutcome(m.outcome),
        totalVolume: String(m.totalVolume),
      });
    }
    expect(((await legacyData('/markets/current')) as Json).marketId).toBe(currentId);
  });

  it("answers the other variant's routes with its own 404", async () => {
    const legacyOnly = await get('v1', '/protocol/config');
    expect([legacyOnly.status, legacyOnly.body]).toEqual([404, { error: 'Not found', code: 'NOT_FOUND' }]);
    const v1Only = await get('legacy', '/status');
    expect(v1Only.status).toBe(404);
    expect(v1Only.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) }, timestamp: expect.any(Number) });
    // A path both serve answers in each one's own shape.
    const health = await get('legacy', '/health');
    expect([health.status, health.body.success]).toEqual([200, true]);
  });

  it("streams each variant's /ws form, frames as its AsyncAPI document describes", async () => {
    const marketId = String(((await legacyData('/markets/current')) as Json).marketId);
    const v1 = await WsClient.open(`${bases.v1.replace('http', 'ws')}/ws`, {}, assertMatchesAsyncApi);
    const legacy = await WsClient.open(`${bases.legacy.replace('http', 'ws')}/ws`, {}, assertMatchesLegacyAsyncApi);
    clients.push(v1, legacy);
    await v1.next((m) => m.type === 'connected');
    await legacy.next((m) => m.type === 'connected');
    expect(await v1.request({ type: 'subscribe', channel: `market:${marketId}` })).toMatchObject({ type: 'subscribed', channel: `market:${marketId}` });
    expect(await legacy.request({ type: 'subscribe', channel: 'market.update', marketId })).toMatchObject({ type: 'subscribed', channel: `market:${marketId}` });
    v1.assertValid();
    legacy.assertValid();
  });
});
