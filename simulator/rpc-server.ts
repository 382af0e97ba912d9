import http from 'node:http';
import { CHAIN_PATHS } from '../core/constants';
import type { RawTransaction } from '../core/events';
import bs58 from 'bs58';
import { RpcSubmitError } from './chain/preflight';
import type { Block, RpcChain } from './chain/types';
import { createRpcProvider, type RpcProviderOptions } from './rpc-provider';
import { RawJson, serialize } from './rpc-json';
import { CHAIN_RPC_LIMITS, classifyBody, configParam, encodingOf, parseCall, RPC_CODES, rpcError, type ChainRpcLimits, type RpcCall } from './rpc-request';
import { attachChainPubSub } from './rpc-ws';

type Fault = 'http500' | 'rate_limit' | 'rpc_error' | 'hang' | 'null_transaction';

/** One transaction in the RPC's ledger: what `getSignaturesForAddress` lists, and the `getTransaction` body serialized once. */
interface LedgerEntry {
  signature: string;
  slot: number;
  err: unknown;
  blockTime: number | null;
  version: RawTransaction['version'];
  json: string;
}

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
}

/** The RPC's port is taken: the one line a terminal shows, naming the setting (CHAIN_RPC_PORT). */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
  readonly code = 'EADDRINUSE';
  constructor(readonly port: number) {
    super(`port ${port} (the chain's RPC) is in use: stop what holds it (a local validator?) or set CHAIN_RPC_PORT`);
  }
}

/** What the banners say of where the RPC listens, with the setting that changes it (D-270). */
export function listenScope(address: string): string {
  const loopback = address === '::1' || address.startsWith('127.') || address === 'localhost';
  if (loopback) return `listening on ${address} only (this machine); CHAIN_RPC_HOST=0.0.0.0 serves other machines`;
  const every = address === '0.0.0.0' || address === '::';
  return `listening on ${address}${every ? ' (every interface)' : ''}: other machines can reach it (CHAIN_RPC_HOST)`;
}

