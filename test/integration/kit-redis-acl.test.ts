import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { tenantAclRules, tenantAclUser } from '../../core/redis/acl';
import { createRedis, redisReady } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { checkRedisRequirements } from '../../core/redis/requirements';
import { bookChannels, updatesOf } from '../faults/live';
import { testWallet, walletHeaders } from '../support/api';
import { bashBlocks, checkoutOf, commandsOf, runCommand } from '../support/doc-commands';
import { parseManifests, ROOT, type Manifest } from '../support/kit';
import { renderedDevRedis } from '../support/kit-redis';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { startRedisCluster, startRedisServer, type RedisCluster, type RedisProcess } from '../support/redis-server';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';

// The dev Redis as the kit renders it (its arguments, its ACL file, the tenant's REDIS_URL from
// the dev Secret), run by a real redis-server: the tenant's real API and indexer processes work
// under their user with nothing denied but CONFIG GET, so the API's check of the requirements degrades to one warn
// (D-193), another tenant's keys are refused; and the user `npm run redis-acl` prints for a Redis
// the kit does not run is accepted by redis-cli and fenced the same way (D-231).
jest.setTimeout(120_000);

type Entry = { child: ChildProcess; port: Promise<number>; out: () => string; exited: Promise<unknown> };

/** A process entry point with the given environment only, its stdout (the JSON log) kept. */
function start(entry: string, args: string[], env: Record<string, string>): Entry {
  let out = '';
  const child = fork(path.join(ROOT, entry), args, { cwd: ROOT, execArgv: ['--import', 'tsx'], env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number }) => m?.type === 'listening' && m.port && resolve(m.port));
    child.once('exit', (code) => reject(new Error(`${entry} exited (${code}) before listening: ${out}`)));
  });
  port.catch(() => {});
  return { child, port, out: () => out, exited: new Promise((r) => child.once('exit', r)) };
}

/** Who was refused what, as a Redis node logged it: `<user> <reason> <object> ×<count>`. */
async function aclLog(node: Redis): Promise<string[]> {
  return ((await node.call('ACL', 'LOG')) as unknown[][]).map((e) => {
    const field = (name: string) => String(e[e.indexOf(name) + 1]);
    return `${field('username')} ${field('reason')} ${field('object')} ×${field('count')}`;
  });
}

/** A signed request to the API on `port`, then its replay: the nonce store and the rate limits at work in Redis. */
async function expectReplayRefused(port: number, nonce: string, domain: string): Promise<void> {
  const w = testWallet();
  const signed = () => fetch(`http://127.0.0.1:${port}/api/v1/stats`, { headers: walletHeaders(w, 'GET /stats', { nonce, domain }) });
  expect((await signed()).status).toBe(200);
  expect(((await (await signed()).json()) as { error: string }).error).toBe('Nonce already used');
}

