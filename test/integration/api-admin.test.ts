import net from 'node:net';
import { createApiKeyStore } from '../../core/api-keys';
import { createShutdown, type Common } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createDatabase, type Database } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { call, HIGH_LIMITS, testWallet, walletHeaders, type Json } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { testTenant } from '../support/redis';
import { waitFor } from '../support/tables';

const HIGH = HIGH_LIMITS;
const wallet = testWallet;

describe('/admin/* (ADMIN_WALLETS, real signatures, audit table)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const apis = createApiServers();
  const admin = wallet();
  const admin2 = wallet();
  const stranger = wallet();
  let api: string;

  async function start(env: Record<string, string> = {}) {
    return apis.start(testCommon({ PROGRAM_ID, TENANT_ID: testTenant(), ...HIGH, ADMIN_WALLETS: `${admin.address},${admin2.address}`, ...env }), database.db);
  }
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    const source = createSimulatorSource({ seed: 77, programId: PROGRAM_ID, untilSlot: 200, epochSeconds: 30, wallets: 6 });
    await createIndexer({ common: testCommon({ PROGRAM_ID }), db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source }).run();
    // Two dead letters of different reasons, as the projector stores them.
    await database.db.none(
      `INSERT INTO dead_letters (signature, event_index, slot, kind, reason, detail, source) VALUES
         ('sigA', 0, 10, 'OrderFilled', 'invalid_transition', 'order unknown', 'test'),
         ('sigB', -1, 11, NULL, 'undecodable', 'bad bytes', 'test')`,
    );
    api = await start();
  });
  afterAll(async () => {
    await apis.closeAll();
    await database.close();
    await tdb.drop();
  });

  const get = (base: string, path: string, key = admin, o = {}) => call(`${base}/api/v1${path}`, { headers: walletHeaders(key, `GET ${path}`, o) });

  it('serves the indexer state, dead letters by reason and page, to admin wallets', async () => {
    const r = await get(api, '/admin/indexer');
    expect(r.status).toBe(200);
    expect(r.body.data.cursor.lastProcessedSlot).toMatch(/^\d+$/);
    expect(r.body.data.deadLetters).toEqual({ invalid_transition: 1, undecodable: 1 });
    const all = await get(api, '/admin/dead-letters');
    expect(all.body.data).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(all.body.data.deadLetters.map((d: Json) => d.signature)).toEqual(['sigB', 'sigA']);
    const one = await get(api, '/admin/dead-letters?reason=undecodable&limit=1');
    expect(one.body.data).toMatchObject({ total: 1, limit: 1 });
    expect(one.body.data.deadLetters[0]).toMatchObject({ signature: 'sigB', eventIndex: -1, kind: null, reason: 'undecodable' });
    expect((await get(api, '/admin/dead-letters?limit=0')).body.code).toBe('INVALID_PARAMETER');
  });

  it('answers other wallets 403 FORBIDDEN on every admin path, known or not; unsigned 401; replay 401', async () => {
    for (const path of ['/admin/indexer', '/admin/audit']) {
      const r = await get(api, path, stranger);
      expect([path, r.status, r.body]).toEqual([path, 403, { error: 'Forbidden', code: 'FORBIDDEN' }]);
    }
    // A path that does not exist (so not in openapi.yaml: plain fetch) looks the same to them.
    const unknown = (key: ReturnType<typeof wallet>) => fetch(`${api}/api/v1/admin/no-such-thing`, { headers: walletHeaders(key, 'GET /admin/no-such-thing') });
    const hidden = await unknown(stranger);
    expect([hidden.status, await hidden.json()]).toEqual([403, { error: 'Forbidden', code: 'FORBIDDEN' }]);
    expect((await unknown(admin)).status).toBe(404);
    const unsigned = await call(`${api}/api/v1/admin/indexer`);
    expect([unsigned.status, unsigned.body.code]).toEqual([401, 'MISSING_AUTH_HEADERS']);
    const nonce = `admin-replay-${Date.now()}`;
    expect((await get(api, '/admin/indexer', admin, { nonce })).status).toBe(200);
    expect((await get(api, '/admin/indexer', admin, { nonce })).body).toMatchObject({ code: 'UNAUTHORIZED', error: 'Nonce already used' });
    // Without ADMIN_WALLETS nobody is an admin.
    const closed = await start({ ADMIN_WALLETS: '' });
    expect((await get(closed, '/admin/indexer')).status).toBe(403);
  });

  it('revokes attestations once', async () => {
    const { id } = await database.db.one("INSERT INTO attestations (wallet, country, statement, signature) VALUES ('w', 'XA', 's', 'sig') RETURNING id");
    const revoke = (n: string) => call(`${api}/api/v1/admin/attestations/${n}/revoke`, { method: 'POST', headers: walletHeaders(admin, `POST /admin/attestations/${n}/revoke`) });
    const r = await revoke(String(id));
    expect(r.status).toBe(200);
    expect(r.body.data.attestation).toMatchObject({ id: Number(id), wallet: 'w', country: 'XA', revokedBy: admin.address });
    expect((await revoke(String(id))).body.code).toBe('CONFLICT');
    expect((await revoke('999999')).body.code).toBe('NOT_FOUND');
  });

  it('writes what admins did to the audit table; refusals before an admin is verified are counted and logged at debug only (issue 31 findings 1, 9)', async () => {
    // An API whose logs are kept at the default level, to count what a flood writes there.
    const lines: Json[] = [];
    const config = loadConfig({ PROGRAM_ID, TENANT_ID: testTenant(), ...HIGH, ADMIN_WALLETS: admin2.address, LOG_LEVEL: 'info' });
    const logger = createLogger({ level: config.logLevel, service: 'test', tenant: config.tenantId, destination: { write: (l: string) => void lines.push(JSON.parse(l) as Json) } });
    const common: Common = { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
    const base = await apis.start(common, database.db);
    // Rows of anyone but an admin: anonymous callers (wallet null) and the stranger.
    const rows = async () => (await database.db.one<{ n: number }>('SELECT count(*)::int AS n FROM admin_audit WHERE wallet IS NULL OR wallet = $1', [stranger.address])).n;
    const before = await rows();
    const startLines = lines.length;
    // Anonymous calls to paths that do not exist, a non-admin wallet, and a bad signature.
    const anonymous = await Promise.all(Array.from({ length: 40 }, (_, i) => fetch(`${base}/api/v1/admin/x${i}`)));
    expect(anonymous.map((r) => r.status)).toEqual(Array(40).fill(401));
    for (let i = 0; i < 5; i++) expect((await get(base, '/admin/indexer', stranger)).status).toBe(403);
    expect((await fetch(`${base}/api/v1/admin/audit`, { headers: walletHeaders(admin2, 'GET /admin/audit', { forge: true }) })).status).toBe(401);
    // What an admin did is written, with its error code when it was refused (v1 `{ code }`).
    const marker = `/admin/dead-letters?offset=${Date.now() % 1000}`;
    expect((await get(base, marker, admin2)).status).toBe(200);
    expect((await get(base, '/admin/dead-letters?limit=0', admin2)).status).toBe(400);
    const audit = await waitFor('the admin calls audited', async () => {
      const entries = await database.db.any<Json>('SELECT wallet, action, status, outcome FROM admin_audit WHERE wallet = $1 ORDER BY id', [admin2.address]);
      return entries.length === 2 && entries[1]!.status === 400 ? entries : undefined;
    });
    expect(audit).toEqual([
      { wallet: admin2.address, action: `GET /api/v1${marker}`, status: 200, outcome: 'ok' },
      { wallet: admin2.address, action: 'GET /api/v1/admin/dead-letters?limit=0', status: 400, outcome: 'INVALID_PARAMETER' },
    ]);
    expect(await rows()).toBe(before);
    // The refusals are counted instead.
    const refusals = async () => Object.fromEntries((await common.metrics.adminRefusals.get()).values.map((v) => [v.labels.reason, v.value]));
    expect(await refusals()).toEqual({ unauthenticated: 41, forbidden: 5, rate_limited: 0, unavailable: 0, other: 0 });
    // The default level shows the admins' calls, one line each, and nothing of the refusals.
    expect(lines.slice(startLines).map((l) => [l.msg, l.wallet, l.status])).toEqual([
      ['admin call', admin2.address, 200],
      ['admin call', admin2.address, 400],
    ]);
    // The suite's API (ADMIN_WALLETS admin, admin2) reads them back.
    const entries = (await get(api, '/admin/audit?limit=100')).body.data.entries as Json[];
    expect(entries.find((e) => e.action === `GET /api/v1${marker}`)).toMatchObject({ wallet: admin2.address, status: 200, outcome: 'ok' });
    expect(entries.filter((e) => e.wallet !== admin.address && e.wallet !== admin2.address)).toEqual([]);
  });

  it('audits an admin call whose client left before the answer, as client_closed (issue 31 finding 3)', async () => {
    const { id } = await database.db.one<{ id: string }>("SELECT id FROM dead_letters WHERE signature = 'sigA'");
    const path = `/admin/dead-letters/${id}/retry`;
    const port = Number(new URL(api).port);
    // No indexer settles the retry here: the API waits for it (up to 5 s), and the client goes first.
    const socket = net.connect({ port, host: '127.0.0.1' });
    await new Promise((r) => socket.once('connect', r));
    const headers = Object.entries(walletHeaders(admin, `POST ${path}`)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`POST /api/v1${path} HTTP/1.1\r\nhost: localhost\r\ncontent-length: 0\r\n${headers}\r\n`);
    // Once the API has recorded the request, the action is done: the client leaves.
    await waitFor('the retry request recorded', async () => (await database.db.oneOrNone('SELECT 1 FROM dead_letter_retries WHERE dead_letter_id = $1', [id])) ?? undefined);
    socket.destroy();
    const row = await waitFor('the call audited', async () =>
      (await database.db.oneOrNone<Json>('SELECT wallet, action, status, outcome FROM admin_audit WHERE action = $1', [`POST /api/v1${path}`])) ?? undefined,
    );
    expect(row).toEqual({ wallet: admin.address, action: `POST /api/v1${path}`, status: 499, outcome: 'client_closed' });
  });

  it('manages the tenant\'s API keys: list without secrets, create (key shown once), revoke once', async () => {
    const tenant = testTenant();
    const base = await start({ TENANT_ID: tenant });
    const post = (path: string, body?: unknown, key = admin) =>
      call(`${base}/api/v1${path}`, {
        method: 'POST',
        headers: { ...walletHeaders(key, `POST ${path}`), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    expect((await get(base, '/admin/api-keys')).body).toEqual({ data: { apiKeys: [] } });

    const made = await post('/admin/api-keys', { plan: 'pro', label: 'partner A' });
    expect([made.status, made.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const { key, keyId } = made.body.data.apiKey;
    expect(made.body.data.apiKey).toMatchObject({ plan: 'pro', label: 'partner A', revokedAt: null });
    expect(key).toMatch(new RegExp(`^mik_${keyId}_`));
    const keys = createApiKeyStore(database.db);
    expect(await keys.lookup(tenant, key)).toEqual({ keyId, plan: 'pro' });
    // Another tenant's key is not listed, and not revocable from here.
    const other = await keys.create({ tenant: testTenant(), plan: 'basic' });

    const listed = await get(base, '/admin/api-keys');
    expect(listed.body.data.apiKeys).toEqual([{ keyId, plan: 'pro', label: 'partner A', createdAt: expect.any(String), revokedAt: null }]);
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(18));

    for (const bad of [{ plan: 'gold' }, {}, { plan: 'pro', label: '' }, { plan: 'pro', owner: 'x' }]) {
      const r = await post('/admin/api-keys', bad);
      expect([JSON.stringify(bad), r.status, r.body.code]).toEqual([JSON.stringify(bad), 400, 'VALIDATION_ERROR']);
    }
    expect((await post('/admin/api-keys', { plan: 'free' }, stranger)).status).toBe(403);

    const revoked = await post(`/admin/api-keys/${keyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.apiKey).toMatchObject({ keyId, revokedAt: expect.any(String) });
    expect(await keys.lookup(tenant, key)).toBeNull();
    expect((await post(`/admin/api-keys/${keyId}/revoke`)).body.code).toBe('CONFLICT');
    expect((await post(`/admin/api-keys/${other.info.keyId}/revoke`)).body.code).toBe('NOT_FOUND');
    expect((await post('/admin/api-keys/nothex/revoke')).status).toBe(400);
    const audit = await waitFor('audit of key calls', async () => {
      const entries = (await get(base, '/admin/audit?limit=100')).body.data.entries as Json[];
      return entries.some((e) => e.action === `POST /api/v1/admin/api-keys/${keyId}/revoke` && e.status === 409) ? entries : undefined;
    });
    expect(audit.find((e) => e.action === 'POST /api/v1/admin/api-keys' && e.status === 200)).toMatchObject({ wallet: admin.address, outcome: 'ok' });
  });

  it('spends the sensitive tier per admin wallet', async () => {
    const fresh = wallet();
    const t2 = await start({ RATE_LIMIT_SENSITIVE_MAX: '2', ADMIN_WALLETS: fresh.address });
    expect((await get(t2, '/admin/indexer', fresh)).status).toBe(200);
    expect((await get(t2, '/admin/indexer', fresh)).status).toBe(200);
    const limited = await get(t2, '/admin/indexer', fresh);
    expect([limited.status, limited.body.code]).toEqual([429, 'RATE_LIMITED']);
  });
});
