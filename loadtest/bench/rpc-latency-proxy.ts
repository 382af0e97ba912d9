import http from 'node:http';
import type net from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/** Absolute milliseconds, comparable across the bench's processes. */
export const nowMs = () => performance.timeOrigin + performance.now();

/**
 * A provider's latency in front of the simulated chain's JSON-RPC, recording what passes: the
 * bench's view of two stage boundaries without touching the indexer. Every HTTP call waits
 * half the latency on its way in and half on its way out (a round trip of `latencyMs`);
 * every WebSocket message from the chain (a `logsNotification`) waits `latencyMs` before the
 * subscriber gets it. Records when each notification went out and when each `getTransaction`
 * was answered, by signature (batch requests included), and counts calls per method.
 */
export async function startLatencyProxy(opts: { upstream: string; upstreamWs: string; latencyMs: number; host?: string }) {
  const host = opts.host ?? '127.0.0.1';
  const target = new URL(opts.upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const half = opts.latencyMs / 2;
  const notified = new Map<string, number>();
  const answered = new Map<string, number>();
  const calls = new Map<string, number>();
  let recording = false;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let sigs: string[] = [];
      try {
        const parsed = JSON.parse(body.toString()) as { method?: string; params?: unknown[] } | { method?: string; params?: unknown[] }[];
        for (const r of Array.isArray(parsed) ? parsed : [parsed]) {
          calls.set(r.method ?? '', (calls.get(r.method ?? '') ?? 0) + 1);
          if (r.method === 'getTransaction' && typeof r.params?.[0] === 'string') sigs.push(r.params[0]);
        }
      } catch {
        sigs = [];
      }
      setTimeout(() => {
        const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
          const out: Buffer[] = [];
          r.on('data', (c: Buffer) => out.push(c));
          r.on('end', () =>
            setTimeout(() => {
              res.writeHead(r.statusCode ?? 502, r.headers).end(Buffer.concat(out));
              if (recording) for (const s of sigs) if (!answered.has(s)) answered.set(s, nowMs());
            }, half),
          );
        });
        up.on('error', () => res.writeHead(502).end());
        up.end(body);
      }, half);
    });
  });

  // WebSocket: terminated here and opened again upstream, so each message can be delayed and seen.
  const wss = new WebSocketServer({ server });
  wss.on('connection', (client) => {
    const upstream = new WebSocket(opts.upstreamWs);
    const early: WebSocket.RawData[] = [];
    upstream.on('open', () => early.splice(0).forEach((m) => upstream.send(m)));
    client.on('message', (m) => (upstream.readyState === WebSocket.OPEN ? upstream.send(m) : early.push(m)));
    upstream.on('message', (m: Buffer) => {
      const text = m.toString();
      setTimeout(() => {
        if (client.readyState !== WebSocket.OPEN) return;
        client.send(text);
        if (!recording || !text.includes('"logsNotification"')) return;
        const sig = (JSON.parse(text) as { params?: { result?: { value?: { signature?: string } } } }).params?.result?.value?.signature;
        if (sig && !notified.has(sig)) notified.set(sig, nowMs());
      }, opts.latencyMs);
    });
    const done = () => {
      client.terminate();
      upstream.terminate();
    };
    for (const s of [client, upstream]) {
      s.on('error', done);
      s.on('close', done);
    }
  });

  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    /** Starts (or stops) recording boundaries, clearing what an earlier phase recorded. */
    record(on: boolean) {
      recording = on;
      if (on) {
        notified.clear();
        answered.clear();
        calls.clear();
      }
    },
    /** When the subscriber was sent the notification of `signature`. */
    notifiedAt: (signature: string) => notified.get(signature),
    /** When the first `getTransaction` of `signature` was answered. */
    answeredAt: (signature: string) => answered.get(signature),
    calls: (method: string) => calls.get(method) ?? 0,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}

export type LatencyProxy = Awaited<ReturnType<typeof startLatencyProxy>>;
