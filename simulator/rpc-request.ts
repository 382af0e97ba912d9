/**
 * The simulated chain's JSON-RPC requests as JSON-RPC 2.0 defines them, checked before any
 * method sees them, and the limits that bound what one client can make the chain do (D-271).
 * Every malformed request gets the specification's error object, never an exception.
 */
import { WS_LIMITS } from '../core/limits';

/** What one client can send or hold; a test may shrink them (`SimulatorRpcOptions.limits`). */
export interface ChainRpcLimits {
  /** Largest HTTP body, in bytes: past it HTTP 413 with a JSON-RPC error (Agave's `MAX_REQUEST_BODY_SIZE`, D-474). */
  maxBodyBytes: number;
  /** Calls in one batch: a hosted provider's cap (Helius: 100 `getTransaction`s, D-474), the indexer's largest `RPC_BATCH_SIZE`. */
  maxBatchCalls: number;
  /** Largest WebSocket message, in bytes (`ws` closes with 1009 past it). */
  maxMessageBytes: number;
  /** WebSocket connections at once; an upgrade past it gets HTTP 503. */
  maxConnections: number;
  /** A subscriber's send buffer above which notifications are skipped (the API's `/ws` value). */
  maxBufferedBytes: number;
  /** Consecutive skipped notifications that close the subscriber (the API's `/ws` value). */
  maxSkips: number;
  /**
   * A WebSocket from which nothing (no message, no ping frame) came for this long is closed
   * with 1000, as providers close idle sockets (Helius: a 10-minute inactivity timer, D-475).
   */
  idleCloseMs: number;
}

export const CHAIN_RPC_LIMITS: ChainRpcLimits = {
  // As a provider's Agave node and balancer refuse, not kinder (D-474): 50 KiB is Agave's
  // `MAX_REQUEST_BODY_SIZE` (rpc/src/rpc.rs, given to the HTTP server in rpc_service.rs).
  maxBodyBytes: 50 * 1024,
  maxBatchCalls: 100,
  maxMessageBytes: 16 * 1024,
  maxConnections: 256,
  maxBufferedBytes: WS_LIMITS.maxBufferedBytes,
  maxSkips: WS_LIMITS.maxSkips,
  idleCloseMs: 10 * 60_000,
};

/** The JSON-RPC 2.0 error codes the chain answers with (Solana's own codes come from the chain). */
export const RPC_CODES = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603 } as const;

export type RpcId = string | number | null;

export interface RpcErrorResponse {
  jsonrpc: '2.0';
  id: RpcId;
  error: { code: number; message: string; data?: unknown };
}

export const rpcError = (id: RpcId, code: number, message: string): RpcErrorResponse => ({ jsonrpc: '2.0', id, error: { code, message } });

/** A call that passed the envelope checks: positional params, as Solana's methods take them. */
export interface RpcCall {
  id: RpcId;
  method: string;
  params: unknown[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RpcId => v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/**
 * One request object, or the error to answer it with. `jsonrpc` may be left out (clients of
 * this chain always sent it, but a missing one was accepted before and costs nothing); any
 * other value than "2.0" is refused. Params are positional: an object or a scalar is -32602.
 */
export function parseCall(v: unknown): { ok: true; call: RpcCall } | { ok: false; error: RpcErrorResponse } {
  if (!isObject(v)) return { ok: false, error: rpcError(null, RPC_CODES.invalidRequest, 'Invalid Request: expected a JSON-RPC 2.0 request object') };
  const id = v.id === undefined ? null : v.id;
  if (!isId(id)) return { ok: false, error: rpcError(null, RPC_CODES.invalidRequest, 'Invalid Request: id must be a string, a number or null') };
  if (v.jsonrpc !== undefined && v.jsonrpc !== '2.0') return { ok: false, error: rpcError(id, RPC_CODES.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"') };
  if (typeof v.method !== 'string') return { ok: false, error: rpcError(id, RPC_CODES.invalidRequest, 'Invalid Request: method must be a string') };
  if (v.params !== undefined && !Array.isArray(v.params)) return { ok: false, error: rpcError(id, RPC_CODES.invalidParams, 'Invalid params: expected an array') };
  return { ok: true, call: { id, method: v.method, params: (v.params as unknown[] | undefined) ?? [] } };
}

/**
 * What a parsed HTTP body is: one call, a batch, or an error answered for the whole body
 * (an empty batch is an invalid request, JSON-RPC 2.0 section 6; so is one past the limit).
 */
export function classifyBody(body: unknown, limits: Pick<ChainRpcLimits, 'maxBatchCalls'>): { kind: 'single' } | { kind: 'batch'; items: unknown[] } | { kind: 'error'; error: RpcErrorResponse } {
  if (!Array.isArray(body)) return { kind: 'single' };
  if (body.length === 0) return { kind: 'error', error: rpcError(null, RPC_CODES.invalidRequest, 'Invalid Request: empty batch') };
  if (body.length > limits.maxBatchCalls) return { kind: 'error', error: rpcError(null, RPC_CODES.invalidRequest, `Invalid Request: a batch holds at most ${limits.maxBatchCalls} calls`) };
  return { kind: 'batch', items: body };
}

/** A method's optional configuration object (the last positional param): absent is `{}`. */
export function configParam(v: unknown): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return {};
  return isObject(v) ? v : undefined;
}

/** An `encoding` field: absent is the method's default; anything but a string is `undefined` (refused). */
export function encodingOf(cfg: Record<string, unknown>, fallback: string): string | undefined {
  const e = cfg.encoding;
  if (e === undefined) return fallback;
  return typeof e === 'string' ? e.slice(0, 64) : undefined;
}
