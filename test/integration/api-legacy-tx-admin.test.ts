import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { createApiKeyStore } from '../../core/api-keys';
import { createDatabase, type Database } from '../../core/db';
import { MarketState } from '../../core/domain';
import { createRpcChain, decodeWireTransaction } from '../../core/tx';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { createPlanLimits } from '../../server/limits/plan-limits';
import { liveProgramConfig } from '../../server/read/queries/config';
import { legacyPresentation } from '../../server/routes/legacy';
import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { HIGH_LIMITS, testWallet, walletHeaders, type Json } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { expectLegacyError } from '../support/legacy';
import { createOpenApiChecker, OPENAPI_LEGACY_PATH } from '../support/openapi';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { signWireTransaction } from '../support/tx';

const HIGH = HIGH_LIMITS;
const POLICY = { TRUST_PROXY: 'loopback', GEO_BLOCKED_COUNTRIES: 'XB', ATTESTATION_REQUIRED_COUNTRIES: 'XA', GEO_COUNTRY_HEADER: 'CF-IPCountry' };
const contract = createOpenApiChecker(OPENAPI_LEGACY_PATH);
const wallet = testWallet;
type Wallet = ReturnType<typeof wallet>;

describe("a legacy tenant serves issue 22's /tx/*, /attestations and /admin/* in its envelope (D-177; real signatures, PostgreSQL, Redis, the simulated chain)", () => {
  let tdb: TestDatabase;
  let database: Database;
  let chain: SimulatorRpcServer;
  let rpcUrl: string;
  const apis = createApiServers();
  const admin = wallet();
  const stranger = wallet();
  const trader = wallet();
  let tenant: string;
  let api: string;
  let trading: { address: string; tickSizeBps: number };

  /** A legacy tenant as `server/run.ts` builds one for API_VARIANT=legacy. */
  async function start(env: Record<string, string> = {}) {
    const common = testCommon({ PROGRAM_ID, TENANT_ID: tenant, ...HIGH, ADMIN_WALLETS: admin.address, API_VARIANT: 'legacy', ...env });
    const plans = createPlanLimits({ tenant, keys: createApiKeyStore(database.db), store: undefined, logger: common.logger, metrics: common.metrics, cacheMs: 0 });
    return apis.start(common, database.db, { presentation: legacyPresentation, plans, chain: createRpcChain({ url: rpcUrl }) });
  }

  /** A request signed by `key` (action without the prefix), its answer checked against openapi-legacy.yaml. */
  async function signed(base: string, method: 'GET' | 'POST', path: string, key: Wallet, o: { body?: unknown; headers?: Record<string, string>; root?: boolean } = {}) {
    const url = `${base}${o.root ? '' : '/api/v1'}${path}`;
    const res = await fetch(url, {
      method,
      headers: { ...walletHeaders(key, `${method} ${path}`), ...(o.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    const body = (await res.json()) as Json;
    contract.assertMatches(method, url, res.status, res.headers.get('content-type'), body);
    return { status: res.status, headers: res.headers, body };
  }
  function expectData(r: { status: number; body: Json }, status = 200) {
    expect(r.status).toBe(status);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'success', 'timestamp']);
    expect(r.body.success).toBe(true);
    expect(Math.abs(r.body.timestamp - Date.now())).toBeLessThan(60_000);
    return r.body.data;
  }
  const expectError = expectLegacyError;

  beforeAll(async () => {
    // The chain only answers the recent blockhash here: the markets come from the indexed simulator.
    const sim = new MarketSimulator({ seed: 177, programId: PROGRAM_ID, epochSeconds: 30, wallets: 4 });
    chain = createSimulatorRpcServer({ simulator: sim });
    rpcUrl = (await chain.listen()).url;
    tenant = testTenant();
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    const source = createSimulatorSource({ seed: 78, programId: PROGRAM_ID, untilSlot: 200, epochSeconds: 30, wallets: 6 });
    await createIndexer({ common: testCommon({ PROGRAM_ID }), db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source }).run();
    const m = await database.db.one<{ address: string }>('SELECT address FROM markets WHERE state = $1 ORDER BY id DESC LIMIT 1', [MarketState.Trading]);
    trading = { address: m.address, tickSizeBps: (await liveProgramConfig(database.db)).tickSizeBps };
    api = await start();
  });
  afterAll(async () => {
    await apis.closeAll();
    await chain.close();
    await database.close();
    await tdb.drop();
  });

  it('builds place_order for the signing wallet and answers it in the envelope, at the canonical path and its root alias', async () => {
    const order = { market: trading.address, side: 'buy_yes', priceBps: trading.tickSizeBps * 3, quantity: '1000000' };
    const data = expectData(await signed(api, 'POST', '/tx/place-order', trader, { body: order }));
    expect(Object.keys(data).sort()).toEqual(['accounts', 'blockhash', 'lastValidBlockHeight', 'transaction']);
    const tx = decodeWireTransaction(data.transaction);
    expect(tx.feePayer).toBe(trader.address);
    // The wallet can sign what it was given.
    expect(signWireTransaction(data.transaction, trader.secretKey)).toEqual(expect.any(String));
    const alias = await signed(api, 'POST', '/tx/place-order', trader, { body: order, root: true });
    expectData(alias);
    expect(alias.headers.get('deprecation')).toBe('true');
    expect(alias.headers.get('x-service-canonical-path')).toBe('/api/v1/tx/place-order');
  });

  it('refuses a tx request in the variant error shape: the body rules, the indexed state, the signature', async () => {
    const bad = await signed(api, 'POST', '/tx/place-order', trader, { body: { market: trading.address, side: 'sideways', priceBps: 1, quantity: '1' } });
    expectError(bad, 'VALIDATION_ERROR');
    expect(bad.body.error.message).toContain('body.side');
    const unknown = await signed(api, 'POST', '/tx/claim-payout', trader, { body: { market: '999999' } });
    expectError(unknown, 'VALIDATION_ERROR');
    expect(unknown.body.error.message).toContain('market not found');
    const unsigned = await fetch(`${api}/api/v1/tx/place-order`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = (await unsigned.json()) as Json;
    contract.assertMatches('POST', unsigned.url, unsigned.status, unsigned.headers.get('content-type'), body);
    expectError({ status: unsigned.status, body }, 'UNAUTHORIZED');
    expect(body.error.message).toMatch(/auth/i);
  });

  it('answers an ADMIN_WALLETS wallet in the envelope and any other wallet 403 FORBIDDEN, known admin path or not', async () => {
    const data = expectData(await signed(api, 'GET', '/admin/indexer', admin));
    expect(data.cursor.lastProcessedSlot).toMatch(/^\d+$/);
    expectData(await signed(api, 'GET', '/admin/indexer', admin, { root: true }));
    const refused = await signed(api, 'GET', '/admin/indexer', stranger);
    expectError(refused, 'FORBIDDEN');
    expect(refused.body.error.message).toBe('Forbidden');
    // A path that does not exist (not in the document: plain fetch) looks the same to them; an admin gets 404.
    const unknown = async (key: Wallet) => {
      const r = await fetch(`${api}/api/v1/admin/no-such-thing`, { headers: walletHeaders(key, 'GET /admin/no-such-thing') });
      return { status: r.status, body: (await r.json()) as Json };
    };
    expectError(await unknown(stranger), 'FORBIDDEN');
    expectError(await unknown(admin), 'NOT_FOUND');
  });

  it('answers a dead-letter retry that no writer settles within its wait 202 in the envelope (D-164), an unknown one 404', async () => {
    const quick = await start({ REQUEST_TIMEOUT_MS: '400' });
    const { id } = await database.db.one(
      "INSERT INTO dead_letters (signature, event_index, slot, kind, reason, detail, source) VALUES ('sigL', 0, 12, 'OrderFilled', 'invalid_transition', 'x', 'test') RETURNING id",
    );
    const pending = expectData(await signed(quick, 'POST', `/admin/dead-letters/${id}/retry`, admin), 202);
    expect(pending.retry).toMatchObject({ outcome: 'pending', doneAt: null });
    expectError(await signed(quick, 'POST', '/admin/dead-letters/999999/retry', admin), 'NOT_FOUND');
  });

  it("manages the tenant's API keys from a legacy tenant (D-166): the key made is the variant's plan key, revoked once", async () => {
    const made = await signed(api, 'POST', '/admin/api-keys', admin, { body: { plan: 'basic', label: 'legacy partner' } });
    const { apiKey } = expectData(made);
    expect(made.headers.get('cache-control')).toBe('no-store');
    expect(apiKey).toMatchObject({ plan: 'basic', label: 'legacy partner', revokedAt: null });
    const listed = expectData(await signed(api, 'GET', '/admin/api-keys', admin));
    expect(listed.apiKeys.map((k: Json) => k.keyId)).toEqual([apiKey.keyId]);
    // The appendix's reads take it as their plan key.
    const read = await fetch(`${api}/api/v1/markets`, { headers: { 'x-api-key': apiKey.key } });
    expect([read.status, read.headers.get('x-ratelimit-limit')]).toEqual([200, '300']);
    expectData(await signed(api, 'POST', `/admin/api-keys/${apiKey.keyId}/revoke`, admin));
    expectError(await signed(api, 'POST', `/admin/api-keys/${apiKey.keyId}/revoke`, admin), 'CONFLICT');
    const revoked = await fetch(`${api}/api/v1/markets`, { headers: { 'x-api-key': apiKey.key } });
    expect(revoked.status).toBe(401);
    // The audit keeps the variant's error code of a refused admin call, not `http_409` (issue 31 finding 9).
    const action = `POST /api/v1/admin/api-keys/${apiKey.keyId}/revoke`;
    const audit = await waitFor('the revocations audited', async () => {
      const rows = await database.db.any<Json>('SELECT status, outcome FROM admin_audit WHERE action = $1 ORDER BY id', [action]);
      return rows.length === 2 ? rows : undefined;
    });
    expect(audit).toEqual([
      { status: 200, outcome: 'ok' },
      { status: 409, outcome: 'CONFLICT' },
    ]);
  });

  it('applies the jurisdiction policy with honest codes: 451 GEO_BLOCKED, 451 ATTESTATION_REQUIRED until POST /attestations', async () => {
    const base = await start(POLICY);
    const order = { market: trading.address, side: 'buy_no', priceBps: trading.tickSizeBps * 2, quantity: '1000000' };
    expectError(await signed(base, 'POST', '/tx/place-order', trader, { body: order, headers: { 'cf-ipcountry': 'XB' } }), 'GEO_BLOCKED');
    const w = wallet();
    const from = { headers: { 'cf-ipcountry': 'XA' } };
    expectError(await signed(base, 'POST', '/tx/place-order', w, { body: order, ...from }), 'ATTESTATION_REQUIRED');
    const statement = `I, holder of wallet ${w.address}, attest that I may trade under the rules of XA.`;
    const attestation = { country: 'XA', statement, signature: bs58.encode(nacl.sign.detached(Buffer.from(statement), w.secretKey)) };
    const made = expectData(await signed(base, 'POST', '/attestations', w, { body: attestation }));
    expect(made.attestation).toMatchObject({ wallet: w.address, country: 'XA' });
    expectData(await signed(base, 'POST', '/tx/place-order', w, { body: order, ...from }));
  });
});
