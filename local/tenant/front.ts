import http from 'node:http';
import net from 'node:net';
import { tunnelUpgrade } from './tunnel';

/**
 * What sits in front of pods. A Service front is kube-proxy: each TCP connection to the
 * Service's address goes to one ready endpoint, round robin; endpoints that are not ready get
 * no new connections, and established ones are left alone. The ingress front is
 * ingress-nginx's behaviour for the API: each HTTP request goes to a ready endpoint; a request
 * that fails before any answer (connection refused or reset, or no answer within the read
 * timeout) is sent to the next endpoint when it is idempotent (`proxy_next_upstream error
 * timeout`, up to `proxy-next-upstream-tries`), and the failing endpoint gets nothing for 10 s
 * (`max_fails=1 fail_timeout=10s`); WebSocket upgrades are tunnelled to one endpoint. Like nginx,
 * it keeps its own connections with clients (75 s idle, ingress-nginx's `keep-alive`) and passes no
 * hop-by-hop header on: an upstream's `Connection: close` while it drains, or its `Keep-Alive:
 * timeout=75`, says nothing of the client's connection to the ingress. An upstream that fails in
 * the middle of a body closes the client's connection (nginx cannot finish the response either).
 */

export interface Endpoint {
  host: string;
  port: number;
  ready: () => boolean;
}

export interface ServiceFront {
  url: string;
  close(): Promise<void>;
}

function roundRobin(endpoints: () => Endpoint[], skip: (e: Endpoint) => boolean = () => false) {
  let next = 0;
  return (): Endpoint | undefined => {
    const ready = endpoints().filter((e) => e.ready() && !skip(e));
    if (!ready.length) return undefined;
    return ready[next++ % ready.length];
  };
}

const listen = (server: net.Server, host: string, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });

const closeServer = (server: net.Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    (server as http.Server).closeAllConnections?.();
  });

/** kube-proxy for one Service port: `host:port` to the ready endpoints. */
export async function startServiceFront(opts: { host: string; port: number; endpoints: () => Endpoint[] }): Promise<ServiceFront> {
  const pick = roundRobin(opts.endpoints);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const e = pick();
    if (!e) return void client.destroy();
    const upstream = net.connect(e.port, e.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await listen(server, opts.host, opts.port);
  return {
    url: `${opts.host}:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    },
  };
}

export interface IngressOptions {
  host: string;
  port: number;
  endpoints: () => Endpoint[];
  /** `nginx.ingress.kubernetes.io/proxy-read-timeout`, seconds (ingress-nginx's default: 60). */
  readTimeoutSeconds: number;
  /** `nginx.ingress.kubernetes.io/proxy-next-upstream-tries` (default 3). */
  tries: number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const FAIL_TIMEOUT_MS = 10_000;
/** ingress-nginx's `keep-alive` (nginx `keepalive_timeout`) for client connections. */
export const INGRESS_KEEP_ALIVE_MS = 75_000;
/** Headers of one connection (RFC 9110 §7.6.1), which a proxy does not forward. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const endToEnd = (headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));

/** The ingress: the API's public front, with the retries and passive health of ingress-nginx. */
export async function startIngressFront(opts: IngressOptions): Promise<ServiceFront & { retries: () => number; sentTo: (host: string) => number }> {
  const failedUntil = new Map<Endpoint, number>();
  const pick = roundRobin(opts.endpoints, (e) => (failedUntil.get(e) ?? 0) > Date.now());
  let retries = 0;
  const sent = new Map<string, number>();
  const agent = new http.Agent({ keepAlive: true });

  const server = http.createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => void forward(req, res, Buffer.concat(body), 1));
  });
  server.keepAliveTimeout = INGRESS_KEEP_ALIVE_MS;
  server.headersTimeout = INGRESS_KEEP_ALIVE_MS + 1_000;

  async function forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, attempt: number): Promise<void> {
    const e = pick();
    if (!e) return void res.writeHead(503, { 'content-type': 'text/plain' }).end('no ready endpoint\n');
    sent.set(e.host, (sent.get(e.host) ?? 0) + 1);
    const headers = { ...endToEnd(req.headers), 'x-forwarded-for': [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', '), 'x-forwarded-proto': 'http' };
    const up = http.request({ host: e.host, port: e.port, method: req.method, path: req.url, headers, agent, timeout: opts.readTimeoutSeconds * 1000 });
    let answered = false;
    const retryOrFail = (why: string) => {
      if (answered) return;
      answered = true;
      up.destroy();
      failedUntil.set(e, Date.now() + FAIL_TIMEOUT_MS);
      if (IDEMPOTENT.has(req.method ?? '') && attempt < opts.tries) {
        retries += 1;
        return void forward(req, res, body, attempt + 1);
      }
      if (!res.headersSent) res.writeHead(why === 'timeout' ? 504 : 502, { 'content-type': 'text/plain' }).end(`${why}\n`);
    };
    up.on('timeout', () => retryOrFail('timeout'));
    up.on('error', () => retryOrFail('upstream error'));
    up.on('response', (r) => {
      answered = true;
      res.writeHead(r.statusCode ?? 502, endToEnd(r.headers));
      r.on('close', () => !r.complete && res.destroy());
      r.pipe(res);
    });
    up.end(body);
  }

  // WebSocket (and any upgrade): the raw request to one endpoint, then bytes both ways.
  server.on('upgrade', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const e = pick();
    if (!e) return void client.end('HTTP/1.1 503 Service Unavailable\r\n\r\n');
    tunnelUpgrade(req, client, head, e, { 'X-Forwarded-For': client.remoteAddress ?? '' });
  });

  const port = await listen(server, opts.host, opts.port);
  return {
    url: `http://${opts.host}:${port}`,
    retries: () => retries,
    /** Requests sent to an endpoint's address so far (retries included). */
    sentTo: (host: string) => sent.get(host) ?? 0,
    close: async () => {
      agent.destroy();
      await closeServer(server);
    },
  };
}
