import http from 'node:http';
import net from 'node:net';
import { tunnelUpgrade } from './tunnel';

/**
 * A Solana RPC provider's faults, between the tenant and its chain: a latency added to every
 * JSON-RPC call (what makes an indexer fall behind the chain, which a frozen indexer cannot show:
 * its own series go stale) and a corrupted transaction (a `getTransaction` answer with one more
 * `Program data:` event that decodes to nothing the program emits, as a provider's bad data
 * would), which the indexer must dead-letter, and a provider's rate limit (HTTP 429 with
 * `Retry-After`, as public RPC providers answer), which the indexer must wait out. WebSocket subscriptions pass through untouched.
 */
export async function startRpcFaultProxy(opts: { upstream: string; host: string }) {
  const target = new URL(opts.upstream);
  let latencyMs = 0;
  // Methods the latency applies to (undefined: every call).
  let slowMethods: Set<string> | undefined;
  let corruptNext = 0;
  let rateLimitedUntil = 0;
  let retryAfterS = 1;
  let refused = 0;
  const corrupted: string[] = [];

  /** An event of our program whose discriminator is no event's: the indexer's `unknown_discriminator`. */
  const UNKNOWN_EVENT = Buffer.from('00000000000000000102030405060708', 'hex').toString('base64');

  function corrupt(body: string): string {
    const msg = JSON.parse(body) as { result?: { transaction: { signatures: string[] }; meta?: { logMessages?: string[] } } };
    const logs = msg.result?.meta?.logMessages;
    const at = logs?.findIndex((l) => l.startsWith('Program data: ')) ?? -1;
    if (!msg.result || !logs || at < 0) return body;
    logs.splice(at + 1, 0, `Program data: ${UNKNOWN_EVENT}`);
    corruptNext -= 1;
    corrupted.push(msg.result.transaction.signatures[0]!);
    return JSON.stringify(msg);
  }

  /** A request's delay: the latency if it calls a slowed method (any call of a batch). */
  const delayOf = (body: string) => {
    if (!latencyMs || !slowMethods) return latencyMs;
    for (const m of body.matchAll(/"method"\s*:\s*"(\w+)"/g)) if (slowMethods.has(m[1]!)) return latencyMs;
    return 0;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (Date.now() < rateLimitedUntil) {
        refused += 1;
        res.writeHead(429, { 'retry-after': String(retryAfterS), 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: 429, message: 'Too many requests' }, id: null }));
        return;
      }
      setTimeout(() => {
        const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
          const body: Buffer[] = [];
          r.on('data', (c: Buffer) => body.push(c));
          r.on('end', () => {
            let text = Buffer.concat(body).toString();
            const isGetTransaction = chunks.length && /"method"\s*:\s*"getTransaction"/.test(Buffer.concat(chunks).toString());
            if (corruptNext > 0 && isGetTransaction && r.statusCode === 200) text = corrupt(text);
            // The body may have changed: its length is ours, not the chain's framing.
            const { 'transfer-encoding': _framing, ...rest } = r.headers;
            const headers = { ...rest, 'content-length': String(Buffer.byteLength(text)) };
            res.writeHead(r.statusCode ?? 502, headers).end(text);
          });
        });
        up.on('error', () => res.writeHead(502).end());
        up.end(Buffer.concat(chunks));
      }, delayOf(Buffer.concat(chunks).toString()));
    });
  });
  server.on('upgrade', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnelUpgrade(req, client, head, { host: target.hostname, port: Number(target.port) });
  });
  await new Promise<void>((r) => server.listen(0, opts.host, r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://${opts.host}:${port}`,
    wsUrl: `ws://${opts.host}:${port}`,
    /** Every call (or every call of `methods`) waits this long before it reaches the chain. */
    setLatency: (ms: number, methods?: string[]) => {
      latencyMs = ms;
      slowMethods = methods ? new Set(methods) : undefined;
    },
    /** The next `n` transactions fetched get one undecodable event more. */
    corruptTransactions: (n = 1) => void (corruptNext += n),
    /** Every JSON-RPC call for the next `ms` is refused with HTTP 429 and `Retry-After: retryAfter` seconds. */
    rateLimit: (ms: number, retryAfter = 1) => {
      rateLimitedUntil = Date.now() + ms;
      retryAfterS = retryAfter;
    },
    /** JSON-RPC calls refused with 429 so far. */
    refused: () => refused,
    /** Signatures of the transactions corrupted so far. */
    corrupted: () => [...corrupted],
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export type RpcFaultProxy = Awaited<ReturnType<typeof startRpcFaultProxy>>;
