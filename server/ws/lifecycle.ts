/**
 * A `/ws` server's life once attached: the ping sweep (one timer for every client; a client
 * that missed the previous ping's pong is dropped) and shutdown, in the API's order: refuse new
 * upgrades first (before HTTP draining), then close every socket with 1001 and release the
 * leases.
 */
import { WebSocket, type WebSocketServer } from 'ws';
import { closeClient, type Client } from './client';
import type { ConnectionLeases } from './ip-leases';
import { CLOSE, SHUTDOWN_REASON } from './protocol';

export interface Lifecycle {
  /** Whether new upgrades are still admitted. */
  accepting(): boolean;
  refuseNew(): void;
  /** Closes every socket with 1001 and a reason; resolves when they are gone. Once. */
  close(): Promise<void>;
}

export function startLifecycle(deps: {
  clients: ReadonlySet<Client>;
  pingIntervalMs: number;
  leases: ConnectionLeases;
  wss: WebSocketServer;
  /** Stops listening for upgrades on the HTTP server. */
  detach: () => void;
}): Lifecycle {
  const { clients } = deps;
  let accepting = true;
  let closing: Promise<void> | undefined;

  const pinger = setInterval(() => {
    for (const client of clients) {
      if (!client.alive) {
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }, deps.pingIntervalMs);
  pinger.unref();

  async function closeAll(): Promise<void> {
    accepting = false;
    clearInterval(pinger);
    deps.detach();
    const gone = [...clients].map((c) => new Promise<void>((resolve) => (c.ws.readyState === WebSocket.CLOSED ? resolve() : c.ws.once('close', () => resolve()))));
    for (const c of clients) closeClient(c, CLOSE.goingAway, SHUTDOWN_REASON);
    const cut = setTimeout(() => clients.forEach((c) => c.ws.terminate()), 2_000);
    await Promise.all(gone);
    clearTimeout(cut);
    await deps.leases.close();
    await new Promise<void>((resolve) => deps.wss.close(() => resolve()));
  }

  return {
    accepting: () => accepting,
    refuseNew() {
      accepting = false;
    },
    close() {
      closing ??= closeAll();
      return closing;
    },
  };
}
