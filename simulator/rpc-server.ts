import http from 'node:http';
import { CHAIN_PATHS } from '../core/constants';
import type { RawTransaction } from '../core/events';
import type { Block, RpcChain } from './chain/types';
import { createRpcProvider, type RpcProviderOptions } from './rpc-provider';
import { serialize } from './rpc-json';
import { createRpcMethods } from './rpc-methods';
import { PortInUseError, readBody, writeJson } from './rpc-http';
import { createRpcLedger } from './rpc-ledger';
import { CHAIN_RPC_LIMITS, classifyBody, parseCall, RPC_CODES, rpcError, type ChainRpcLimits } from './rpc-request';
import { attachChainPubSub } from './rpc-ws';
import { createRpcPool, type NodeView, type RpcPoolOptions } from './rpc-pool';

type Fault = 'http500' | 'rate_limit' | 'rpc_error' | 'hang' | 'null_transaction';

export interface SimulatorRpcOptions {
  /** The chain it serves (`RpcChain`: a `MarketSimulator` is one). */
  simulator: RpcChain;
  /**
   * Slots of history kept for `getSignaturesForAddress` and `getTransaction`, like a pruned
   * RPC node's ledger (older ones are forgotten: null, or absent from the list); unset keeps all.
   * A transaction is about 1.7 KB and a slot holds about 4, so 20,000 slots are about 140 MB.
   */
  historySlots?: number;
  /** `sendTransaction`: the simulator's own preflight by default (a node may wrap it, e.g. to journal). */
  submit?: (base64: string) => string;
  /** `GET /health`: `ok`, or `behind` (503) while a node catches up with the wall clock. */
  health?: () => 'ok' | 'behind';
  /** Behave like a hosted RPC provider: latency, a rate limit, batches refused, random faults (all off unless set). */
  provider?: RpcProviderOptions;
  /** What one client can send or hold (rpc-request.ts); the documented values unless a test shrinks them. */
  limits?: Partial<ChainRpcLimits>;
  /** Serve as a provider's pool of nodes that lag behind each other (rpc-pool.ts, D-460); one node unless set. */
  pool?: RpcPoolOptions;
}

/** The methods counted by `callCount`; any other name shares one counter (a client picks names, the map must not grow with them). */
const METHODS = new Set(['getHealth', 'getSlot', 'getBlockHeight', 'getLatestBlockhash', 'sendTransaction', 'getSignaturesForAddress', 'getTransaction', 'getSignatureStatuses', 'getAccountInfo', 'getMultipleAccounts']);

/**
 * The simulated chain behind a real Solana JSON-RPC surface: HTTP `getSlot`,
 * `getSignaturesForAddress`, `getTransaction`, `getHealth`, `getLatestBlockhash`,
 * `getBlockHeight`, `sendTransaction` (signed transactions of the program's instructions run
 * in the next block), the oracle feeds' Pyth price accounts through `getAccountInfo` and
 * `getMultipleAccounts` (base64), WebSocket `logsSubscribe` with `logsNotification`s, and
 * `GET /health` as a Solana RPC node serves it, in the shapes a Solana RPC node returns.
 * Blocks reach it through `record` (a chain node's clock) or `advance` (tests drive the chain);
 * tests inject faults, and can withhold notifications to force a gap that only the indexer's
 * signature poll closes. With `provider` it answers as a hosted provider does (rpc-provider.ts).
 */
