import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

/**
 * A tenant's highly available PostgreSQL on this machine, as CloudNativePG runs one on
 * Kubernetes (which cannot run here): Patroni 3 managing PostgreSQL 15 instances on loopback,
 * its leader lease in etcd 3.4, and HAProxy 2.6 with a `rw` front (the instance Patroni's REST
 * API answers `/primary` with 200: CNPG's `<cluster>-rw` Service) and a `ro` front (those that
 * answer `/replica`: `<cluster>-ro`). The packages are Debian's (`scripts/ensure-services.sh`
 * installs them); every process runs as an unprivileged user (`postgres` when started as root),
 * as PostgreSQL refuses root.
 *
 * Synchronous replication as CNPG renders `postgresql.synchronous` with its default
 * `dataDurability: required`: Patroni's `synchronous_mode_strict`, so a commit returns only once
 * a standby has it, and one standby is always the synchronous one. Asynchronous when asked.
 */

export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';

export interface HaNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
}

export interface HaPostgres {
  /** `postgres://…` through HAProxy's `rw` front (the primary) and `ro` front (the replicas), to `database`. */
  rwUrl(database?: string): string;
  roUrl(database?: string): string;
  nodes: HaNode[];
  /** The member holding Patroni's leader key, as the cluster says. */
  leader(): Promise<string | undefined>;
  /** Patroni's view: each member's role (`leader`, `sync_standby`, `replica`) and state. */
  members(): Promise<{ name: string; role: string; state: string; lag?: number | string }[]>;
  /** Waits until a leader runs and `replicas` members stream from it. */
  healthy(replicas: number, timeoutMs?: number): Promise<void>;
  /** A node gone: its Patroni, its postmaster and every backend SIGKILLed at once. */
  kill(name: string): void;
  /** A killed node back: its Patroni started again on its data (it rejoins as a replica, rewound if need be). */
  restart(name: string): void;
  ttlSeconds: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The unprivileged user the processes run as: ourselves, or `postgres` when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

export async function startHaPostgres(opts: { instances?: number; synchronous?: boolean; ttlSeconds?: number; log?: (line: string) => void } = {}): Promise<HaPostgres> {
  const instances = opts.instances ?? 3;
  const ttl = opts.ttlSeconds ?? 10;
  const synchronous = opts.synchronous ?? true;
  const user = runAs();
  const dir = mkdtempSync(path.join(tmpdir(), 'mi-ha-pg-'));
  const own = (p: string) => user && chownSync(p, user.uid, user.gid);
  own(dir);
  const procs: { name: string; child: ChildProcess }[] = [];
  const logs = path.join(dir, 'logs');
  mkdirSync(logs);
  own(logs);
  const start = (name: string, cmd: string, args: string[]) => {
    const out = path.join(logs, `${name}.log`);
    writeFileSync(out, '');
    own(out);
    const fd = openSync(out, 'a');
    // Its own process group: a kill takes the node's whole tree (Patroni, postmaster, backends).
    const child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', fd, fd], detached: true, ...(user ?? {}), env: { ...process.env, HOME: dir, PATH: `${PG_BIN_DIR}:${process.env.PATH}` } });
    child.unref();
    procs.push({ name, child });
    return child;
  };

  const [etcdClient, etcdPeer, rwPort, roPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const etcdDir = path.join(dir, 'etcd');
  start('etcd', 'etcd', [
    '--name', 'e0', '--data-dir', etcdDir,
    '--listen-client-urls', `http://127.0.0.1:${etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`,
    '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`,
    '--initial-cluster', `e0=http://127.0.0.1:${etcdPeer}`, '--log-level', 'warn',
  ]);

  const nodes: HaNode[] = [];
  const configs = new Map<string, string>();
  for (let i = 0; i < instances; i++) {
    const name = `pg${i}`;
    const [pgPort, restPort] = [await freePort(), await freePort()];
    const nodeDir = path.join(dir, name);
    mkdirSync(nodeDir, { mode: 0o700 });
    own(nodeDir);
    const node = { name, pgPort, restPort, dataDir: path.join(nodeDir, 'data') };
    nodes.push(node);
    const config = {
      scope: 'tenant-db',
      name,
      restapi: { listen: `127.0.0.1:${restPort}`, connect_address: `127.0.0.1:${restPort}` },
      etcd3: { hosts: [`127.0.0.1:${etcdClient}`] },
      bootstrap: {
        dcs: {
          ttl,
          loop_wait: 1,
          retry_timeout: Math.max(2, Math.floor(ttl / 2) - 1),
          maximum_lag_on_failover: 16 * 1024 * 1024,
          synchronous_mode: synchronous,
          synchronous_mode_strict: synchronous,
          postgresql: {
            use_pg_rewind: true,
            parameters: { wal_level: 'replica', hot_standby: 'on', max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: '256MB', max_connections: 200, shared_buffers: '32MB', fsync: 'on', hot_standby_feedback: 'on' },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
        pg_hba: ['host replication replicator 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 trust', 'local all all trust'],
      },
      postgresql: {
        listen: `127.0.0.1:${pgPort}`,
        connect_address: `127.0.0.1:${pgPort}`,
        data_dir: node.dataDir,
        bin_dir: PG_BIN_DIR,
        pgpass: path.join(nodeDir, 'pgpass'),
        authentication: { superuser: { username: 'postgres', password: 'postgres' }, replication: { username: 'replicator', password: 'replicator' } },
        parameters: { unix_socket_directories: nodeDir },
      },
    };
    const file = path.join(nodeDir, 'patroni.yml');
    writeFileSync(file, stringify(config));
    own(file);
    start(name, 'patroni', [file]);
    configs.set(name, file);
  }

  const servers = nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n');
  const haproxyCfg = `global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
  default-server inter 500ms fastinter 250ms fall 2 rise 1 on-marked-down shutdown-sessions
listen rw
  bind 127.0.0.1:${rwPort}
  option httpchk GET /primary
  http-check expect status 200
${servers}
listen ro
  bind 127.0.0.1:${roPort}
  balance roundrobin
  option httpchk GET /replica
  http-check expect status 200
${servers}
`;
  const cfgFile = path.join(dir, 'haproxy.cfg');
  writeFileSync(cfgFile, haproxyCfg);
  own(cfgFile);
  start('haproxy', 'haproxy', ['-f', cfgFile, '-db']);

  const url = (port: number, database = 'postgres') => `postgres://postgres:postgres@127.0.0.1:${port}/${database}`;
  const members = async () => {
    for (const n of nodes) {
      try {
        const r = await fetch(`http://127.0.0.1:${n.restPort}/cluster`, { signal: AbortSignal.timeout(1_000) });
        const body = (await r.json()) as { members?: { name: string; role: string; state: string; lag?: number | string }[] };
        if (body.members) return body.members;
      } catch {
        // That member is down or starting: ask the next.
      }
    }
    return [];
  };
  const ha: HaPostgres = {
    rwUrl: (database) => url(rwPort, database),
    roUrl: (database) => url(roPort, database),
    nodes,
    ttlSeconds: ttl,
    members,
    async leader() {
      return (await members()).find((m) => m.role === 'leader' && m.state === 'running')?.name;
    },
    async healthy(replicas, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = await members();
        const leader = m.find((x) => x.role === 'leader' && x.state === 'running');
        const streaming = m.filter((x) => x.role !== 'leader' && (x.state === 'streaming' || x.state === 'running'));
        const syncOk = !synchronous || replicas === 0 || m.some((x) => x.role === 'sync_standby');
        if (leader && syncOk && streaming.length >= replicas && (await frontAnswers(rwPort, false)) && (replicas === 0 || (await frontAnswers(roPort, true)))) return;
        if (Date.now() > deadline) throw new Error(`the HA PostgreSQL did not become healthy in ${timeoutMs} ms: ${JSON.stringify(m)}; logs in ${logs}`);
        await sleep(250);
      }
    },
    kill(name) {
      const p = procs.find((x) => x.name === name);
      if (!p?.child.pid) throw new Error(`no node ${name}`);
      process.kill(-p.child.pid, 'SIGKILL');
      // A postmaster that Patroni started in a session of its own (it does not) would survive the group kill.
      const node = nodes.find((n) => n.name === name)!;
      try {
        const pid = Number(readFileSync(path.join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        if (pid > 0) process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone with its group.
      }
    },
    restart(name) {
      const file = configs.get(name);
      if (!file) throw new Error(`no node ${name}`);
      const i = procs.findIndex((x) => x.name === name);
      if (i >= 0) procs.splice(i, 1);
      start(name, 'patroni', [file]);
    },
    async stop() {
      for (const p of procs.reverse()) {
        try {
          if (p.child.pid && p.child.exitCode === null) process.kill(-p.child.pid, 'SIGKILL');
        } catch {
          // Gone already (a killed node).
        }
      }
      for (const n of nodes) {
        try {
          const pid = Number(readFileSync(path.join(n.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {
          // No postmaster left.
        }
      }
      await sleep(200);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  opts.log?.(`HA PostgreSQL: ${instances} instances, rw ${ha.rwUrl()}, ro ${ha.roUrl()}, files in ${dir}`);
  return ha;
}

/** Whether a front hands out a session on a server in the expected recovery state. */
async function frontAnswers(port: number, recovery: boolean): Promise<boolean> {
  const { Client } = await import('pg');
  const c = new Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1_000 });
  c.on('error', () => {});
  try {
    await c.connect();
    const { rows } = await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    return rows[0]?.r === recovery;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}
