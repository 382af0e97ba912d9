import { connect as tcpConnect, type Socket } from 'node:net';
import Redis from 'ioredis';
import { tenantAclRules, tenantAclUser } from '../../core/redis/acl';
import { createRedis, redisReady, type Redis as AppRedis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { testWallet, walletHeaders } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { testTenant } from '../support/redis';
import { startRedisServer, type RedisProcess } from '../support/redis-server';
import { WsClient } from '../support/ws';

type AclEntry = { reason: string; object: string; username: string };

/**
 * Issue 31's suspicion: tenants sharing one Redis were apart only by key prefix. With a Redis
 * ACL user per tenant (core/redis/acl.ts, D-193) the API and the indexer's publishing work
 * with no denial, and a tenant's credentials reach nothing of another tenant.
 */
describe('one Redis ACL user per tenant (a redis-server of the suite\'s own)', () => {
  const suite = apiSuite();
  let server: RedisProcess;
  let admin: Redis;
  const clients: AppRedis[] = [];
  const [a, b] = [testTenant(), testTenant()];
  const password = (t: string) => `pw-${t}`;
  const urlOf = (t: string) => `redis://${tenantAclUser(t)}:${password(t)}@127.0.0.1:${server.port}`;

  beforeAll(async () => {
    server = await startRedisServer({ args: ['--maxmemory-policy', 'noeviction'] });
    admin = new Redis(server.port, '127.0.0.1');
    // As production would have it: an operator user, the default user off, one user per tenant.
    await admin.call('ACL', 'SETUSER', 'operator', 'on', '>operator-pw', '~*', '&*', '+@all');
    for (const t of [a, b]) await admin.call('ACL', 'SETUSER', tenantAclUser(t), ...tenantAclRules(t), `>${password(t)}`);
    await admin.call('ACL', 'SETUSER', 'default', 'off');
    admin.disconnect();
    admin = new Redis({ port: server.port, host: '127.0.0.1', username: 'operator', password: 'operator-pw' });
  });
  // After the suite's API servers (apiSuite closes them first).
  afterAll(async () => {
    clients.forEach((c) => c.disconnect());
    admin.disconnect();
    await server.close();
  });

  const connect = async (t: string) => {
    const r = createRedis(urlOf(t), { enableAutoPipelining: true });
    r.on('error', () => {});
    clients.push(r);
    await redisReady(r, 5_000);
    return r;
  };
  async function api(t: string) {
    const { port } = await suite.startProcess({ TENANT_ID: t, REDIS_URL: urlOf(t) }, suite.db, { redisUrl: urlOf(t), busCarriesIndexer: true, docs: false });
    return `127.0.0.1:${port}`;
  }
  const aclLog = async () => ((await admin.call('ACL', 'LOG')) as unknown[][]).map((e) => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < e.length; i += 2) o[String(e[i])] = e[i + 1];
    return o as AclEntry;
  });

  it('runs the API (limits, nonces, /ws leases, the bus, the update log) and the indexer\'s publishing with no denial', async () => {
    await admin.call('ACL', 'LOG', 'RESET');
    const [hostA, hostB] = [await api(a), await api(b)];
    const w = testWallet();
    // Rate limits and the nonce store: a signed read is served once, its replay refused.
    const nonce = `acl-${Date.now()}`;
    const signed = () => fetch(`http://${hostA}/api/v1/stats`, { headers: walletHeaders(w, 'GET /stats', { nonce }) });
    const first = await signed();
    expect([first.status, first.headers.get('x-ratelimit-limit')]).toEqual([200, '200']);
    expect(((await (await signed()).json()) as { error: string }).error).toBe('Nonce already used');
    expect((await fetch(`http://${hostA}/api/v1/markets`)).status).toBe(200);
    // /ws: a lease, a subscription on the bus, an update from the indexer's side, a replay from the log.
    const [onA, onB] = [await WsClient.open(`ws://${hostA}/ws`), await WsClient.open(`ws://${hostB}/ws`)];
    for (const c of [onA, onB]) await c.next((m) => m.type === 'connected');
    for (const c of [onA, onB]) expect(await c.request({ type: 'subscribe', channel: 'market:42' })).toEqual({ type: 'subscribed', channel: 'market:42' });
    const indexerA = createRedisUpdateLog({ redis: await connect(a), keys: createKeys(a) });
    await indexerA.append([{ channel: 'market:42', slot: 9, data: { marketId: '42', field: 'state', value: 2 } }]);
    expect(await onA.next((m) => m.type === 'update')).toMatchObject({ channel: 'market:42', slot: 9 });
    const replay = await WsClient.open(`ws://${hostA}/ws`);
    await replay.next((m) => m.type === 'connected');
    expect(await replay.request({ type: 'subscribe', channel: 'market:42', resumeFrom: 0 })).toMatchObject({ type: 'subscribed', resumed: true, replayed: 1 });
    // The work landed in Redis under A's prefix (not in the processes' fallbacks).
    const keysOfA = (await admin.keys(`${createKeys(a).prefix}*`)).map((k) => k.split(':')[2]);
    for (const kind of ['rl', 'nonce', 'nonce-epoch', 'ws', 'st']) expect(keysOfA).toContain(kind);
    // B's client heard nothing of A's market.
    await onB.close();
    expect(onB.received.filter((m) => m.type === 'update')).toEqual([]);
    await Promise.all([onA.close(), replay.close()]);
    expect(await aclLog()).toEqual([]);
  });

  it('refuses a tenant\'s credentials everything of another tenant, and the commands that would reach it', async () => {
    const [ra, sub] = [await connect(a), await connect(a)];
    const other = createKeys(b);
    await admin.set(`${other.prefix}secret`, 'b');
    const denied: [string, () => Promise<unknown>][] = [
      ['GET', () => ra.get(`${other.prefix}secret`)],
      ['SET', () => ra.set(`${other.prefix}x`, '1')],
      ['DEL', () => ra.del(`${other.prefix}secret`)],
      ['EVAL reaching an undeclared key', () => ra.eval(`return redis.call('GET', '${other.prefix}secret')`, 0)],
      ['PUBLISH', () => ra.publish(other.channel('market:42'), 'x')],
      ['SUBSCRIBE', () => sub.subscribe(other.channel('market:42'))],
      ['PSUBSCRIBE', () => sub.psubscribe(other.channel('market:*'))],
      ['SCAN', () => ra.scan('0')],
      ['KEYS', () => ra.keys('*')],
      ['RANDOMKEY', () => ra.randomkey()],
      ['CONFIG GET', () => ra.config('GET', 'requirepass')],
      ['FLUSHALL', () => ra.flushall()],
      ['ACL', () => ra.call('ACL', 'LIST')],
      ['CLIENT KILL', () => ra.call('CLIENT', 'KILL', 'USER', tenantAclUser(b))],
    ];
    for (const [what, attempt] of denied) {
      const got = await attempt().then(
        (v) => `allowed: ${JSON.stringify(v)}`,
        // A script's denial is an error of the script ("can't access"), the rest NOPERM.
        (e: Error) => (/^NOPERM |can't access at least one of the keys/.test(e.message) ? 'denied' : e.message),
      );
      expect([what, got]).toEqual([what, 'denied']);
    }
    expect(await admin.get(`${other.prefix}secret`)).toBe('b');
    expect(new Set((await aclLog()).map((e) => e.username))).toEqual(new Set([tenantAclUser(a)]));
  });

  /** A raw RESP connection as tenant A's user: every byte the server sends it is kept, push messages (RESP3) included. */
  async function rawAs(t: string) {
    const socket: Socket = await new Promise((resolve, reject) => {
      const s = tcpConnect(server.port, '127.0.0.1', () => resolve(s)).on('error', reject);
    });
    let received = '';
    let waiting: { mark: string; resolve: () => void } | undefined;
    socket.on('data', (d) => {
      received += d.toString('latin1');
      if (waiting && received.includes(waiting.mark)) waiting.resolve();
    });
    /** Sends a command, then an ECHO of a fresh mark, and waits for the mark: the command's answer came before it. */
    let n = 0;
    const send = (...args: string[]) => new Promise<string>((resolve) => {
      const mark = `mark-${++n}-${Date.now()}`;
      const from = received.length;
      const encode = (a: string[]) => `*${a.length}\r\n${a.map((x) => `$${Buffer.byteLength(x)}\r\n${x}\r\n`).join('')}`;
      // The answer ends where the ECHO's bulk string (`$<length>\r\n<mark>`) begins.
      waiting = { mark, resolve: () => resolve(received.slice(from, received.lastIndexOf('$', received.indexOf(mark)))) };
      socket.write(encode(args) + encode(['ECHO', mark]));
    });
    return { send, received: () => received, close: () => socket.destroy() };
  }

  it('shows a tenant\'s user none of another tenant\'s key names, channels or clients (issue 41: tracking, PUBSUB, KEYS, SCAN, CLIENT LIST)', async () => {
    const spy = await rawAs(a);
    expect(await spy.send('HELLO', '3', 'AUTH', tenantAclUser(a), password(a))).toContain('proto');
    const attempts = [
      ['CLIENT', 'TRACKING', 'ON', 'BCAST'],
      ['CLIENT', 'TRACKING', 'ON', 'BCAST', 'PREFIX', createKeys(b).prefix],
      ['PUBSUB', 'CHANNELS', '*'],
      ['PUBSUB', 'NUMSUB', createKeys(b).channel('market:42')],
      ['PUBSUB', 'NUMPAT'],
      ['PUBSUB', 'SHARDCHANNELS'],
      ['SCRIPT', 'FLUSH'],
      ['FUNCTION', 'FLUSH'],
      ['FUNCTION', 'LIST'],
      ['DBSIZE'],
    ];
    for (const cmd of attempts) expect([cmd.join(' '), (await spy.send(...cmd)).slice(0, 7)]).toEqual([cmd.join(' '), '-NOPERM']);
    // Another tenant's real traffic: signed requests (nonces, rate counters), /ws (a lease per address, a subscription), live updates.
    const hostB = await api(b);
    const w = testWallet();
    for (const nonce of [`spy-1-${Date.now()}`, `spy-2-${Date.now()}`]) {
      expect((await fetch(`http://${hostB}/api/v1/stats`, { headers: walletHeaders(w, 'GET /stats', { nonce }) })).status).toBe(200);
    }
    const onB = await WsClient.open(`ws://${hostB}/ws`);
    await onB.next((m) => m.type === 'connected');
    await onB.request({ type: 'subscribe', channel: 'market:42' });
    await createRedisUpdateLog({ redis: await connect(b), keys: createKeys(b) }).append([{ channel: 'market:42', slot: 3, data: { marketId: '42', field: 'state', value: 1 } }]);
    await onB.next((m) => m.type === 'update');
    // There was something to see: B's keys and channels exist (as the admin sees them).
    const prefixB = createKeys(b).prefix;
    expect((await admin.keys(`${prefixB}*`)).length).toBeGreaterThan(0);
    expect(((await admin.call('PUBSUB', 'CHANNELS', `${prefixB}*`)) as string[]).length).toBeGreaterThan(0);
    // The listings a spy would try after it: each refused, and nothing received names B.
    for (const cmd of [['KEYS', '*'], ['KEYS', `${prefixB}*`], ['SCAN', '0', 'MATCH', `${prefixB}*`], ['CLIENT', 'LIST'], ['PUBSUB', 'CHANNELS', `${prefixB}*`]]) {
      expect([cmd.join(' '), (await spy.send(...cmd)).slice(0, 7)]).toEqual([cmd.join(' '), '-NOPERM']);
    }
    expect(spy.received()).not.toContain(prefixB);
    expect(spy.received()).not.toContain(tenantAclUser(b));
    // A's own scripts, subscriptions and streams still work on this connection.
    expect(await spy.send('EVAL', "return redis.call('INCR', KEYS[1])", '1', `${createKeys(a).prefix}spy`)).toBe(':1\r\n');
    expect(await spy.send('XADD', `${createKeys(a).prefix}spy-stream`, '*', 'f', 'v')).toMatch(/^\$\d+\r\n\d+-\d+\r\n$/);
    expect(await spy.send('SUBSCRIBE', createKeys(a).channel('market:42'))).toContain('subscribe');
    spy.close();
    await onB.close();
  });
});