export function createSimulatorRpcServer(opts: SimulatorRpcOptions) {
  const { simulator } = opts;
  const submit = opts.submit ?? ((base64: string) => simulator.submit(base64));
  const ledger = createRpcLedger({ historySlots: opts.historySlots, slot: () => simulator.slot });
  const faults: Fault[] = [];
  const provider = createRpcProvider(opts.provider);
  const pool = createRpcPool(opts.pool ?? {}, () => simulator.slot);
  const calls = new Map<string, number>();
  const limits: ChainRpcLimits = { ...CHAIN_RPC_LIMITS, ...opts.limits };
  const handle = createRpcMethods({ simulator, ledger, submit, provider, withheldBody: (signature) => withholdBody(signature) });
  let withhold: (signature: string) => boolean = () => false;
  let withholdBody: (signature: string) => boolean = () => false;

  /** A produced block: into the ledger, then to every `logsSubscribe` subscriber. */
  function record(block: Block): void {
    for (const tx of block.transactions) {
      const { signature } = ledger.add(tx);
      if (withhold(signature)) continue;
      pubsub.notify((subscription) =>
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'logsNotification',
          params: { result: { context: { slot: tx.slot }, value: { signature, err: tx.meta?.err ?? null, logs: tx.meta?.logMessages ?? [] } }, subscription },
        }),
      );
    }
    ledger.trim();
  }

  /** One request object: its answer, whatever it holds (a handler's bug is -32603, without its details). */
  function dispatch(v: unknown, view: NodeView): unknown {
    const parsed = parseCall(v);
    if (!parsed.ok) return parsed.error;
    const name = METHODS.has(parsed.call.method) ? parsed.call.method : '';
    calls.set(name, (calls.get(name) ?? 0) + 1);
    try {
      return handle(parsed.call, view);
    } catch {
      return rpcError(parsed.call.id, RPC_CODES.internal, 'Internal error');
    }
  }

  /** A parsed body's answer: one call, a batch (each item on its own), or one error for the whole. */
  function answerBody(body: unknown, view: NodeView): unknown {
    const shape = classifyBody(body, limits);
    switch (shape.kind) {
      case 'single':
        return dispatch(body, view);
      case 'batch':
        return shape.items.map((item) => dispatch(item, view));
      case 'error':
        return shape.error;
      default: {
        const never: never = shape;
        throw new Error(`unknown body ${String(never)}`);
      }
    }
  }

  const server = http.createServer((req, res) => {
    // What a Solana RPC node answers on GET /health: `ok`, or `behind` with 503; and the
    // liveness probe's path, answered whenever the process is (CHAIN_PATHS).
    if (req.method === 'GET' && (req.url === CHAIN_PATHS.health || req.url === CHAIN_PATHS.live)) {
      const h = req.url === CHAIN_PATHS.live ? 'ok' : (opts.health?.() ?? 'ok');
      return void res.writeHead(h === 'ok' ? 200 : 503, { 'content-type': 'text/plain' }).end(h);
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    readBody(req, res, limits.maxBodyBytes, (raw) => {
      const fault = faults.shift();
      if (fault === 'hang') return; // never answers: the client's timeout must fire
      if (fault === 'http500') return void res.writeHead(500).end('upstream error');
      // As a provider's 429: no Retry-After (D-474).
      if (fault === 'rate_limit') return void res.writeHead(429).end('Too many requests');
      let body: unknown;
      try {
        body = JSON.parse(raw.toString());
      } catch {
        return writeJson(res, 200, rpcError(null, RPC_CODES.parse, 'Parse error'));
      }
      const verdict = provider.admit(body);
      if (verdict.kind !== 'serve') return provider.answer(res, verdict);
      const single = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown; method?: unknown }) : undefined;
      const id = typeof single?.id === 'string' || typeof single?.id === 'number' ? single.id : null;
      let out: unknown;
      if (fault === 'rpc_error') out = rpcError(id, -32005, 'Node is behind by 42 slots');
      else if (fault === 'null_transaction' && single?.method === 'getTransaction') out = { jsonrpc: '2.0', id, result: null };
      else {
        const first = (Array.isArray(body) ? body[0] : body) as { method?: unknown } | undefined;
        out = answerBody(body, pool.pick(typeof first?.method === 'string' ? first.method : ''));
      }
      provider.answer(res, verdict, serialize(out));
    });
  });
  const pubsub = attachChainPubSub(server, { programId: simulator.programId, limits });

  return {
    /** Produces `slots` blocks, makes them queryable, and notifies subscribers. */
    advance(slots: number): RawTransaction[] {
      const produced: RawTransaction[] = [];
      for (let i = 0; i < slots; i++) {
        const block = simulator.nextBlock();
        record(block);
        produced.push(...block.transactions);
      }
      return produced;
    },
    record,
    injectFaults(...f: Fault[]) {
      faults.push(...f);
    },
    /** Injected faults no request has met yet. */
    faultsLeft: () => faults.length,
    withholdNotifications(predicate: (signature: string) => boolean) {
      withhold = predicate;
    },
    /** getTransaction answers null for these, as a node whose copy of the slot lacks them does (D-463). */
    withholdBodies(predicate: (signature: string) => boolean) {
      withholdBody = predicate;
    },
    callCount: (method: string) => calls.get(method) ?? 0,
    /** The pool of nodes (rpc-pool.ts): `configure` their lags, read what each `served`. */
    pool,
    /** The provider behaviour: `configure` it, read its `stats` (429s, faults, bodies served twice). */
    provider,
    subscriberCount: () => pubsub.subscriberCount(),
    /** Subscribers closed for not reading their notifications. */
    backpressureCloses: () => pubsub.backpressureCloses(),
    /** The PubSub side: sockets closed for idling, logsSubscribe refused, sockets gone silent (rpc-ws.ts). */
    pubsub,
    transactions: (): RawTransaction[] => ledger.entries().map((e) => JSON.parse(e.json) as RawTransaction),
    /** Transactions in the ledger now (after trimming to `historySlots`). */
    ledgerSize: () => ledger.entries().length,
    /** Listens (loopback unless `host` says wider); a taken port rejects with `PortInUseError`. */
    async listen(port = 0, host = '127.0.0.1'): Promise<{ url: string; wsUrl: string; port: number; address: string }> {
      await new Promise<void>((resolve, reject) => {
        const failed = (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new PortInUseError(port) : err);
        server.once('error', failed);
        server.listen(port, host, () => {
          server.off('error', failed);
          resolve();
        });
      });
      const { port: p, address } = server.address() as { port: number; address: string };
      const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      return { url: `http://${shown}:${p}`, wsUrl: `ws://${shown}:${p}`, port: p, address };
    },
    async close(): Promise<void> {
      await pubsub.close();
      const closed = new Promise<void>((r) => server.close(() => r()));
      // Including connections whose request a 'hang' fault never answered.
      server.closeAllConnections();
      await closed;
    },
  };
}

export type SimulatorRpcServer = ReturnType<typeof createSimulatorRpcServer>;
