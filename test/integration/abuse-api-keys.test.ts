import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { createApiKeyStore } from '../../core/api-keys';
import { planOf } from '../../core/plans';
import { KEY_REVOKED_REASON, WS_SUBPROTOCOL } from '../../server/ws/protocol';
import { testWallet, walletHeaders } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { testTenant } from '../support/redis';
import { ASYNCAPI_LEGACY_PATH, asyncApiSchemaCheck, assertMatchesLegacyAsyncApi, refusedUpgrade, WsClient } from '../support/ws';

const assertRefusal = asyncApiSchemaCheck(ASYNCAPI_LEGACY_PATH, 'UpgradeRefusal');
const randomKey = () => `mik_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

/** Issue 31 findings 4 and 5 on `/ws` of the appendix variant: bad keys, revoked keys, where the key travels (D-188…D-191). */
describe('API keys on /ws of a legacy tenant (two replicas, real Redis and PostgreSQL)', () => {
  const sockets: WebSocket[] = [];
  // The clients' sockets go before the servers close.
  afterAll(() => sockets.forEach((s) => s.terminate()));
  const suite = apiSuite();
  const tenant = testTenant();
  const admin = testWallet();
  let http: string[] = [];

  const replica = async () =>
    (await suite.startProcess({ TENANT_ID: tenant, API_VARIANT: 'legacy', ADMIN_WALLETS: admin.address, RATE_LIMIT_SENSITIVE_MAX: '1000' }, suite.db, { busCarriesIndexer: true, docs: false })).url;
  const wsUrl = (base: string) => `${base.replace(/^http:/, 'ws:')}/ws`;
  /** A connection with `key` in `X-API-Key` (or offered as a subprotocol), checked against asyncapi-legacy.yaml. */
  async function connect(base: string, key: string, how: 'header' | 'subprotocol' = 'header') {
    const c =
      how === 'header'
        ? await WsClient.open(wsUrl(base), { headers: { 'x-api-key': key } }, assertMatchesLegacyAsyncApi)
        : await new Promise<WebSocket>((resolve, reject) => {
            const ws = new WebSocket(wsUrl(base), [WS_SUBPROTOCOL, `apikey.${key}`]);
            ws.once('open', () => resolve(ws));
            ws.once('error', reject);
          });
    sockets.push(c instanceof WsClient ? c.ws : c);
    return c;
  }
  const closed = (ws: WebSocket) => new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));

  beforeAll(async () => {
    http = [await replica(), await replica()];
  });

  it('upgrades with bad keys spend the address\'s keyless budget, then 429 without a lookup', async () => {
    const free = planOf('free').requestsPerMinute;
    const statuses: number[] = [];
    for (let i = 0; i < free + 20; i++) {
      const r = await refusedUpgrade(`${wsUrl(http[i % 2]!)}?apiKey=${randomKey()}`, { localAddress: '127.0.0.44' });
      assertRefusal(r.body);
      statuses.push(r.status);
      if (r.status === 429) expect([r.body.error.code, Number(r.headers['retry-after']) > 0]).toEqual(['RATE_LIMITED', true]);
    }
    // Counted across both replicas: the budget is the address's, in Redis.
    expect(statuses).toEqual([...Array(free).fill(401), ...Array(20).fill(429)]);
  });

  it('closes a revoked key\'s open connections with 1008 on every replica: revoked by an admin call, or in the database alone', async () => {
    const keys = createApiKeyStore(suite.db);
    const { key, info } = await keys.create({ tenant, plan: 'pro' });
    const onA = (await connect(http[0]!, key)) as WsClient;
    const onB = (await connect(http[1]!, key)) as WsClient;
    const [closedA, closedB] = [onA.closed, onB.closed];
    // Revoked through replica A's admin route: B hears it on the bus.
    const path = `/admin/api-keys/${info.keyId}/revoke`;
    const r = await fetch(`${http[0]}/api/v1${path}`, { method: 'POST', headers: walletHeaders(admin, `POST ${path}`) });
    expect(r.status).toBe(200);
    expect(await closedA).toEqual({ code: 1008, reason: KEY_REVOKED_REASON });
    expect(await closedB).toEqual({ code: 1008, reason: KEY_REVOKED_REASON });
    // Neither replica serves it any more, new upgrades included.
    for (const base of http) {
      expect((await fetch(`${base}/api/v1/markets`, { headers: { 'x-api-key': key } })).status).toBe(401);
      expect((await refusedUpgrade(`${wsUrl(base)}?apiKey=${key}`)).status).toBe(401);
    }

    // Revoked in the database only (`npm run keys -- revoke`): each replica's check of the keys it holds finds it.
    const second = await keys.create({ tenant, plan: 'basic' });
    const held = [(await connect(http[0]!, second.key)) as WsClient, (await connect(http[1]!, second.key)) as WsClient];
    await keys.revoke({ tenant, keyId: second.info.keyId });
    expect(await Promise.all(held.map((c) => c.closed))).toEqual([
      { code: 1008, reason: KEY_REVOKED_REASON },
      { code: 1008, reason: KEY_REVOKED_REASON },
    ]);
  });

  it('takes the key as a subprotocol only beside market-indexer, so the key is never echoed back; revocation closes it too', async () => {
    const keys = createApiKeyStore(suite.db);
    const { key, info } = await keys.create({ tenant, plan: 'basic' });
    const ws = (await connect(http[0]!, key, 'subprotocol')) as WebSocket;
    expect(ws.protocol).toBe(WS_SUBPROTOCOL);
    const gone = closed(ws);
    await keys.revoke({ tenant, keyId: info.keyId });
    expect(await gone).toEqual({ code: 1008, reason: KEY_REVOKED_REASON });
    const alone = await refusedUpgrade(wsUrl(http[0]!), { protocols: [`apikey.${key}`] });
    assertRefusal(alone.body);
    expect(alone).toMatchObject({ status: 400, body: { success: false, error: { code: 'VALIDATION_ERROR', message: expect.stringContaining(WS_SUBPROTOCOL) } } });
  });
});
