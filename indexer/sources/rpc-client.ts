import http from 'node:http';
import https from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import { creditsOf } from '../../core/rpc-credits';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import type { RpcLimiter } from './rpc-limiter';

export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly kind: 'http' | 'timeout' | 'rpc' | 'rate_limited' | 'network' | 'batch_refused',
    message: string,
    readonly code?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Agave's `MinContextSlotNotReached`: the node that answered has not reached `minContextSlot`. */
export const MIN_CONTEXT_SLOT_NOT_REACHED = -32016;

/**
 * What a JSON-RPC error code means, as Agave uses it (`rpc-client-api` `custom_error.rs`,
 * `rpc.rs`; D-463):
 * - `lagging`: -32016, the node is behind the slot asked for: another node will answer, soon.
 * - `transient`: the node cannot answer now (-32004 block not available, -32005 node behind,
 *   -32014 block status not yet available, -32019 long-term storage unreachable, and any code
 *   not listed): asked again with backoff until it answers.
 * - `invalid_params`: -32602, which Agave also returns for a blockstore error in
 *   getSignaturesForAddress and getTransaction (`map_err(Error::invalid_params)`): asked again a
 *   few times, then thrown (so a real mistake of ours still fails the loop).
 * - `unavailable`: what that item will never be given (-32001 block cleaned up, -32007 slot
 *   skipped, -32009 slot skipped in long-term storage, -32011 transaction history not
 *   available, -32015 transaction version not supported): thrown at once; the caller
 *   dead-letters the item rather than stall on it.
 * - `permanent`: the request itself is wrong (-32600, -32601): thrown at once.
 */
export type RpcCodeClass = 'lagging' | 'transient' | 'invalid_params' | 'unavailable' | 'permanent';

export function classifyRpcCode(code: number | undefined): RpcCodeClass {
  switch (code) {
    case MIN_CONTEXT_SLOT_NOT_REACHED:
      return 'lagging';
    case -32602:
      return 'invalid_params';
    case -32001:
    case -32007:
    case -32009:
    case -32011:
    case -32015:
      return 'unavailable';
    case -32600:
    case -32601:
      return 'permanent';
    default:
      return 'transient';
  }
}

/** Calls in one batch at most: hosted providers' cap (Helius: 100 `getTransaction`s a batch, D-474). */
export const MAX_BATCH_CALLS = 100;

/** Times an `invalid_params` answer is asked again before it is believed. */
const INVALID_PARAMS_RETRIES = 3;

/** What the client sent, for the backfill benchmark's waste figures. */
export interface RpcClientStats {
  /** HTTP requests sent (a batch is one), retries included. */
  requests: number;
  /** JSON-RPC calls in them. */
  calls: number;
  /** Requests sent again after a failure (429s included). */
  retries: number;
  /** 429s answered. */
  rateLimited: number;
}

export interface RpcClient {
  /** Calls a method, retrying transient failures with capped exponential backoff until `signal` aborts. */
  call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T>;
  /**
   * JSON-RPC batches of calls to `method`, each retried whole like `call`; each answer is its
   * result or its error. A batch the provider refuses (HTTP 413 or another 4xx, an answer that
   * is not an array) is sent again as halves, after a short jittered wait, and no batch larger
   * than a refused one is sent again (D-474); throws an RpcError of kind `batch_refused` once a
   * batch of two or three is refused (the provider takes none).
   */
  batch<T>(method: string, params: unknown[][], signal?: AbortSignal): Promise<(T | RpcError)[]>;
  /** The largest batch not yet refused (at most `MAX_BATCH_CALLS`). */
  batchLimit(): number;
  connected(): boolean;
  stats(): RpcClientStats;
  /** Closes the kept-alive connections. */
  close(): void;
}

/** Waits `ms`, or less if `signal` aborts; leaves no listener behind on the caller's long-lived signal. */
const sleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }).catch(() => undefined);

