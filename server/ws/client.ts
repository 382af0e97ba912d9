/**
 * One `/ws` connection as the server keeps it: what the hub needs of it (`HubClient`) plus its
 * IP lease, plan, subscriptions, message queue and liveness; and the three ways the server
 * talks to it: a message, an error message, a close.
 */
import { WebSocket } from 'ws';
import type { PlanName } from '../../core/plans';
import type { HubClient } from './hub';
import type { Lease } from './ip-leases';
import { encode } from './protocol';

export interface Client extends HubClient {
  ws: WebSocket;
  /** The client IP (as the REST rate limits see it). */
  ip: string;
  lease: Lease;
  /** The API-key plan the connection counts against (appendix variant only). */
  plan: PlanName | undefined;
  /** Stops watching the connection's API key for revocation (appendix variant, with a key). */
  unwatch?: () => void;
  subscriptions: Set<string>;
  alive: boolean;
  pending: number;
  /** Failed `positions:` authentications on this connection. */
  authFailures: number;
  /** Subscriptions refused because their market is unknown (D-352). */
  unknownMarkets: number;
  queue: Promise<void>;
  closed: boolean;
}

const TEXT = { binary: false } as const;

export function send(client: Client, msg: Record<string, unknown>): void {
  // Text frames, as updates are: a Buffer would otherwise go out as a binary frame.
  if (client.ws.readyState === WebSocket.OPEN) client.ws.send(encode(msg), TEXT);
}

export const sendError = (client: Client, message: string): void => send(client, { type: 'error', message });

export function closeClient(client: Client, code: number, reason: string): void {
  if (client.closed) return;
  client.closed = true;
  client.ws.close(code, reason);
  // A client that does not read will not answer the close handshake either.
  setTimeout(() => client.ws.terminate(), 5_000).unref();
}
