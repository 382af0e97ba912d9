import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { freePort } from './free-port';
import { waitFor } from './tables';

/** A user to check readiness as, for a server whose default user is off (an ACL file in `args`). */
export interface RedisAuth {
  username: string;
  password: string;
}

/** A redis-server process of the test's own (a temp dir, a free loopback port, no persistence). */
export interface RedisProcess {
  port: number;
  url: string;
  /** Stops the process (SIGTERM; it saves nothing) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills it (SIGKILL, no goodbye) and waits for it to exit: a crash. */
  kill(): Promise<void>;
  /** Kills it and starts it again on the same port. */
  restart(): Promise<void>;
  /** Starts it again on the same port (after stop): empty, or as it was with `persist`. */
  start(): Promise<void>;
  /** Stops it for good and deletes its directory. */
  close(): Promise<void>;
}

async function untilPong(port: number, what: string, auth?: RedisAuth): Promise<void> {
  await waitFor(what, async () => {
    // disconnectTimeout: a probe whose connection was refused has a socket that already closed,
    // and ioredis's disconnect waits for a 'close' that never comes, holding a ref'd 2 s timer
    // (Jest then has to force its worker to exit).
    const c = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 50, ...auth });
    c.on('error', () => {});
    try {
      await c.connect();
      return (await c.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      c.disconnect();
    }
  }, 20_000);
}

/** Fails at once, with what to do, when a Redis binary is missing (scripts/ensure-services.sh installs them). */
function requireBinary(name: 'redis-server' | 'redis-cli'): void {
  const r = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`${name} is not installed: install Redis (apt-get install redis-server) or run scripts/ensure-services.sh`);
}

function launch(args: readonly string[], dir: string, persist = false): ChildProcess {
  const durability = persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  // Later arguments win: `args` may override any of these.
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--save', '', ...durability, '--dir', dir, ...args], { stdio: 'ignore' });
  // Reported by the readiness wait that follows (it times out): a missing binary was checked first.
  child.on('error', () => {});
  return child;
}

async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/**
 * A standalone redis-server the test can stop, kill and start (the shared one at 6379 is never
 * touched). With `persist`, an append-only file (fsync per write) keeps its data across a
 * restart, as a production Redis with persistence does; `args` are added last (they win).
 */
export async function startRedisServer(opts: { persist?: boolean; args?: readonly string[]; auth?: RedisAuth } = {}): Promise<RedisProcess> {
  requireBinary('redis-server');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mi-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const proc: RedisProcess = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = launch(['--port', String(port), ...(opts.args ?? [])], dir, opts.persist);
      await untilPong(port, `redis-server on ${port}`, opts.auth);
    },
    async stop() {
      await stopChild(child);
    },
    async kill() {
      await stopChild(child, 'SIGKILL');
    },
    async restart() {
      await stopChild(child, 'SIGKILL');
      await proc.start();
    },
    async close() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await proc.start();
  return proc;
}

export interface RedisCluster {
  /** `redis+cluster://` URL listing every master (the REDIS_URL form of D-92). */
  url: string;
  ports: number[];
  close(): Promise<void>;
}

/**
 * A local Redis Cluster of `masters` masters without replicas: redis-server in cluster mode on
 * free loopback ports, joined with `redis-cli --cluster create`, ready once every node reports
 * `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  requireBinary('redis-server');
  requireBinary('redis-cli');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mi-redis-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const close = async () => {
    await Promise.all(children.map((c) => stopChild(c)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus listens on port + 10000.
      let port = await freePort(10_000);
      while (ports.includes(port)) port = await freePort(10_000);
      ports.push(port);
      children.push(
        launch(['--port', String(port), '--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '5000'], dir),
      );
    }
    await Promise.all(ports.map((p) => untilPong(p, `cluster node ${p}`)));
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const p of ports) {
      await waitFor(`cluster_state:ok on ${p}`, async () => {
        const c = new Redis(p, '127.0.0.1', { maxRetriesPerRequest: 0 });
        try {
          return /cluster_state:ok/.test(await c.cluster('INFO'));
        } finally {
          c.disconnect();
        }
      }, 30_000);
    }
    return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, close };
  } catch (err) {
    await close();
    throw err;
  }
}
