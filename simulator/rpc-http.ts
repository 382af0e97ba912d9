/**
 * The HTTP side of the simulated chain's RPC that is not JSON-RPC: a body read within its limit,
 * a taken port as one line, and what the banners say of where it listens (D-270, D-271).
 */
import type http from 'node:http';
import { RPC_CODES, rpcError } from './rpc-request';

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

export const writeJson = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/**
 * Reads a request body of at most `maxBytes` and hands it over whole. Past the limit (by
 * `Content-Length`, or while a chunked body arrives) it answers 413 with a JSON-RPC error, reads
 * the rest without keeping it, and closes the connection after the answer.
 */
export function readBody(req: http.IncomingMessage, res: http.ServerResponse, maxBytes: number, onBody: (body: Buffer) => void): void {
  const tooLarge = () => {
    req.resume();
    writeJson(res, 413, rpcError(null, RPC_CODES.invalidRequest, `Request body too large: at most ${maxBytes} bytes`), { connection: 'close' });
  };
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('error', () => req.destroy());
  req.on('data', (c: Buffer) => {
    if (refused) return;
    size += c.length;
    if (size > maxBytes) {
      refused = true;
      chunks.length = 0;
      return tooLarge();
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (!refused) onBody(Buffer.concat(chunks));
  });
}
