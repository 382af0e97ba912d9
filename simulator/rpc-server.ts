import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RawTransaction } from '../core/events';
import bs58 from 'bs58';
import type { MarketSimulator } from './engine';
import { RpcSubmitError } from './submit';

type Fault = 'http500' | 'rate_limit' | 'rpc_error' | 'hang' | 'null_transaction';

/**
 * The simulated chain behind a real Solana JSON-RPC surface: HTTP `getSlot`,
 * `getSignaturesForAddress`, `getTransaction`, `getHealth`, `getLatestBlockhash`,
 * `getBlockHeight`, `sendTransaction` (signed transactions of the program's instructions run
 * in the next block), the oracle feeds' Pyth price accounts through `getAccountInfo` and
 * `getMultipleAccounts` (base64), and WebSocket `logsSubscribe`
 * with `logsNotification`s, in the shapes a Solana RPC node returns. Tests drive the chain
 * with `advance`, inject faults, and can withhold notifications to force a gap that only
 * the indexer's signature poll closes.
 */
export function createSimulatorRpcServer(opts: { simulator: MarketSimulator }) {
  const { simulator } = opts;
  const ordered: { signature: string; slot: number; err: unknown; blockTime: number | null }[] = [];
  const bySignature = new Map<string, RawTransaction>();
  const faults: Fault[] = [];
  const calls = new Map<string, number>();
  const subscribers = new Map<WebSocket, number>();
  let nextSubscription = 1;
  let withhold: (signature: string) => boolean = () => false;

  const rpcError = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });

  /** An account in the RPC's `base64` encoding, or null. */
  function accountValue(address: string) {
    const a = simulator.oracleAccount(address);
    if (!a) return null;
    return { data: [Buffer.from(a.data).toString('base64'), 'base64'], executable: false, lamports: a.lamports, owner: a.owner, rentEpoch: 18446744073709551615, space: a.data.length };
  }

  function handle(req: { id?: unknown; method?: string; params?: unknown[] }): unknown {
    const { id = null, method, params = [] } = req;
    calls.set(method ?? '', (calls.get(method ?? '') ?? 0) + 1);
    switch (method) {
      case 'getHealth':
        return { jsonrpc: '2.0', id, result: 'ok' };
      case 'getSlot':
        return { jsonrpc: '2.0', id, result: simulator.slot };
      case 'getBlockHeight':
        return { jsonrpc: '2.0', id, result: simulator.slot };
      case 'getLatestBlockhash': {
        const { slot, blockhash, lastValidBlockHeight } = simulator.latestBlockhash();
        return { jsonrpc: '2.0', id, result: { context: { slot }, value: { blockhash, lastValidBlockHeight } } };
      }
      case 'sendTransaction': {
        const [wire, cfg = {}] = params as [unknown, { encoding?: string }];
        if (typeof wire !== 'string') return rpcError(id, -32602, 'Invalid params: transaction');
        const encoding = cfg.encoding ?? 'base58';
        if (encoding !== 'base58' && encoding !== 'base64') return rpcError(id, -32602, `unsupported encoding: ${encoding}`);
        try {
          const base64 = encoding === 'base64' ? wire : Buffer.from(bs58.decode(wire)).toString('base64');
          return { jsonrpc: '2.0', id, result: simulator.submit(base64) };
        } catch (err) {
          if (err instanceof RpcSubmitError) return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
          return rpcError(id, -32602, `invalid transaction: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      case 'getSignaturesForAddress': {
        const [address, cfg = {}] = params as [string, { limit?: number; before?: string; until?: string }];
        if (typeof address !== 'string') return rpcError(id, -32602, 'Invalid params: address');
        const limit = cfg.limit ?? 1000;
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return rpcError(id, -32602, 'Invalid limit');
        if (address !== simulator.programId) return { jsonrpc: '2.0', id, result: [] };
        // Newest first, starting below `before`, stopping at (excluding) `until`.
        let i = ordered.length - 1;
        if (cfg.before) {
          const b = ordered.findIndex((o) => o.signature === cfg.before);
          i = b < 0 ? -1 : b - 1;
        }
        const out = [];
        for (; i >= 0 && out.length < limit; i--) {
          const o = ordered[i]!;
          if (o.signature === cfg.until) break;
          out.push({ signature: o.signature, slot: o.slot, err: o.err, memo: null, blockTime: o.blockTime, confirmationStatus: 'confirmed' });
        }
        return { jsonrpc: '2.0', id, result: out };
      }
      case 'getTransaction': {
        const [signature, cfg = {}] = params as [string, { maxSupportedTransactionVersion?: number; encoding?: string }];
        const tx = bySignature.get(signature);
        if (!tx) return { jsonrpc: '2.0', id, result: null };
        if (tx.version === 0 && cfg.maxSupportedTransactionVersion === undefined) {
          return rpcError(id, -32015, 'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
        }
        if (cfg.encoding !== undefined && cfg.encoding !== 'json') return rpcError(id, -32602, `Unsupported encoding ${cfg.encoding} in the simulator`);
        return { jsonrpc: '2.0', id, result: tx };
      }
      case 'getAccountInfo': {
        const [address, cfg = {}] = params as [string, { encoding?: string }];
        if (typeof address !== 'string') return rpcError(id, -32602, 'Invalid params: address');
        if (cfg.encoding !== 'base64') return rpcError(id, -32602, `Unsupported encoding ${cfg.encoding ?? 'binary'} in the simulator`);
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: simulator.slot }, value: accountValue(address) } };
      }
      case 'getMultipleAccounts': {
        const [addresses, cfg = {}] = params as [string[], { encoding?: string }];
        if (!Array.isArray(addresses) || addresses.some((a) => typeof a !== 'string')) return rpcError(id, -32602, 'Invalid params: addresses');
        if (addresses.length > 100) return rpcError(id, -32602, 'Too many inputs provided; max 100');
        if (cfg.encoding !== 'base64') return rpcError(id, -32602, `Unsupported encoding ${cfg.encoding ?? 'binary'} in the simulator`);
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: simulator.slot }, value: addresses.map(accountValue) } };
      }
      default:
        return rpcError(id, -32601, 'Method not found');
    }
  }

  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const fault = faults.shift();
      if (fault === 'hang') return; // never answers: the client's timeout must fire
      if (fault === 'http500') return void res.writeHead(500).end('upstream error');
      if (fault === 'rate_limit') return void res.writeHead(429, { 'retry-after': '1' }).end('Too many requests');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rpcError(null, -32700, 'Parse error')));
      }
      let out: unknown;
      if (fault === 'rpc_error') out = rpcError((body as { id?: unknown }).id ?? null, -32005, 'Node is behind by 42 slots');
      else if (fault === 'null_transaction' && (body as { method?: string }).method === 'getTransaction') out = { jsonrpc: '2.0', id: (body as { id?: unknown }).id ?? null, result: null };
      else out = Array.isArray(body) ? body.map((b) => handle(b as never)) : handle(body as never);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });

  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    ws.on('message', (raw) => {
      let msg: { id?: unknown; method?: string; params?: unknown[] };
      try {
        msg = JSON.parse(raw.toString());
      } catch {
        return ws.send(JSON.stringify(rpcError(null, -32700, 'Parse error')));
      }
      if (msg.method === 'logsSubscribe') {
        const [filter] = (msg.params ?? []) as [{ mentions?: string[] }];
        if (!filter?.mentions?.includes(simulator.programId)) return ws.send(JSON.stringify(rpcError(msg.id, -32602, 'Invalid filter')));
        const sub = nextSubscription++;
        subscribers.set(ws, sub);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: sub }));
      } else {
        ws.send(JSON.stringify(rpcError(msg.id ?? null, -32601, 'Method not found')));
      }
    });
    ws.on('close', () => subscribers.delete(ws));
  });

  return {
    /** Produces `slots` blocks, makes them queryable, and notifies subscribers. */
    advance(slots: number): RawTransaction[] {
      const produced: RawTransaction[] = [];
      for (let i = 0; i < slots; i++) {
        const block = simulator.nextBlock();
        for (const tx of block.transactions) {
          const signature = tx.transaction.signatures[0]!;
          ordered.push({ signature, slot: tx.slot, err: tx.meta?.err ?? null, blockTime: tx.blockTime });
          bySignature.set(signature, tx);
          produced.push(tx);
          if (withhold(signature)) continue;
          for (const [ws, sub] of subscribers) {
            ws.send(
              JSON.stringify({
                jsonrpc: '2.0',
                method: 'logsNotification',
                params: { result: { context: { slot: tx.slot }, value: { signature, err: tx.meta?.err ?? null, logs: tx.meta?.logMessages ?? [] } }, subscription: sub },
              }),
            );
          }
        }
      }
      return produced;
    },
    injectFaults(...f: Fault[]) {
      faults.push(...f);
    },
    /** Injected faults no request has met yet. */
    faultsLeft: () => faults.length,
    withholdNotifications(predicate: (signature: string) => boolean) {
      withhold = predicate;
    },
    callCount: (method: string) => calls.get(method) ?? 0,
    subscriberCount: () => subscribers.size,
    transactions: () => ordered.map((o) => bySignature.get(o.signature)!),
    async listen(port = 0): Promise<{ url: string; wsUrl: string }> {
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      const p = (server.address() as { port: number }).port;
      return { url: `http://127.0.0.1:${p}`, wsUrl: `ws://127.0.0.1:${p}` };
    },
    async close(): Promise<void> {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      const closed = new Promise<void>((r) => server.close(() => r()));
      // Including connections whose request a 'hang' fault never answered.
      server.closeAllConnections();
      await closed;
    },
  };
}

export type SimulatorRpcServer = ReturnType<typeof createSimulatorRpcServer>;