describe("the kit's dev Redis, run as rendered, with the tenant's processes under their own user", () => {
  const tenant = 'demo';
  const objects = synthEnvironment(ENVIRONMENTS.dev!, 'dev').flatMap((f) => parseManifests(f.yaml));
  const rendered = renderedDevRedis(objects, tenant);
  // Signed messages name one of the hosts the edge serves (the rendered PUBLIC_HOSTS).
  const publicHost = () => (settingsOf('market-indexer-api').PUBLIC_HOSTS ?? 'localhost').split(',')[0]!;
  const settingsOf = (name: string) => (objects.find((o) => o.kind === 'ConfigMap' && o.metadata.namespace === `mi-${tenant}` && o.metadata.name === name) as Manifest & { data: Record<string, string> }).data;
  let dir: string;
  let server: RedisProcess;
  let admin: Redis;
  let tdb: TestDatabase;
  const processes: Entry[] = [];
  const clients: Redis[] = [];
  /** The rendered URL, pointed at the test's server. */
  const local = (url: string) => {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(server.port);
    return u.toString();
  };
  const connect = (url: string) => {
    const c = new Redis(url, { maxRetriesPerRequest: 1 });
    c.on('error', () => {});
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kit-redis-acl-'));
    // The container's paths, here: its data folder and the ACL file the Secret mounts.
    writeFileSync(path.join(dir, 'users.acl'), rendered.aclFile);
    const args = rendered.args.slice(1).map((a, i, all) => (all[i - 1] === '--dir' ? dir : a === rendered.aclPath ? path.join(dir, 'users.acl') : a));
    expect(rendered.args[0]).toBe('redis-server');
    server = await startRedisServer({ args, auth: { username: 'admin', password: rendered.adminPassword } });
    admin = connect(`redis://admin:${rendered.adminPassword}@127.0.0.1:${server.port}`);
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    for (const p of processes) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    clients.forEach((c) => c.disconnect());
    await server?.close();
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('meets docs/security.md (noeviction, AOF always, no snapshots), refuses anyone without a user, and its liveness probe passes', async () => {
    expect(await checkRedisRequirements(admin as never)).toEqual({ checked: true, problems: [] });
    const anonymous = connect(`redis://127.0.0.1:${server.port}`);
    await expect(anonymous.get('t:demo:x')).rejects.toThrow(/NOAUTH/);
    // The probe's own command: an unauthenticated PING answered NOAUTH still exits 0 (Redis answered).
    const probe = spawnSync(rendered.liveness[0]!, ['-p', String(server.port), ...rendered.liveness.slice(1)], { encoding: 'utf8' });
    expect([probe.status, probe.stdout.trim()]).toEqual([0, 'NOAUTH Authentication required.']);
  });

  it("runs the tenant's API and indexer (the rendered settings and REDIS_URL) with nothing denied but the API's CONFIG GET, which then says once it cannot check", async () => {
    await admin.call('ACL', 'LOG', 'RESET');
    const stores = { DATABASE_URL: tdb.url, REDIS_URL: local(rendered.redisUrl), RPC_URL: 'http://127.0.0.1:9' };
    const indexer = start('indexer/main.ts', ['--source', 'simulator', '--seed', '41', '--realtime', '--feeds', '1', '--no-progress'], {
      ...settingsOf('market-indexer-indexer'),
      ...stores,
      LOG_LEVEL: 'info',
      INDEXER_PORT: '0',
      API_HOST: '127.0.0.1',
    });
    processes.push(indexer);
    await indexer.port;
    const api = start('server/main.ts', [], { ...settingsOf('market-indexer-api'), ...stores, LOG_LEVEL: 'info', API_PORT: '0', API_HOST: '127.0.0.1' });
    processes.push(api);
    const port = await api.port;
    await expectReplayRefused(port, 'kit-acl-1', publicHost());
    // /ws: a lease, subscriptions on the bus, and the indexer's updates through Redis.
    const ws = await WsClient.open(`ws://127.0.0.1:${port}/ws`);
    try {
      await ws.next((m) => m.type === 'connected');
      const channels = bookChannels(3);
      for (const channel of channels) await ws.request({ type: 'subscribe', channel });
      await waitFor('an update the indexer published', async () => channels.some((c) => updatesOf([ws], c).length > 0), 60_000);
      // The work is in Redis under the tenant's prefix, not in the processes' fallbacks (the lease while the socket is open).
      const keys = (await admin.keys(`${createKeys(tenant).prefix}*`)).map((k) => k.split(':')[2]);
      for (const kind of ['rl', 'nonce', 'ws', 'st']) expect(keys).toContain(kind);
    } finally {
      await ws.close();
    }
    // Nothing the processes do is refused but the API's check of D-104 (CONFIG GET, which would
    // also show requirepass), once when it connected: it then logs one warn, no error (D-193).
    expect(await aclLog(admin)).toEqual([`${tenantAclUser(tenant)} command config|get ×1`]);
    const lines = api.out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number | string; msg: string });
    expect(lines.filter((l) => /Redis refused CONFIG GET/.test(l.msg))).toHaveLength(1);
    expect(lines.filter((l) => /Redis does not meet the requirements/.test(l.msg))).toEqual([]);
    expect(await checkRedisRequirements(connect(local(rendered.redisUrl)) as never)).toEqual({ checked: false, problems: [] });
  });

  it("refuses the tenant's user another tenant's keys and channels and the server's commands", async () => {
    const own = connect(local(rendered.redisUrl));
    const other = createKeys('other');
    await admin.set(`${other.prefix}secret`, 'x');
    const denied = async (attempt: Promise<unknown>) => attempt.then((v) => `allowed ${JSON.stringify(v)}`, (e: Error) => (/^NOPERM/.test(e.message) ? 'NOPERM' : e.message));
    expect(await denied(own.get(`${other.prefix}secret`))).toBe('NOPERM');
    expect(await denied(own.publish(other.channel('market:1'), 'x'))).toBe('NOPERM');
    expect(await denied(own.config('GET', 'requirepass'))).toBe('NOPERM');
    expect(await denied(own.call('ACL', 'LIST'))).toBe('NOPERM');
    expect(await own.set(`${createKeys(tenant).prefix}own`, '1')).toBe('OK');
  });

  it('accepts through redis-cli the user npm run redis-acl prints for another tenant, fenced the same way, with the REDIS_URL it gives', async () => {
    // docs/deploy.md's commands as typed, from a checkout, for tenants "other" and "beta" (its
    // alpha and beta). The liberties: the server's address is this one's, and REDISCLI_AUTH is
    // set as the block's interactive `read` would set it.
    const [print, read, apply, ...more] = commandsOf(bashBlocks(path.join(ROOT, 'docs/deploy.md'), "### The tenant's Redis user")[0]!);
    expect([print, read?.startsWith("read -rsp 'admin password: ' REDISCLI_AUTH"), more]).toEqual([expect.stringMatching(/^npm run -s redis-acl -- --tenant alpha --tenant beta > tenants.acl(\s+#.*)?$/), true, []]);
    const checkout = checkoutOf(ROOT);
    let url: string;
    try {
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir(), REDISCLI_AUTH: rendered.adminPassword };
      const listed = await runCommand(print!.replace('alpha', 'other'), { cwd: checkout.dir, env });
      expect(listed.code).toBe(0);
      const applied = await runCommand(apply!.replace('-h 10.31.0.7', `-h 127.0.0.1 -p ${server.port}`), { cwd: checkout.dir, env });
      expect([applied.code, applied.out.trim().split('\n')]).toEqual([0, ['OK', 'OK']]);
      url = /tenant other: REDIS_URL=(\S+)/.exec(listed.err)![1]!.replace('<host>:<port>', `127.0.0.1:${server.port}`);
    } finally {
      checkout.remove();
    }
    const otherUser = connect(url);
    const [mine, theirs] = [createKeys('other'), createKeys(tenant)];
    expect(await otherUser.set(`${mine.prefix}k`, 'v')).toBe('OK');
    await expect(otherUser.get(`${theirs.prefix}own`)).rejects.toThrow(/^NOPERM/);
    await expect(connect(local(rendered.redisUrl)).get(`${mine.prefix}k`)).rejects.toThrow(/^NOPERM/);
    expect(new URL(url).username).toBe(tenantAclUser('other'));
  });
});

// A Redis Cluster the kit does not run: the user `npm run redis-acl -- --cluster` prints, created
// on every node (ACLs are per node), lets the tenant's API find the slots and work with nothing
// denied but CONFIG GET; the same user without the cluster commands never gets ready.
describe("a tenant's user on a Redis Cluster (npm run redis-acl -- --cluster)", () => {
  const tenant = 'clustered';
  let cluster: RedisCluster;
  let tdb: TestDatabase;
  let api: Entry | undefined;
  const nodes: Redis[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    for (const p of cluster.ports) nodes.push(new Redis(p, '127.0.0.1', { maxRetriesPerRequest: 1 }));
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    if (api) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    nodes.forEach((n) => n.disconnect());
    await cluster?.close();
    await tdb?.drop();
  });

  it('runs the API on every node under the printed user, with nothing denied but CONFIG GET; without --cluster the client never gets ready', async () => {
    // docs/deploy.md's commands for a Cluster, as typed, from a checkout. The liberties: the
    // nodes' addresses are this cluster's, and REDISCLI_AUTH holds the password of an `admin`
    // user on every node (what the section's first block has the user `read`).
    const [print, apply, ...more] = commandsOf(bashBlocks(path.join(ROOT, 'docs/deploy.md'), "### The tenant's Redis user")[1]!);
    expect([print, more]).toEqual([`npm run -s redis-acl -- --tenant alpha --cluster > tenants.acl`, []]);
    for (const n of nodes) await n.call('ACL', 'SETUSER', 'admin', 'on', '>admin-password', '~*', '&*', '+@all');
    const checkout = checkoutOf(ROOT);
    let printed: string;
    try {
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir(), REDISCLI_AUTH: 'admin-password' };
      const listed = await runCommand(print!.replaceAll('alpha', tenant), { cwd: checkout.dir, env });
      expect(listed.code).toBe(0);
      expect(readFileSync(path.join(checkout.dir, 'tenants.acl'), 'utf8')).toContain(' +cluster|slots +cluster|info #');
      const nodeList = apply!.match(/for node in ([^;]+);/)![1]!;
      const applied = await runCommand(apply!.replace(nodeList, cluster.ports.map((p) => `127.0.0.1:${p}`).join(' ')), { cwd: checkout.dir, env });
      expect([applied.code, applied.out.trim().split('\n')]).toEqual([0, cluster.ports.map(() => 'OK')]);
      printed = /REDIS_URL=(\S+)/.exec(listed.err)![1]!;
    } finally {
      checkout.remove();
    }
    expect(printed).toMatch(new RegExp(`^redis\\+cluster://${tenantAclUser(tenant)}:[0-9a-f]{64}@<host>:<port>,<host>:<port>,…$`));
    const url = printed.replace('<host>:<port>,<host>:<port>,…', cluster.ports.map((p) => `127.0.0.1:${p}`).join(','));
    for (const n of nodes) await n.call('ACL', 'LOG', 'RESET');

    api = start('server/main.ts', [], { TENANT_ID: tenant, DATABASE_URL: tdb.url, REDIS_URL: url, RPC_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'info', API_PORT: '0', API_HOST: '127.0.0.1' });
    const port = await api.port;
    await expectReplayRefused(port, 'kit-acl-cluster-1', 'localhost');
    const ws = await WsClient.open(`ws://127.0.0.1:${port}/ws`);
    try {
      await ws.next((m) => m.type === 'connected');
      for (const channel of bookChannels(2)) await ws.request({ type: 'subscribe', channel });
    } finally {
      await ws.close();
    }
    const kinds = new Set<string>();
    for (const n of nodes) for (const k of await n.keys(`${createKeys(tenant).prefix}*`)) kinds.add(k.split(':')[2]!);
    for (const kind of ['rl', 'nonce']) expect([...kinds]).toContain(kind);
    const denied = new Set<string>();
    for (const n of nodes) for (const line of await aclLog(n)) denied.add(line.replace(/ ×\d+$/, ''));
    expect([...denied]).toEqual([`${tenantAclUser(tenant)} command config|get`]);

    // Not vacuous: the rules without the cluster commands, on every node, and the client never gets ready.
    for (const n of nodes) await n.call('ACL', 'SETUSER', 'bare', ...tenantAclRules('bare'), '>bare-password-0000');
    const bare = createRedis(cluster.url.replace('redis+cluster://', 'redis+cluster://bare:bare-password-0000@'));
    bare.on('error', () => {});
    try {
      await expect(redisReady(bare, 3_000)).rejects.toThrow(/not ready/);
    } finally {
      bare.disconnect();
    }
  });
});