export function createRpcClient(opts: {
  url: string;
  logger: Logger;
  metrics: Metrics;
  timeoutMs?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Paces requests and caps those in flight (rpc-limiter.ts); unset: neither. */
  limiter?: RpcLimiter;
}): RpcClient {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const base = opts.baseBackoffMs ?? 200;
  const cap = opts.maxBackoffMs ?? 10_000;
  // Not connected until a call has succeeded.
  let ok = false;
  let id = 0;

  const stats: RpcClientStats = { requests: 0, calls: 0, retries: 0, rateLimited: 0 };
  // node:http on kept-alive connections rather than fetch: a quarter of fetch's CPU per call
  // (0.25 against 1 ms, client and simulated node together), which a backfill's hundreds of
  // calls a second feel (D-243). Idle connections do not hold the process open.
  const target = new URL(opts.url);
  const transport = target.protocol === 'https:' ? https : http;
  const agent = new transport.Agent({ keepAlive: true });

  /** One POST of `body`: the status, Retry-After and the body's text. */
  const send = (body: string, signal: AbortSignal) =>
    new Promise<{ status: number; retryAfter: string | undefined; text: string }>((resolve, reject) => {
      const req = transport.request(target, { method: 'POST', agent, signal, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
        // Cut off mid-body (the connection dropped, or the deadline passed).
        res.on('close', () => res.complete || reject(new Error('the answer was cut off')));
      });
      req.on('error', reject);
      req.end(body);
    });

  /** One HTTP request: the parsed JSON answer, or an RpcError for the request as a whole. */
  async function post(label: string, body: unknown, calls: number, credits: number, signal: AbortSignal | undefined): Promise<unknown> {
    const release = await opts.limiter?.acquire(credits, signal);
    stats.requests++;
    stats.calls += calls;
    // The caller's signal too: a shutdown must not wait out a call the node never answers. One
    // controller and a timer rather than AbortSignal.any and AbortSignal.timeout: Node 20 keeps
    // every composite signal listed on the long-lived caller's signal, and a backfill makes
    // hundreds of thousands of calls.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer in ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    const onAbort = () => controller.abort(signal!.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let res: { status: number; retryAfter: string | undefined; text: string };
      try {
        res = await send(JSON.stringify(body), controller.signal);
      } catch (err) {
        throw new RpcError(controller.signal.aborted ? 'timeout' : 'network', `${label}: ${(err as Error).message}`);
      }
      if (res.status === 429) {
        const after = Number(res.retryAfter);
        stats.rateLimited++;
        const retryAfterMs = Number.isFinite(after) && after > 0 ? after * 1000 : undefined;
        opts.limiter?.rateLimited(retryAfterMs);
        throw new RpcError('rate_limited', `${label}: HTTP 429`, 429, retryAfterMs);
      }
      // A provider that takes no batches answers one with a client error (or a lone error object, below).
      if (Array.isArray(body) && res.status >= 400 && res.status < 500) throw new RpcError('batch_refused', `${label}: HTTP ${res.status} to a batch`, res.status);
      if (res.status < 200 || res.status > 299) throw new RpcError('http', `${label}: HTTP ${res.status}`, res.status);
      try {
        return JSON.parse(res.text);
      } catch {
        throw new RpcError('http', `${label}: response is not JSON`);
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      release?.();
    }
  }

  async function once<T>(method: string, params: unknown[], signal: AbortSignal | undefined): Promise<T> {
    const body = (await post(method, { jsonrpc: '2.0', id: ++id, method, params }, 1, creditsOf(method), signal)) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw new RpcError('rpc', `${method}: ${body.error.message}`, body.error.code);
    return body.result as T;
  }

  async function batchOnce<T>(method: string, params: unknown[][], signal: AbortSignal | undefined): Promise<(T | RpcError)[]> {
    const first = id + 1;
    const requests = params.map((p) => ({ jsonrpc: '2.0', id: ++id, method, params: p }));
    const answer = await post(`${method} batch`, requests, requests.length, creditsOf(method) * requests.length, signal);
    if (!Array.isArray(answer)) throw new RpcError('batch_refused', `${method}: the answer to a batch is not an array`);
    // Answers may come in any order: matched by id.
    const out = new Array<T | RpcError>(params.length).fill(new RpcError('rpc', `${method}: no answer in the batch`));
    for (const a of answer as { id?: number; result?: T; error?: { code: number; message: string } }[]) {
      const i = (a.id ?? -1) - first;
      if (i < 0 || i >= out.length) continue;
      out[i] = a.error ? new RpcError('rpc', `${method}: ${a.error.message}`, a.error.code) : (a.result as T);
    }
    return out;
  }

  let batchLimit = MAX_BATCH_CALLS;

  /** `params` in batches of at most `batchLimit`, one after another, halved when refused (D-474). */
  async function batches<T>(method: string, params: unknown[][], signal: AbortSignal | undefined): Promise<(T | RpcError)[]> {
    const out: (T | RpcError)[] = [];
    while (out.length < params.length) {
      const chunk = params.slice(out.length, out.length + batchLimit);
      try {
        out.push(...(await retrying(method, signal, () => batchOnce<T>(method, chunk, signal))));
      } catch (err) {
        if (!(err instanceof RpcError) || err.kind !== 'batch_refused' || chunk.length <= 1) throw err;
        // Too many calls, or too large a body: never that many again; a refused pair means none.
        batchLimit = Math.max(1, Math.min(batchLimit, Math.floor(chunk.length / 2)));
        if (batchLimit <= 1) throw err;
        opts.logger.warn({ method, refused: chunk.length, now: batchLimit, err: err.message }, 'the RPC refused a batch: smaller batches from now on');
        await sleep(50 + Math.random() * 100, signal);
        if (signal?.aborted) throw err;
      }
    }
    return out;
  }

  /** `attempt` until it succeeds, a permanent error, or the caller gives up. */
  async function retrying<T>(method: string, signal: AbortSignal | undefined, attempt: () => Promise<T>): Promise<T> {
    for (let n = 0; ; n++) {
      try {
        const result = await attempt();
        ok = true;
        return result;
      } catch (err) {
        // Given up by the caller on shutdown: not a failure of the RPC node. A deadline the
        // caller set (AbortSignal.timeout, as the chain-tip heartbeat does) is one.
        if (signal?.aborted && (signal.reason as Error | undefined)?.name !== 'TimeoutError') throw err;
        if (!(err instanceof RpcError)) throw err;
        opts.metrics.indexerRpcErrors.inc({ method, kind: err.kind });
        if (err.kind === 'batch_refused') throw err;
        const cls = err.kind === 'rpc' ? classifyRpcCode(err.code) : 'transient';
        if (cls === 'permanent' || cls === 'unavailable' || (cls === 'invalid_params' && n >= INVALID_PARAMS_RETRIES)) throw err;
        // A node of the provider's pool behind the slot asked for: the next call likely reaches
        // another, so it goes again soon, and never waits long; not the RPC failing (D-461).
        const lagging = cls === 'lagging';
        if (!lagging) ok = false;
        const backoff = err.retryAfterMs ?? (lagging ? Math.min(1_000, 50 * 2 ** Math.min(n, 5)) : Math.min(cap, base * 2 ** Math.min(n, 16)));
        // Jitter (half fixed, half random) keeps replicas from retrying in lockstep. A 429's
        // Retry-After is honoured by the limiter, which holds every caller until it passes.
        const wait = err.retryAfterMs ?? Math.round(backoff / 2 + Math.random() * (backoff / 2));
        if (n % 10 === 0) opts.logger.warn({ method, kind: err.kind, attempt: n, waitMs: wait }, 'RPC call failed; retrying');
        if (!opts.limiter || err.kind !== 'rate_limited') await sleep(wait, signal);
        if (signal?.aborted) throw err;
        stats.retries++;
      }
    }
  }

  return {
    call: <T>(method: string, params: unknown[], signal?: AbortSignal) => retrying(method, signal, () => once<T>(method, params, signal)),
    batch: <T>(method: string, params: unknown[][], signal?: AbortSignal) => batches<T>(method, params, signal),
    batchLimit: () => batchLimit,
    stats: () => ({ ...stats }),
    close: () => agent.destroy(),
    connected: () => ok,
  };
}
