import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { edgeOf } from '../../local/tenant/edge-config';
import { startEdge, type RunningEdge } from '../../local/tenant/edge-nginx';
import { ROUTE } from '../support/edge-route';

/**
 * The harness's edge (local/tenant/edge-nginx.ts): Debian's nginx configured from an HTTPRoute,
 * judged by what a client sees. Two upstreams stand in for API pods; one can go silent (it
 * accepts connections and never answers, as a stopped process's socket does).
 */

const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
const close = (server: http.Server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));

/** One request with a chosen Host, on a connection of its own. */
function get(url: string, p: string, opts: { host?: string; headers?: Record<string, string>; method?: string } = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: p, method: opts.method ?? 'GET', agent: false, headers: { host: opts.host ?? 'alpha.example', ...opts.headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Raw requests on one socket, one after the other: each answer's head, or how the socket ended. */
function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  let ended: string | undefined;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  socket.on('data', (d) => ((buffer += d.toString()), wake()));
  socket.on('close', () => ((ended ??= 'closed'), wake()));
  socket.on('error', (err: NodeJS.ErrnoException) => ((ended = err.code ?? 'error'), wake()));
  return {
    async get(p: string): Promise<{ head: string } | { ended: string }> {
      buffer = '';
      socket.write(`GET ${p} HTTP/1.1\r\nHost: alpha.example\r\n\r\n`);
      for (;;) {
        const at = buffer.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(buffer.slice(0, at));
        if (at >= 0 && length && buffer.length >= at + 4 + Number(length[1])) return { head: buffer.slice(0, at).toLowerCase() };
        if (ended) return { ended };
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    destroy: () => socket.destroy(),
  };
}

describe('the harness edge: real nginx configured from an HTTPRoute', () => {
  const route = structuredClone(ROUTE);
  // Short timeouts, so a silent upstream costs this test a second.
  route.spec.rules![0]!.timeouts = { request: '2s', backendRequest: '1s' };
  let dir: string;
  const upstreams: { server: http.Server; port: number; silent: boolean; seen: http.IncomingHttpHeaders[]; ready: boolean }[] = [];
  let edge: RunningEdge;
  const address = (u: (typeof upstreams)[number]) => `127.0.0.1:${u.port}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'mi-edge-'));
    for (let i = 0; i < 2; i++) {
      const u = { server: http.createServer(), port: 0, silent: false, seen: [] as http.IncomingHttpHeaders[], ready: true };
      u.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
        if (u.silent) return;
        u.seen.push(req.headers);
        if (req.url === '/api/draining') return void res.writeHead(200, { connection: 'close', 'content-length': 2 }).end('ok');
        if (req.url === '/api/partial') {
          res.writeHead(200, { 'content-length': 100 });
          res.write('partial');
          return void setImmediate(() => req.socket.destroy());
        }
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 10 }).end(`upstream ${i}`);
      });
      // A WebSocket echo on /ws that can go silent too.
      const wss = new WebSocketServer({ server: u.server, path: '/ws' });
      wss.on('connection', (ws) => ws.on('message', (m) => !u.silent && ws.send(m.toString())));
      u.port = await listen(u.server);
      upstreams.push(u);
    }
    edge = await startEdge({
      edge: edgeOf([route], { idleTimeoutSeconds: 1 }),
      dir: path.join(dir, 'edge'),
      host: '127.0.0.1',
      port: 0,
      endpoints: () => upstreams.filter((u) => u.ready).map(address),
      aliases: ['127.0.0.1'],
    });
  });
  afterAll(async () => {
    await edge?.stop();
    for (const u of upstreams) await close(u.server);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the route\'s hostname (and the address alias), 404 for any other Host, and never passes the country header on', async () => {
    expect((await get(edge.url, '/api/v1/markets', { headers: { 'cf-ipcountry': 'CH' } })).body).toMatch(/^upstream [01]$/);
    expect((await get(edge.url, '/ready', { host: `127.0.0.1:${new URL(edge.url).port}` })).status).toBe(200);
    expect((await get(edge.url, '/api/v1/markets', { host: 'other.example' })).status).toBe(404);
    // No rule for /elsewhere: nginx has no location for it.
    expect((await get(edge.url, '/elsewhere')).status).toBe(404);
    const seen = upstreams.flatMap((u) => u.seen).filter((h) => h['x-forwarded-host'] === 'alpha.example');
    expect(seen).toHaveLength(1);
    expect(seen.every((h) => h['cf-ipcountry'] === undefined && h['x-forwarded-for'] === '127.0.0.1' && h.host === 'alpha.example')).toBe(true);
  });

  it('sends an idempotent read on to the other endpoint after backendRequest when one is silent; a POST is not sent twice', async () => {
    upstreams[0]!.silent = true;
    try {
      const before = edge.requests().length;
      const reads = await Promise.all([1, 2, 3, 4].map(() => get(edge.url, '/api/v1/markets')));
      expect(reads.map((r) => r.body)).toEqual(['upstream 1', 'upstream 1', 'upstream 1', 'upstream 1']);
      const post = await get(edge.url, '/api/tx', { method: 'POST' });
      expect([200, 504]).toContain(post.status);
      const logged = edge.requests().slice(before);
      const postLogged = logged.find((r) => r.method === 'POST')!;
      expect(postLogged.upstreams).toHaveLength(1);
      expect(post.status).toBe(postLogged.upstreams[0] === address(upstreams[0]!) ? 504 : 200);
      expect(logged.some((r) => r.method === 'GET' && r.upstreams.length === 2 && r.upstreams[0] === address(upstreams[0]!))).toBe(true);
    } finally {
      upstreams[0]!.silent = false;
    }
  });

  it('follows readiness: an upstream of the ready endpoints, reloaded on each change; none ready is 503', async () => {
    for (const u of upstreams) u.ready = false;
    await edge.refresh();
    expect((await get(edge.url, '/api/v1/markets')).status).toBe(503);
    upstreams[1]!.ready = true;
    await edge.refresh();
    const after = await Promise.all([1, 2, 3].map(() => get(edge.url, '/api/v1/markets')));
    expect(after.map((r) => r.body)).toEqual(['upstream 1', 'upstream 1', 'upstream 1']);
    upstreams[0]!.ready = true;
    await edge.refresh();
  });

  it('upgrades /ws and closes a WebSocket whose upstream has been silent for the idle timeout', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${new URL(edge.url).port}/ws`, { headers: { host: 'alpha.example' } });
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    const echoed = new Promise<string>((resolve) => ws.once('message', (m) => resolve(m.toString())));
    ws.send('hello');
    expect(await echoed).toBe('hello');
    for (const u of upstreams) u.silent = true;
    try {
      const closed = await new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      // nginx ends both connections; the client sees the TCP connection go, with no close frame.
      expect(closed).toBe(1006);
    } finally {
      for (const u of upstreams) u.silent = false;
    }
  });

  it("keeps the client's connection across an upstream's Connection: close; closes it when an upstream fails mid-body", async () => {
    const client = rawClient(Number(new URL(edge.url).port));
    try {
      const first = await client.get('/api/draining');
      expect(first).toEqual({ head: expect.stringContaining('200 ok') });
      expect((first as { head: string }).head).not.toContain('connection: close');
      expect(await client.get('/api/v1/markets')).toEqual({ head: expect.stringContaining('200 ok') });
      expect(await client.get('/api/partial')).toEqual({ ended: expect.any(String) });
    } finally {
      client.destroy();
    }
  });
});