/** The methods counted by `callCount`; any other name shares one counter (a client picks names, the map must not grow with them). */
const METHODS = new Set(['getHealth', 'getSlot', 'getBlockHeight', 'getLatestBlockhash', 'sendTransaction', 'getSignaturesForAddress', 'getTransaction', 'getAccountInfo', 'getMultipleAccounts']);

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
  // Oldest first; `first` is the index of the oldest entry still kept (trimmed in chunks).
  let ledger: LedgerEntry[] = [];
  const bySignature = new Map<string, LedgerEntry>();
  const faults: Fault[] = [];
  const provider = createRpcProvider(opts.provider);
  const calls = new Map<string, number>();
  const limits: ChainRpcLimits = { ...CHAIN_RPC_LIMITS, ...opts.limits };
  let withhold: (signature: string) => boolean = () => false;

  // The ledger is trimmed by dropping a prefix; `dropped` counts what went, so an entry's index
  // is found from its sequence number without a search.
  let dropped = 0;
  const seqOf = new WeakMap<LedgerEntry, number>();
  const indexOf = (e: LedgerEntry) => seqOf.get(e)! - dropped;

  function trim(): void {
    if (opts.historySlots === undefined || !ledger.length) return;
    const oldest = simulator.slot - opts.historySlots;
    let n = 0;
    while (n < ledger.length && ledger[n]!.slot <= oldest) n++;
    // Trimming copies the array: do it when a tenth of it has aged out, not every block.
    if (n === 0 || n < ledger.length / 10) return;
    for (const e of ledger.slice(0, n)) bySignature.delete(e.signature);
    ledger = ledger.slice(n);
    dropped += n;
  }

  /** A produced block: into the ledger, then to every `logsSubscribe` subscriber. */
  function record(block: Block): void {
    for (const tx of block.transactions) {
      const signature = tx.transaction.signatures[0]!;
      const entry: LedgerEntry = { signature, slot: tx.slot, err: tx.meta?.err ?? null, blockTime: tx.blockTime, version: tx.version, json: JSON.stringify(tx) };
      seqOf.set(entry, dropped + ledger.length);
      ledger.push(entry);
      bySignature.set(signature, entry);
      if (withhold(signature)) continue;
      pubsub.notify((subscription) =>
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'logsNotification',
          params: { result: { context: { slot: tx.slot }, value: { signature, err: tx.meta?.err ?? null, logs: tx.meta?.logMessages ?? [] } }, subscription },
        }),
      );
    }
    trim();
  }

  /** An account in the RPC's `base64` encoding, or null. */
  function accountValue(address: string) {
    const a = simulator.account(address);
    if (!a) return null;
    return { data: [Buffer.from(a.data).toString('base64'), 'base64'], executable: false, lamports: a.lamports, owner: a.owner, rentEpoch: 18446744073709551615, space: a.data.length };
  }

  /** One request object: its answer, whatever it holds (a handler's bug is -32603, without its details). */
  function dispatch(v: unknown): unknown {
    const parsed = parseCall(v);
    if (!parsed.ok) return parsed.error;
    const name = METHODS.has(parsed.call.method) ? parsed.call.method : '';
    calls.set(name, (calls.get(name) ?? 0) + 1);
    try {
      return handle(parsed.call);
    } catch {
      return rpcError(parsed.call.id, RPC_CODES.internal, 'Internal error');
    }
  }

  const badConfig = (id: RpcCall['id']) => rpcError(id, RPC_CODES.invalidParams, 'Invalid params: the configuration must be an object');

  function handle({ id, method, params }: RpcCall): unknown {
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
        const [wire, rawCfg] = params;
        if (typeof wire !== 'string') return rpcError(id, -32602, 'Invalid params: transaction');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'base58');
        if (encoding !== 'base58' && encoding !== 'base64') return rpcError(id, -32602, `unsupported encoding: ${encoding ?? typeof cfg.encoding}`);
        try {
          const base64 = encoding === 'base64' ? wire : Buffer.from(bs58.decode(wire)).toString('base64');
          return { jsonrpc: '2.0', id, result: submit(base64) };
        } catch (err) {
          if (err instanceof RpcSubmitError) return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
          return rpcError(id, -32602, `invalid transaction: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      case 'getSignaturesForAddress': {
        const [address, rawCfg] = params;
        if (typeof address !== 'string') return rpcError(id, -32602, 'Invalid params: address');
        const cfg = configParam(rawCfg) as { limit?: unknown; before?: unknown; until?: unknown } | undefined;
        if (!cfg) return badConfig(id);
        const optionalText = (v: unknown) => v === undefined || v === null || typeof v === 'string';
        if (!optionalText(cfg.before) || !optionalText(cfg.until)) return rpcError(id, -32602, 'Invalid params: before and until must be signatures');
        const limit = cfg.limit ?? 1000;
        if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000) return rpcError(id, -32602, 'Invalid limit');
        if (address !== simulator.programId) return { jsonrpc: '2.0', id, result: [] };
        // Newest first, starting below `before`, stopping at (excluding) `until`.
        let i = ledger.length - 1;
        if (typeof cfg.before === 'string' && cfg.before) {
          const b = bySignature.get(cfg.before);
          i = b ? indexOf(b) - 1 : -1;
        }
        const out = [];
        for (; i >= 0 && out.length < limit; i--) {
          const o = ledger[i]!;
          if (o.signature === cfg.until) break;
          out.push({ signature: o.signature, slot: o.slot, err: o.err, memo: null, blockTime: o.blockTime, confirmationStatus: 'confirmed' });
        }
        return { jsonrpc: '2.0', id, result: out };
      }
      case 'getTransaction': {
        const [signature, rawCfg] = params;
        if (typeof signature !== 'string') return rpcError(id, -32602, 'Invalid params: signature');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'json');
        if (encoding === undefined) return rpcError(id, -32602, 'Invalid params: encoding must be a string');
        const entry = bySignature.get(signature);
        if (!entry) return { jsonrpc: '2.0', id, result: null };
        if (entry.version === 0 && cfg.maxSupportedTransactionVersion === undefined) {
          return rpcError(id, -32015, 'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
        }
        if (encoding !== 'json') return rpcError(id, -32602, `Unsupported encoding ${encoding} in the simulator`);
        provider.servedTransaction(signature);
        return { jsonrpc: '2.0', id, result: new RawJson(entry.json) };
      }
      case 'getAccountInfo': {
        const [address, rawCfg] = params;
        if (typeof address !== 'string') return rpcError(id, -32602, 'Invalid params: address');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'binary');
        if (encoding !== 'base64') return rpcError(id, -32602, `Unsupported encoding ${encoding ?? typeof cfg.encoding} in the simulator`);
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: simulator.slot }, value: accountValue(address) } };
      }
      case 'getMultipleAccounts': {
        const [addresses, rawCfg] = params;
        if (!Array.isArray(addresses) || addresses.some((a) => typeof a !== 'string')) return rpcError(id, -32602, 'Invalid params: addresses');
        if (addresses.length > 100) return rpcError(id, -32602, 'Too many inputs provided; max 100');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'binary');
        if (encoding !== 'base64') return rpcError(id, -32602, `Unsupported encoding ${encoding ?? typeof cfg.encoding} in the simulator`);
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: simulator.slot }, value: (addresses as string[]).map(accountValue) } };
      }
      default:
        return rpcError(id, -32601, 'Method not found');
    }
  }

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  /** A parsed body's answer: one call, a batch (each item on its own), or one error for the whole. */
  function answerBody(body: unknown): unknown {
    const shape = classifyBody(body, limits);
    switch (shape.kind) {
      case 'single':
        return dispatch(body);
      case 'batch':
        return shape.items.map(dispatch);
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
    // Past the limit: 413 with the JSON-RPC error, the rest of the body read and dropped (not
    // kept), and the connection closed after the answer.
    const tooLarge = () => {
      req.resume();
      json(res, 413, rpcError(null, RPC_CODES.invalidRequest, `Request body too large: at most ${limits.maxBodyBytes} bytes`), { connection: 'close' });
    };
    if (Number(req.headers['content-length'] ?? 0) > limits.maxBodyBytes) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('error', () => req.destroy());
    req.on('data', (c: Buffer) => {
      if (refused) return;
      size += c.length;
      if (size > limits.maxBodyBytes) {
        refused = true;
        chunks.length = 0;
        return tooLarge();
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (refused) return;
      const fault = faults.shift();
      if (fault === 'hang') return; // never answers: the client's timeout must fire
      if (fault === 'http500') return void res.writeHead(500).end('upstream error');
      if (fault === 'rate_limit') return void res.writeHead(429, { 'retry-after': '1' }).end('Too many requests');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return json(res, 200, rpcError(null, RPC_CODES.parse, 'Parse error'));
      }
      const verdict = provider.admit(body);
      if (verdict.kind !== 'serve') return provider.answer(res, verdict);
      const single = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown; method?: unknown }) : undefined;
      const id = typeof single?.id === 'string' || typeof single?.id === 'number' ? single.id : null;
      let out: unknown;
      if (fault === 'rpc_error') out = rpcError(id, -32005, 'Node is behind by 42 slots');
      else if (fault === 'null_transaction' && single?.method === 'getTransaction') out = { jsonrpc: '2.0', id, result: null };
      else out = answerBody(body);
      provider.answer(res, verdict, serialize(out));
    });
  });
  server.requestTimeout = 30_000;
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
    callCount: (method: string) => calls.get(method) ?? 0,
    /** The provider behaviour: `configure` it, read its `stats` (429s, faults, bodies served twice). */
    provider,
    subscriberCount: () => pubsub.subscriberCount(),
    /** Subscribers closed for not reading their notifications. */
    backpressureCloses: () => pubsub.backpressureCloses(),
    transactions: (): RawTransaction[] => ledger.map((e) => JSON.parse(e.json) as RawTransaction),
    /** Transactions in the ledger now (after trimming to `historySlots`). */
    ledgerSize: () => ledger.length,
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
