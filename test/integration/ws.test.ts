import type { Redis } from '../../core/redis/client';
import type { Common } from '../../core/common';
import { createDatabase, type Database } from '../../core/db';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog, type ChannelUpdate, type UpdateLog } from '../../core/redis/updates';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { WS_ERRORS } from '../../server/ws/protocol';
import type { WsServer } from '../../server/ws/server';
import { call, testWallet, walletHeaders, type Json } from '../support/api';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';
import { insertMarkets } from '../support/markets';
import { waitFor } from '../support/tables';
import { refusedUpgrade, WsClient, wsAuth } from '../support/ws';

const wallet = testWallet;

interface Api {
  url: string;
  wsUrl: string;
  ws: WsServer;
  common: Common;
  close(): Promise<void>;
}

describe('WebSocket /ws (real sockets, real Redis)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const redisClients: Redis[] = [];
  const apis: Api[] = [];
  let tenant: string;
  let indexer: UpdateLog;

  /** An API process's HTTP server with `/ws` (the production wiring), sharing Redis with the others of the tenant. */
  async function startApi(env: Record<string, string> = {}): Promise<Api> {
    const common = testCommon({ TENANT_ID: tenant, API_PORT: '0', API_HOST: '127.0.0.1', ...env });
    const redis = connectRedis();
    redisClients.push(redis);
    const live = createLiveStores(common, redis);
    common.shutdown.add('live', () => live.close());
    const { port, ws } = await startApiServer({ common, db: database.db, redis, live, busCarriesIndexer: true });
    const api: Api = {
      url: `http://127.0.0.1:${port}`,
      wsUrl: `ws://127.0.0.1:${port}/ws`,
      ws,
      common,
      close: () => common.shutdown.run('test over'),
    };
    apis.push(api);
    return api;
  }

  const publish = (channel: string, data: Json, slot = 1) => indexer.append([{ channel, slot, data }]);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    // The markets the tests subscribe to, and one above them: a marketId below the newest that no
    // market has is refused (D-352).
    await insertMarkets(database.db, [...Array.from({ length: 21 }, (_, i) => i), 42, 1_000_000]);
  });
  beforeEach(() => {
    tenant = testTenant();
    const r = connectRedis();
    redisClients.push(r);
    indexer = createRedisUpdateLog({ redis: r, keys: createKeys(tenant) });
  });
  afterEach(async () => {
    await Promise.all(apis.splice(0).map((a) => a.close()));
  });
  afterAll(async () => {
    redisClients.forEach((r) => r.disconnect());
    await database.close();
    await tdb.drop();
  });

  it('greets with connected, answers subscribe and unsubscribe, and delivers updates with seq and slot', async () => {
    const api = await startApi();
    const c = await WsClient.open(api.wsUrl);
    const hello = await c.next();
    expect(hello).toEqual({ type: 'connected', message: expect.any(String), timestamp: expect.any(Number) });
    expect(Math.abs(hello.timestamp - Date.now())).toBeLessThan(60_000); // Unix milliseconds, not seconds

    expect(await c.request({ type: 'subscribe', channel: 'orderbook:7' })).toEqual({ type: 'subscribed', channel: 'orderbook:7' });
    expect(await c.request({ type: 'subscribe', channel: 'market:7' })).toEqual({ type: 'subscribed', channel: 'market:7' });
    await publish('orderbook:7', { marketId: '7', bestBid: 4900, bestAsk: 5100 }, 120);
    await publish('market:7', { marketId: '7', field: 'state', value: 2 }, 121);
    const book = await c.next((m) => m.type === 'update');
    expect(book).toEqual({ type: 'update', channel: 'orderbook:7', data: { marketId: '7', bestBid: 4900, bestAsk: 5100 }, timestamp: expect.any(Number), seq: 1, slot: 120 });
    expect(await c.next((m) => m.type === 'update')).toMatchObject({ channel: 'market:7', data: { marketId: '7', field: 'state', value: 2 }, seq: 1, slot: 121 });

    expect(await c.request({ type: 'unsubscribe', channel: 'orderbook:7' })).toEqual({ type: 'unsubscribed', channel: 'orderbook:7' });
    // Delivery order on one Redis connection is publish order: the market update proves the
    // order-book update published before it was not delivered.
    await publish('orderbook:7', { marketId: '7', bestBid: 4950, bestAsk: 5100 });
    await publish('market:7', { marketId: '7', field: 'state', value: 3 });
    expect(await c.next((m) => m.type === 'update')).toMatchObject({ channel: 'market:7', seq: 2, data: { value: 3 } });
    expect(c.received.filter((m) => m.channel === 'orderbook:7' && m.type === 'update')).toHaveLength(1);
    // Re-subscribing to a held channel answers again without a second subscription.
    expect(await c.request({ type: 'subscribe', channel: 'market:7' })).toEqual({ type: 'subscribed', channel: 'market:7' });
    expect(api.ws.channelCount()).toBe(1);
    c.assertValid();
    await c.close();
  });

  it('answers every error message of spec 7.3 word for word and keeps the connection open', async () => {
    const api = await startApi();
    const c = await WsClient.open(api.wsUrl);
    await c.next();
    expect(await c.request('{not json')).toEqual({ type: 'error', message: 'Invalid JSON' });
    expect(await c.request('{"type":"ping"}')).toEqual({ type: 'error', message: 'Unknown message type' });
    expect(await c.request('[1,2]')).toEqual({ type: 'error', message: 'Unknown message type' });
    expect(await c.request('{"type":"subscribe","channel":"trades:1"}')).toEqual({
      type: 'error',
      message: 'Invalid channel: trades:1. Must start with: market:, orderbook:, positions:',
    });
    expect(await c.request('{"type":"subscribe"}')).toEqual({ type: 'error', message: 'Invalid channel: . Must start with: market:, orderbook:, positions:' });
    expect(await c.request('{"type":"subscribe","channel":"market:abc"}')).toEqual({
      type: 'error',
      message: 'Invalid channel: market:abc. Expected market:{marketId}, orderbook:{marketId} or positions:{wallet}',
    });
    expect(await c.request('{"type":"subscribe","channel":"market:1","resumeFrom":-1}')).toEqual({ type: 'error', message: WS_ERRORS.invalidResumeFrom });
    // A market the store has not indexed (a row id or an address's number is not a marketId).
    for (const channel of ['orderbook:424242', 'market:424242']) {
      expect(await c.request({ type: 'subscribe', channel })).toEqual({
        type: 'error',
        message: 'Unknown market: 424242. A channel takes the marketId of a market GET /api/v1/markets lists',
      });
    }
    for (let i = 0; i < 20; i++) expect((await c.request({ type: 'subscribe', channel: `market:${i}` })).type).toBe('subscribed');
    expect(await c.request({ type: 'subscribe', channel: 'market:20' })).toEqual({ type: 'error', message: 'Maximum subscriptions (20) reached' });
    // Leaving one channel frees a slot.
    await c.request({ type: 'unsubscribe', channel: 'market:0' });
    expect(await c.request({ type: 'subscribe', channel: 'market:20' })).toEqual({ type: 'subscribed', channel: 'market:20' });
    const refusals = await api.common.metrics.wsRefusals.get();
    expect(refusals.values.find((v) => v.labels.reason === 'max_subscriptions')?.value).toBe(1);
    c.assertValid();
    await c.close();
  });

  it('exports each documented limit as configured beside the live value closest to it', async () => {
    const api = await startApi({ WS_MAX_CLIENTS: '7', WS_MAX_CONNECTIONS_PER_IP: '5', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '40' });
    const clients = await Promise.all([0, 1, 2].map(() => WsClient.open(api.wsUrl)));
    await Promise.all(clients.map((c) => c.next()));
    for (let i = 0; i < 4; i++) await clients[0]!.request({ type: 'subscribe', channel: `market:${i}` });
    await clients[1]!.request({ type: 'subscribe', channel: 'market:0' });
    for (let i = 0; i < 3; i++) expect((await call(`${api.url}/api/v1/status`)).status).toBe(200);
    const text = await api.common.metrics.registry.metrics();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
    const sample = (name: string, label: string) => Number(new RegExp(`^${name}\\{[^}]*${label}[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(sample('service_limit_configured', 'limit="ws_clients"')).toBe(7);
    expect(sample('service_limit_configured', 'limit="ws_connections_per_ip"')).toBe(5);
    expect(sample('service_limit_configured', 'limit="ws_subscriptions_per_client"')).toBe(20);
    expect(sample('service_limit_configured', 'limit="ws_send_buffer_bytes"')).toBe(1024 * 1024);
    expect(sample('service_limit_configured', 'limit="ws_consecutive_skips"')).toBe(50);
    expect(value('service_ws_connections')).toBe(3);
    expect(value('service_ws_ip_connections_max')).toBe(3);
    expect(value('service_ws_client_subscriptions_max')).toBe(4);
    expect(value('service_ws_consecutive_skips_max')).toBe(0);
    expect(value('service_ws_send_buffer_max_bytes')).toBe(0);
    expect(sample('service_rate_limit_max_requests', 'tier="public_read"')).toBe(40);
    expect(sample('service_rate_limit_max_requests', 'tier="authenticated"')).toBe(200);
    expect(sample('service_rate_limit_window_seconds', 'tier="public_read"')).toBe(60);
    expect(sample('service_rate_limit_peak_requests', 'tier="public_read"')).toBe(3);
    expect(sample('service_rate_limit_peak_requests', 'tier="sensitive"')).toBe(0);
    // Every refusal reason and tier has its counter from the start.
    expect(sample('service_ws_refusals_total', 'reason="per_ip"')).toBe(0);
    expect(sample('service_rate_limit_exceeded_total', 'tier="compliance"')).toBe(0);
    await clients[2]!.close();
    await waitFor('close seen', async () => api.ws.clientCount() === 2);
    expect(Number(/^service_ws_ip_connections_max(?:\{[^}]*\})? (\S+)$/m.exec(await api.common.metrics.registry.metrics())?.[1])).toBe(2);
    await Promise.all(clients.slice(0, 2).map((c) => c.close()));
  });

  it('authenticates position channels per spec 6.1 and shares nonces with HTTP', async () => {
    const api = await startApi();
    const me = wallet();
    const other = wallet();
    const channel = `positions:${me.address}`;
    const action = `WS_SUBSCRIBE ${channel}`;
    const c = await WsClient.open(api.wsUrl);
    await c.next();
    const sub = (auth?: Json, ch = channel) => c.request({ type: 'subscribe', channel: ch, ...(auth ? { auth } : {}) });

    expect(await sub()).toEqual({ type: 'error', message: 'Authentication required for position channels' });
    expect(await sub(wsAuth(other, `WS_SUBSCRIBE ${channel}`))).toEqual({ type: 'error', message: 'Channel wallet does not match authenticated wallet' });
    expect(await sub(wsAuth(me, action, { forge: true }))).toEqual({ type: 'error', message: 'Invalid wallet signature' });
    expect(await sub(wsAuth(me, action, { timestamp: Math.floor(Date.now() / 1000) - 301 }))).toEqual({ type: 'error', message: 'Authentication expired' });
    expect(await sub(wsAuth(me, action, { timestamp: Math.floor(Date.now() / 1000) + 60 }))).toEqual({ type: 'error', message: 'Authentication expired' });
    // A generic session-level action, or one for another channel, is rejected (rule 2).
    expect(await sub(wsAuth(me, 'WS_SUBSCRIBE'))).toEqual({ type: 'error', message: `Authentication action must be WS_SUBSCRIBE ${channel}` });
    expect(await sub(wsAuth(me, `WS_SUBSCRIBE positions:${other.address}`))).toEqual({ type: 'error', message: `Authentication action must be WS_SUBSCRIBE ${channel}` });
    expect(await sub(wsAuth(me, action, { domain: 'evil.example' }))).toEqual({ type: 'error', message: WS_ERRORS.domainMismatch });

    // A nonce used over HTTP on this replica cannot be used over WebSocket, and vice versa.
    const httpNonce = 'nonce-shared-0001';
    const r = await call(`${api.url}/api/v1/positions`, { headers: walletHeaders(me, 'GET /positions', { nonce: httpNonce }) });
    expect(r.status).toBe(200);
    expect(await sub(wsAuth(me, action, { nonce: httpNonce }))).toEqual({ type: 'error', message: 'Nonce already used' });

    const ok = wsAuth(me, action, { nonce: 'nonce-ws-0000001' });
    expect(await sub(ok)).toEqual({ type: 'subscribed', channel });
    const replay = await call(`${api.url}/api/v1/positions`, { headers: walletHeaders(me, 'GET /positions', { nonce: 'nonce-ws-0000001' }) });
    expect(replay.status).toBe(401);

    // The same signed auth replayed on a new connection (another replica) is refused.
    const api2 = await startApi();
    const c2 = await WsClient.open(api2.wsUrl);
    await c2.next();
    expect(await c2.request({ type: 'subscribe', channel, auth: ok })).toEqual({ type: 'error', message: 'Nonce already used' });

    await publish(channel, { marketId: '9', owner: me.address, yesShares: '10', noShares: '0' }, 77);
    expect(await c.next((m) => m.type === 'update')).toMatchObject({ channel, data: { owner: me.address, yesShares: '10' }, seq: 1, slot: 77 });
    const failures = await api.common.metrics.wsAuthFailures.get();
    const by = Object.fromEntries(failures.values.map((v) => [v.labels.reason, v.value]));
    expect(by).toMatchObject({ missing: 1, wallet_mismatch: 1, bad_signature: 1, expired: 2, action: 2, domain: 1, nonce: 1 });
    c.assertValid();
    c2.assertValid();
    await Promise.all([c.close(), c2.close()]);
  });

  it('closes with 1009 on a 4,097-byte message and accepts 4,096 bytes', async () => {
    const api = await startApi();
    const c = await WsClient.open(api.wsUrl);
    await c.next();
    const frame = (size: number) => {
      const base = '{"type":"subscribe","channel":"market:1","pad":""}';
      return base.replace('"pad":""', `"pad":"${'x'.repeat(size - base.length)}"`);
    };
    expect(Buffer.byteLength(frame(4096))).toBe(4096);
    expect(await c.request(frame(4096))).toEqual({ type: 'subscribed', channel: 'market:1' });
    c.send(frame(4097));
    expect((await c.closed).code).toBe(1009);
    await waitFor('connection released', async () => api.ws.clientCount() === 0);
    const refusals = await api.common.metrics.wsRefusals.get();
    expect(refusals.values.find((v) => v.labels.reason === 'message_too_big')?.value).toBe(1);
  });

  it('holds one bus subscription per channel in use, dropped when its last subscriber leaves', async () => {
    const api = await startApi();
    const [a, b] = await Promise.all([WsClient.open(api.wsUrl), WsClient.open(api.wsUrl)]);
    await Promise.all([a.next(), b.next()]);
    await a.request({ type: 'subscribe', channel: 'orderbook:1' });
    await b.request({ type: 'subscribe', channel: 'orderbook:1' });
    await b.request({ type: 'subscribe', channel: 'market:1' });
    expect(api.ws.channelCount()).toBe(2);
    await a.request({ type: 'unsubscribe', channel: 'orderbook:1' });
    expect(api.ws.channelCount()).toBe(2);
    await b.close();
    await waitFor('channels released', async () => api.ws.channelCount() === 0);
    // Unsubscribing a channel the client does not hold is answered too.
    expect(await a.request({ type: 'unsubscribe', channel: 'orderbook:1' })).toEqual({ type: 'unsubscribed', channel: 'orderbook:1' });
    const subs = await api.common.metrics.wsSubscriptions.get();
    expect(subs.values[0]?.value).toBe(0);
    await a.close();
  });

  it('skips a paused client and closes it after 50 skips, while a fast client gets every update in order', async () => {
    const api = await startApi();
    const fast = await WsClient.open(api.wsUrl);
    const slow = await WsClient.open(api.wsUrl);
    await Promise.all([fast.next(), slow.next()]);
    const channel = 'orderbook:42';
    await fast.request({ type: 'subscribe', channel });
    await slow.request({ type: 'subscribe', channel });
    // The slow client stops reading: the kernel buffers fill, then the server's send buffer.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const closes = () => api.common.metrics.wsBackpressureCloses.get().then((m) => m.values[0]?.value ?? 0);
    let published = 0;
    while ((await closes()) === 0) {
      const batch: ChannelUpdate[] = [];
      for (let i = 0; i < 500; i++) batch.push({ channel, slot: ++published, data: { marketId: '42', bestBid: 4000 + (published % 1000), bestAsk: 6000 } });
      await indexer.append(batch);
      if (published > 2_000_000) throw new Error('the slow client was never closed');
    }
    // Every update the fast client gets is in order with contiguous seq, none missing.
    const last = await fast.next((m) => m.type === 'update' && m.seq === published, 60_000);
    expect(last.slot).toBe(published);
    const seqs = fast.received.filter((m) => m.type === 'update').map((m) => m.seq as number);
    expect(seqs).toHaveLength(published);
    expect(seqs.every((s, i) => s === i + 1)).toBe(true);
    expect((await api.common.metrics.wsMessagesSkipped.get()).values[0]?.value).toBe(50);
    expect(await closes()).toBe(1);
    // The slow client, reading again, finds a contiguous prefix and then the end of the stream.
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await slow.closed;
    const slowSeqs = slow.received.filter((m) => m.type === 'update').map((m) => m.seq as number);
    expect(slowSeqs.length).toBeLessThan(published);
    expect(slowSeqs.every((s, i) => s === i + 1)).toBe(true);
    fast.assertValid();
    await fast.close();
  }, 120_000);

  it('replays exactly the missed updates on resumeFrom, or says to take a snapshot when they are gone', async () => {
    const api = await startApi();
    const channel = 'market:5';
    for (let i = 1; i <= 5; i++) await publish(channel, { marketId: '5', field: 'totalTrades', value: i }, 100 + i);
    const c = await WsClient.open(api.wsUrl);
    await c.next();
    c.send({ type: 'subscribe', channel, resumeFrom: 2 });
    expect(await c.next()).toEqual({ type: 'subscribed', channel, resumed: true, replayed: 3, latestSeq: 5 });
    const replayed = [await c.next(), await c.next(), await c.next()];
    expect(replayed.map((m) => [m.seq, m.slot, m.data.value])).toEqual([
      [3, 103, 3],
      [4, 104, 4],
      [5, 105, 5],
    ]);
    await publish(channel, { marketId: '5', field: 'totalTrades', value: 6 }, 106);
    expect(await c.next()).toMatchObject({ type: 'update', seq: 6 });

    // Up to date: nothing to replay.
    const d = await WsClient.open(api.wsUrl);
    await d.next();
    expect(await d.request({ type: 'subscribe', channel, resumeFrom: 6 })).toEqual({ type: 'subscribed', channel, resumed: true, replayed: 0, latestSeq: 6 });
    // A seq the channel never reached (its counter restarted): snapshot.
    const e = await WsClient.open(api.wsUrl);
    await e.next();
    expect(await e.request({ type: 'subscribe', channel, resumeFrom: 99 })).toEqual({
      type: 'subscribed',
      channel,
      resumed: false,
      latestSeq: 6,
      message: 'Missed updates are no longer available: fetch a fresh REST snapshot',
    });
    // Trimmed away: a resume point older than the kept updates.
    const batch: ChannelUpdate[] = [];
    for (let i = 0; i < 1_500; i++) batch.push({ channel, slot: 200 + i, data: { marketId: '5', field: 'totalTrades', value: 7 + i } });
    await indexer.append(batch);
    const f = await WsClient.open(api.wsUrl);
    await f.next();
    expect(await f.request({ type: 'subscribe', channel, resumeFrom: 1 })).toMatchObject({ resumed: false, latestSeq: 1_506 });
    for (const x of [c, d, e, f]) x.assertValid();
    await Promise.all([c, d, e, f].map((x) => x.close()));
  });

  it('refuses upgrades beyond WS_MAX_CLIENTS with 503 and other paths with 404', async () => {
    const api = await startApi({ WS_MAX_CLIENTS: '2' });
    const a = await WsClient.open(api.wsUrl);
    const b = await WsClient.open(api.wsUrl);
    const refused = await refusedUpgrade(api.wsUrl);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: 'WebSocket server is at capacity', code: 'SERVICE_UNAVAILABLE' });
    expect((await refusedUpgrade(api.wsUrl.replace('/ws', '/socket'))).status).toBe(404);
    await a.close();
    await waitFor('slot freed', async () => api.ws.clientCount() === 1);
    const c = await WsClient.open(api.wsUrl);
    await Promise.all([b.close(), c.close()]);
  });

  it('counts connections per client IP across replicas, honouring TRUST_PROXY', async () => {
    const a = await startApi({ WS_MAX_CONNECTIONS_PER_IP: '3' });
    const b = await startApi({ WS_MAX_CONNECTIONS_PER_IP: '3', TRUST_PROXY: 'loopback' });
    const held = [await WsClient.open(a.wsUrl), await WsClient.open(b.wsUrl), await WsClient.open(a.wsUrl)];
    const refused = await refusedUpgrade(b.wsUrl);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toEqual({ error: 'Too many WebSocket connections from this address', code: 'RATE_LIMITED' });
    // Replica A does not trust proxies: a forged X-Forwarded-For buys nothing.
    await expect(WsClient.open(a.wsUrl, { headers: { 'x-forwarded-for': '203.0.113.9' } })).rejects.toThrow('429');
    // Replica B trusts the loopback proxy: the forwarded client has its own quota.
    const proxied = await WsClient.open(b.wsUrl, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    await held[0]!.close();
    const again = await waitFor('lease released', async () => WsClient.open(b.wsUrl).catch(() => undefined));
    await Promise.all([...held.slice(1), proxied, again].map((x) => x.close()));
  });

  it('drops a client that does not answer pings and keeps one that does', async () => {
    const api = await startApi({ WS_PING_INTERVAL_MS: '200' });
    const live = await WsClient.open(api.wsUrl);
    const dead = await WsClient.open(api.wsUrl);
    let pings = 0;
    live.ws.on('ping', () => (pings += 1));
    (dead.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await waitFor('dead client dropped', async () => api.ws.clientCount() === 1);
    await waitFor('three pings answered', async () => pings >= 3);
    expect(live.ws.readyState).toBe(live.ws.OPEN);
    await live.close();
    // Reading again, the dead client finds its connection cut without a close frame. (Left
    // paused, its socket would stay open, its end unread, until the Jest worker ends.)
    (dead.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect((await dead.closed).code).toBe(1006);
  });

  it('closes every socket with 1001 and a reason on shutdown and refuses new upgrades', async () => {
    const api = await startApi();
    const c = await WsClient.open(api.wsUrl);
    await c.next();
    await c.request({ type: 'subscribe', channel: 'market:1' });
    api.ws.refuseNew();
    expect((await refusedUpgrade(api.wsUrl)).status).toBe(503);
    await api.ws.close();
    expect(await c.closed).toEqual({ code: 1001, reason: 'Server shutting down' });
  });
});
