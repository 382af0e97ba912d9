import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { nginxConf, type Edge } from './edge-config';
import { findBinary } from './monitoring';
import { freePort } from './ports';

/**
 * Debian's nginx as the tenant's edge (a Gateway's data plane, as NGINX Gateway Fabric runs it):
 * an unprivileged prefix of its own (`nginx -p <dir> -c <dir>/nginx.conf`, pid, logs and temp
 * files under it), in the foreground as the harness's child, configured by edge-config.ts. Each
 * `refresh()` renders the configuration again from the ready endpoints and, when it changed,
 * reloads nginx (`nginx -s reload`'s signal, SIGHUP) and waits until the new workers answer.
 */

export interface EdgeOptions {
  edge: Edge;
  dir: string;
  host: string;
  /** 0: a free one. */
  port: number;
  /** The ready endpoints (`host:port`) of each of the edge's upstreams, asked at each refresh. */
  endpoints: (upstream: string) => string[];
  /** More names the tenant's servers answer (the address clients reach the edge by). */
  aliases?: string[];
}

/** One request as nginx logged it: when it started, the endpoints it was sent to (retries too). */
export interface EdgeRequest {
  startMs: number;
  ms: number;
  upstreams: string[];
  status: number;
  method: string;
  uri: string;
}

export class EdgeStartError extends Error {
  override name = 'EdgeStartError';
}

export const nginxBinary = () => findBinary(['nginx', '/usr/sbin/nginx'], 'nginx');

/** `nginx -t` on a configuration: the error nginx prints, or undefined when it is valid. */
export function checkConf(prefix: string, conf: string): string | undefined {
  const r = spawnSync(nginxBinary(), ['-t', '-q', '-p', prefix, '-e', path.join(prefix, 'error.log'), '-c', conf], { encoding: 'utf8' });
  return r.status === 0 ? undefined : (r.stderr || r.stdout).trim();
}

const askStatus = (socketPath: string) =>
  new Promise<string | undefined>((resolve) => {
    http
      .get({ socketPath, path: '/generation', agent: false, timeout: 1_000 }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', () => resolve(undefined))
      .on('timeout', function (this: http.ClientRequest) {
        this.destroy();
      });
  });

export async function startEdge(opts: EdgeOptions) {
  const port = opts.port || (await freePort(opts.host));
  const dir = path.resolve(opts.dir);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const paths = { prefix: dir, unavailableSocket: path.join(dir, 'unavailable.sock'), statusSocket: path.join(dir, 'status.sock') };
  const confFile = path.join(dir, 'nginx.conf');
  const accessLog = path.join(dir, 'access.log');
  let generation = 0;
  let written = '';
  const render = () => {
    const upstreams = Object.fromEntries(Object.keys(opts.edge.backends).map((u) => [u, opts.endpoints(u)]));
    return { upstreams, conf: (g: number) => nginxConf(opts.edge, { listen: `${opts.host}:${port}`, upstreams, paths, aliases: opts.aliases ?? [], generation: g, runAsRoot: process.getuid?.() === 0 }) };
  };
  const write = () => {
    const { upstreams, conf } = render();
    const key = JSON.stringify(upstreams);
    if (key === written) return false;
    written = key;
    generation += 1;
    writeFileSync(confFile, conf(generation));
    return true;
  };
  write();
  const invalid = checkConf(dir, confFile);
  if (invalid) throw new EdgeStartError(`nginx refused the edge's configuration (${confFile}): ${invalid}`);

  const log = openSync(path.join(dir, 'nginx.out'), 'a');
  // Its own process group: its workers go with it when the harness kills the group.
  const child: ChildProcess = spawn(nginxBinary(), ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', confFile], { stdio: ['ignore', log, log], detached: true });
  closeSync(log);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  /** The master's children: its worker processes, old ones still finishing their connections included. */
  const workers = () => {
    try {
      return readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const errorLog = () => (existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8').trim().split('\n').slice(-5).join('\n') : '');

  /** Resolves once the workers answering are those of the configuration last written. */
  const applied = async (timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new EdgeStartError(`nginx exited with code ${child.exitCode}: ${errorLog()}`);
      if ((await askStatus(paths.statusSocket)) === String(generation)) return;
      if (Date.now() > deadline) throw new EdgeStartError(`nginx did not apply configuration ${generation} within ${timeoutMs / 1000} s: ${errorLog()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    await applied();
  } catch (err) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw err;
  }

  /**
   * Resolves once each of the workers of before a reload has begun its graceful shutdown: it logs
   * that, then closes its listening sockets before handling anything else, so from then on only
   * the new workers take connections in (an old one finishes those it has, /ws ones too).
   */
  const retired = async (old: number[], timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = readFileSync(path.join(dir, 'error.log'), 'utf8');
      if (old.every((pid) => !existsSync(`/proc/${pid}`) || text.includes(`${pid}#${pid}: gracefully shutting down`))) return;
      if (Date.now() > deadline) throw new EdgeStartError(`nginx's workers ${old.join(', ')} did not shut down within ${timeoutMs / 1000} s: ${errorLog()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  let reloading = Promise.resolve();
  /** Renders the configuration from the endpoints as they are now; reloads nginx when it changed. */
  const refresh = () => {
    reloading = reloading.then(async () => {
      if (child.exitCode !== null || !write()) return;
      const old = workers();
      child.kill('SIGHUP');
      await applied();
      await retired(old);
    });
    return reloading;
  };

  const requests = (): EdgeRequest[] =>
    (existsSync(accessLog) ? readFileSync(accessLog, 'utf8') : '')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const m = /^(\S+) (\S+) "([^"]*)" (\d+) (\S+) (.*)$/.exec(line)!;
        const ms = Math.round(Number(m[2]) * 1000);
        const upstreams = m[3] === '-' ? [] : m[3]!.split(/\s*[,:]\s+/);
        return { startMs: Math.round(Number(m[1]) * 1000) - ms, ms, upstreams, status: Number(m[4]), method: m[5]!, uri: m[6]! };
      });

  return {
    url: `http://${opts.host}:${port}`,
    pid: child.pid!,
    child,
    workers,
    dir,
    refresh,
    requests,
    /** Tries beyond the first, over every request so far (nginx's proxy_next_upstream). */
    retries: () => requests().reduce((n, r) => n + Math.max(0, r.upstreams.length - 1), 0),
    /** Requests sent to an endpoint's address so far, retries included. */
    sentTo: (host: string) => requests().reduce((n, r) => n + r.upstreams.filter((u) => u.startsWith(`${host}:`)).length, 0),
    stop: async () => {
      await reloading.catch(() => {});
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export type RunningEdge = Awaited<ReturnType<typeof startEdge>>;
