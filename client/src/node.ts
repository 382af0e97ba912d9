import { readFile } from 'node:fs/promises';
import WebSocket from 'ws';
import type { SocketFactory, SocketLike } from './live';
import { createKeypairSigner, type Signer } from './signer';

/**
 * Node-only helpers (D-525, D-526): a signer from a Solana CLI keypair file, and `/ws` sockets
 * from the `ws` package where Node has no global WebSocket (Node 20).
 */

/** A signer from a keypair file (`solana-keygen new -o key.json`: a JSON array of 64 bytes). */
export async function keypairFileSigner(path: string): Promise<Signer> {
  let bytes: unknown;
  try {
    bytes = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: not a keypair file (${(err as Error).message})`);
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) throw new Error(`${path}: a keypair file is a JSON array of 64 bytes`);
  return createKeypairSigner(Uint8Array.from(bytes as number[]));
}

/** `/ws` sockets over the `ws` package; a refused upgrade's status reaches the close policy. */
export const createNodeSocket: SocketFactory = (url) => new WebSocket(url) as unknown as SocketLike;

/** The global WebSocket where there is one (Node 22+, browsers), else the `ws` package. */
export const defaultSocket: SocketFactory = (url) => {
  const W = (globalThis as { WebSocket?: new (u: string) => SocketLike }).WebSocket;
  return W ? new W(url) : createNodeSocket(url);
};
