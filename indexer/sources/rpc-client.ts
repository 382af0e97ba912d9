import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';

export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly kind: 'http' | 'timeout' | 'rpc' | 'rate_limited' | 'network',
    message: string,
    readonly code?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** JSON-RPC errors that retrying cannot fix (bad parameters, unknown method). */
const PERMANENT_RPC_CODES = new Set([-32600, -32601, -32602]);

export interface RpcClient {
  /** Calls a method, retrying transient failures with capped exponential backoff until `signal` aborts. */
  call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T>;
  connected(): boolean;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

export function createRpcClient(opts: {
  url: string;
  logger: Logger;
  metrics: Metrics;
  timeoutMs?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}): RpcClient {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const base = opts.baseBackoffMs ?? 200;
  const cap = opts.maxBackoffMs ?? 10_000;
  // Not connected until a call has succeeded.
  let ok = false;
  let id = 0;

  async function once<T>(method: string, params: unknown[], signal: AbortSignal | undefined): Promise<T> {
    let res: Response;
    try {
      res = await fetch(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
        // The caller's signal too: a shutdown must not wait out a call the node never answers.
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const name = (err as Error).name;
      throw new RpcError(name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network', `${method}: ${(err as Error).message}`);
    }
    if (res.status === 429) {
      const after = Number(res.headers.get('retry-after'));
      await res.body?.cancel();
      throw new RpcError('rate_limited', `${method}: HTTP 429`, 429, Number.isFinite(after) && after > 0 ? after * 1000 : undefined);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new RpcError('http', `${method}: HTTP ${res.status}`, res.status);
    }
    let body: { result?: T; error?: { code: number; message: string } };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new RpcError('http', `${method}: response is not JSON`);
    }
    if (body.error) throw new RpcError('rpc', `${method}: ${body.error.message}`, body.error.code);
    return body.result as T;
  }

  return {
    async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await once<T>(method, params, signal);
          ok = true;
          return result;
        } catch (err) {
          // Given up by the caller on shutdown: not a failure of the RPC node. A deadline the
          // caller set (AbortSignal.timeout, as the chain-tip heartbeat does) is one.
          if (signal?.aborted && (signal.reason as Error | undefined)?.name !== 'TimeoutError') throw err;
          if (!(err instanceof RpcError)) throw err;
          opts.metrics.indexerRpcErrors.inc({ method, kind: err.kind });
          if (err.kind === 'rpc' && err.code !== undefined && PERMANENT_RPC_CODES.has(err.code)) throw err;
          ok = false;
          const backoff = err.retryAfterMs ?? Math.min(cap, base * 2 ** Math.min(attempt, 16));
          // Jitter (half fixed, half random) keeps replicas from retrying in lockstep.
          const wait = err.retryAfterMs ?? Math.round(backoff / 2 + Math.random() * (backoff / 2));
          if (attempt % 10 === 0) opts.logger.warn({ method, kind: err.kind, attempt, waitMs: wait }, 'RPC call failed; retrying');
          await sleep(wait, signal);
          if (signal?.aborted) throw err;
        }
      }
    },
    connected: () => ok,
  };
}
