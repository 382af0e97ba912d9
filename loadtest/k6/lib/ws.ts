import { setTimeout, clearTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';

/** A server message of spec 6.1 (only the fields the scripts read). */
export interface ServerMessage {
  type: string;
  channel?: string;
  message?: string;
  timestamp?: number;
  seq?: number;
  slot?: number;
  latestSeq?: number;
  data?: unknown;
}

/** Close event fields: k6 releases that follow the WebSocket standard give `code`. */
export interface Closed {
  code?: number;
  reason?: string;
}

export interface Conn {
  ws: WebSocket;
  /** Resolves on the `connected` greeting; rejects when the connection fails first (a refused upgrade). */
  opened: Promise<void>;
  closed: Promise<Closed>;
  send(msg: unknown): void;
  /** The next message from now on that `match` accepts, or undefined after `timeoutMs`. */
  next(match: (m: ServerMessage) => boolean, timeoutMs?: number): Promise<ServerMessage | undefined>;
  /** Every message, as it arrives (fan-out counters). */
  onMessage(fn: (m: ServerMessage, receivedAt: number) => void): void;
}

/**
 * A `k6/websockets` connection with promises over its events, so a script reads as a sequence
 * of steps. The server answers one client's messages in order, so waiting for the next
 * matching message is unambiguous.
 */
export function connect(url: string, tags: Record<string, string> = {}): Conn {
  const ws = new WebSocket(url, null, { tags });
  const waiters: { match: (m: ServerMessage) => boolean; resolve: (m: ServerMessage | undefined) => void }[] = [];
  const listeners: ((m: ServerMessage, at: number) => void)[] = [];
  let greeted = false;
  let resolveOpen!: () => void;
  let rejectOpen!: (e: Error) => void;
  const opened = new Promise<void>((res, rej) => {
    resolveOpen = res;
    rejectOpen = rej;
  });
  let resolveClosed!: (c: Closed) => void;
  const closed = new Promise<Closed>((res) => (resolveClosed = res));
  ws.addEventListener('message', (e) => {
    const at = Date.now();
    const raw = (e as { data?: unknown }).data;
    let m: ServerMessage;
    try {
      m = JSON.parse(typeof raw === 'string' ? raw : '') as ServerMessage;
    } catch {
      return;
    }
    if (m.type === 'connected' && !greeted) {
      greeted = true;
      resolveOpen();
    }
    for (const l of listeners) l(m, at);
    const i = waiters.findIndex((w) => w.match(m));
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(m);
  });
  ws.addEventListener('error', (e) => {
    if (!greeted) rejectOpen(new Error(String((e as { error?: unknown }).error ?? 'websocket error')));
  });
  ws.addEventListener('close', (e) => {
    const c = (e ?? {}) as Closed;
    if (!greeted) rejectOpen(new Error('closed before the greeting'));
    for (const w of waiters.splice(0)) w.resolve(undefined);
    resolveClosed({ code: typeof c.code === 'number' ? c.code : undefined, reason: typeof c.reason === 'string' ? c.reason : undefined });
  });
  opened.catch(() => undefined);
  return {
    ws,
    opened,
    closed,
    send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
    next(match, timeoutMs = 10_000) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(entry);
          if (i >= 0) waiters.splice(i, 1);
          resolve(undefined);
        }, timeoutMs);
        const entry = {
          match,
          resolve: (m: ServerMessage | undefined) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        waiters.push(entry);
      });
    },
    onMessage: (fn) => listeners.push(fn),
  };
}

/** Resolves after `ms` (k6's timers run on the VU's event loop). */
export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Settles with whether `p` resolved (true) or rejected (false). */
export const settled = (p: Promise<unknown>) => p.then(() => true, () => false);
