import { signedMessage } from './auth';
import type { Clock } from './clock';
import { closePolicy, upgradePolicy, type ClosePolicy } from './close-policy';
import { createFeed, type Feed } from './queue';
import type { Signer } from './signer';

/** The part of a WebSocket the client uses: the browser's, Node 22's global, or the `ws` package's. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
export type SocketFactory = (url: string) => SocketLike | Promise<SocketLike>;

export interface Update {
  type: 'update';
  channel: string;
  seq: number;
  slot: number;
  timestamp: number;
  data: Record<string, unknown>;
}
/** What a subscription yields: updates in `seq` order, each once, or a reset (take a new REST snapshot: the updates between are lost). */
export type LiveItem = Update | { type: 'reset'; channel: string; reason: 'not-resumable' | 'projection-switched' | 'gap' | 'sequence-restarted' };

export type LiveEvent =
  | { type: 'open'; connection: number }
  | { type: 'subscribed'; channel: string; resumed: boolean | undefined }
  | { type: 'close'; code: number; reason: string; policy: ClosePolicy }
  | { type: 'refused'; status: number; policy: ClosePolicy }
  | { type: 'duplicate'; channel: string; seq: number }
  | { type: 'gap'; channel: string; after: number; seq: number }
  | { type: 'error'; message: string };

export interface LiveOptions {
  /** `ws://host/ws` or `wss://…`. */
  url: string;
  signer?: Signer;
  domain: string;
  clock: Clock;
  /** How a socket is opened: the global `WebSocket` by default, the `ws` package in Node 20 (`createNodeSocket`). */
  socket?: SocketFactory;
  backoff?: { baseMs: number; maxMs: number };
  /** A subscribe unanswered this long ends the socket and resumes on a new one (default 10 s): a hung replica behind a balancer. */
  subscribeTimeoutMs?: number;
  /** The tenant's CHAIN_ID, named in a positions subscription's signed message. */
  chain?: string;
  random?: () => number;
  onEvent?: (e: LiveEvent) => void;
}

interface ChannelState {
  channel: string;
  feed: Feed<LiveItem>;
  last: number;
  /** Subscribed at least once: the next subscribe resumes from `last`. */
  started: boolean;
  /** Subscribed afresh without a `latestSeq` in the answer: the first update sets where the sequence is. */
  unanchored: boolean;
  /** The unanswered subscribe's timer. */
  waiting?: ReturnType<typeof setTimeout>;
}

const OPEN = 1;

/** The browser's (or Node 22's) global WebSocket, through the shape above. */
export const globalSocket: SocketFactory = (url) => {
  const W = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;
  if (!W) throw new Error('no global WebSocket here: pass `socket: createNodeSocket` from "@market-indexer/client/node" (the ws package)');
  return new W(url);
};

/**
 * A `/ws` client (D-526): one socket for any number of channels; every update once and in
 * order (a duplicate `seq` dropped, a gap reported as a reset); when the socket ends, the close
 * policy decides: reconnect with backoff and resume each channel from its last `seq`, start over
 * (4010, or `resumed: false`: a reset, then live again), or end the subscriptions with the error.
 * Positions channels are signed again on every subscribe, with a fresh nonce.
 */
export function createLiveClient(o: LiveOptions) {
  const channels = new Map<string, ChannelState>();
  const backoff = o.backoff ?? { baseMs: 200, maxMs: 10_000 };
  const random = o.random ?? Math.random;
  const open = o.socket ?? globalSocket;
  let socket: SocketLike | undefined;
  let stopped = false;
  let failures = 0;
  let connections = 0;
  let connecting: Promise<void> | undefined;
  /** The server's `connected` came on this socket: subscribes may be sent. */
  let ready = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const emit = (e: LiveEvent) => o.onEvent?.(e);

  const subscribeMessage = async (s: ChannelState) => {
    const msg: Record<string, unknown> = { type: 'subscribe', channel: s.channel };
    if (s.started) msg.resumeFrom = s.last;
    if (s.channel.startsWith('positions:')) {
      if (!o.signer) throw new Error(`${s.channel} needs a signer`);
      const { message, signature, publicKey } = await signedMessage(o.signer, `WS_SUBSCRIBE ${s.channel}`, { domain: o.domain, clock: o.clock, chain: o.chain });
      msg.auth = { message, signature, publicKey };
    }
    return JSON.stringify(msg);
  };

  const send = async (s: ChannelState) => {
    const ws = socket;
    if (!ws || !ready || ws.readyState !== OPEN) return;
    const text = await subscribeMessage(s);
    if (ws !== socket || ws.readyState !== OPEN) return;
    ws.send(text);
    clearTimeout(s.waiting);
    s.waiting = setTimeout(() => abandon(ws, `the subscribe of ${s.channel} was not answered`), o.subscribeTimeoutMs ?? 10_000);
  };

  /**
   * Ends a socket that stopped answering and goes on as after a network close (resume): it
   * delivers nothing more from now (its channels would otherwise arrive twice, once per socket,
   * D-431), and the `ws` package's terminate does not wait for a closing handshake a hung server
   * never sends.
   */
  const abandon = (ws: SocketLike, why: string) => {
    if (ws !== socket) return;
    ws.onmessage = null;
    const t = (ws as { terminate?: () => void }).terminate;
    if (t) t.call(ws);
    else ws.close(4000, 'subscribe timed out');
    emit({ type: 'close', code: 4000, reason: why, policy: 'resume' });
    afterClose('resume', why);
  };

  const fail = (err: Error) => {
    stopped = true;
    for (const s of channels.values()) s.feed.end(err);
    channels.clear();
  };

  const onMessage = (raw: unknown) => {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(typeof raw === 'string' ? raw : new TextDecoder().decode(raw as ArrayBuffer)) as Record<string, unknown>;
    } catch {
      return emit({ type: 'error', message: 'a frame that is not JSON' });
    }
    const s = typeof m.channel === 'string' ? channels.get(m.channel) : undefined;
    switch (m.type) {
      case 'connected':
        failures = 0;
        ready = true;
        for (const c of channels.values()) void send(c).catch((e: Error) => emit({ type: 'error', message: e.message }));
        return;
      case 'subscribed': {
        if (!s) return;
        clearTimeout(s.waiting);
        const resuming = s.started;
        s.started = true;
        if (resuming && m.resumed === false) {
          // The missed updates are no longer kept: the client's state must come from a new snapshot.
          s.last = typeof m.latestSeq === 'number' ? m.latestSeq : 0;
          s.feed.push({ type: 'reset', channel: s.channel, reason: 'not-resumable' });
        } else if (!resuming) {
          s.unanchored = typeof m.latestSeq !== 'number';
          s.last = typeof m.latestSeq === 'number' ? m.latestSeq : 0;
        }
        emit({ type: 'subscribed', channel: s.channel, resumed: typeof m.resumed === 'boolean' ? m.resumed : undefined });
        return;
      }
      case 'update': {
        if (!s) return;
        const seq = m.seq as number;
        if (seq === 1 && s.last > 1 && s.started) {
          // The channel's sequence started over (its counter expired after a quiet day, or was
          // lost): not a replayed duplicate, which is never seq 1 once past it. Lost in between: a reset.
          emit({ type: 'gap', channel: s.channel, after: s.last, seq });
          s.feed.push({ type: 'reset', channel: s.channel, reason: 'sequence-restarted' });
          s.last = 0;
          s.unanchored = true;
        }
        if (seq <= s.last) return emit({ type: 'duplicate', channel: s.channel, seq });
        if (seq !== s.last + 1 && s.started && !s.unanchored) {
          emit({ type: 'gap', channel: s.channel, after: s.last, seq });
          s.feed.push({ type: 'reset', channel: s.channel, reason: 'gap' });
        }
        s.last = seq;
        s.unanchored = false;
        s.feed.push(m as unknown as Update);
        return;
      }
      case 'error':
        emit({ type: 'error', message: String(m.message ?? m.error ?? 'error') });
        return;
      default:
        return;
    }
  };

  const schedule = () => {
    if (stopped || timer) return;
    const ms = random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** failures);
    failures += 1;
    timer = setTimeout(() => {
      timer = undefined;
      void connect().catch(() => schedule());
    }, ms);
  };

  const afterClose = (policy: ClosePolicy, error: string) => {
    socket = undefined;
    ready = false;
    for (const s of channels.values()) clearTimeout(s.waiting);
    if (stopped) return;
    switch (policy) {
      case 'fatal':
        return fail(new Error(error));
      case 'start-over':
        for (const s of channels.values()) {
          s.started = false;
          s.last = 0;
          s.feed.push({ type: 'reset', channel: s.channel, reason: 'projection-switched' });
        }
        return schedule();
      case 'resume':
        return schedule();
      default: {
        const never: never = policy;
        throw new Error(`unknown policy ${String(never)}`);
      }
    }
  };

  const connect = (): Promise<void> => {
    if (connecting) return connecting;
    connecting = (async () => {
      const ws = await open(o.url);
      socket = ws;
      let opened = false;
      ws.onmessage = (ev) => onMessage(ev.data);
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => {
          opened = true;
          connections += 1;
          emit({ type: 'open', connection: connections });
          resolve();
        };
        ws.onerror = (ev) => {
          // The `ws` package names a refused upgrade's status; a browser only says the socket failed.
          const status = /Unexpected server response: (\d{3})/.exec(String((ev as { message?: string })?.message ?? ''))?.[1];
          if (!opened && status) {
            const policy = upgradePolicy(Number(status));
            emit({ type: 'refused', status: Number(status), policy });
            (ws as { refusedStatus?: number }).refusedStatus = Number(status);
          }
        };
        ws.onclose = (ev) => {
          const refused = (ws as { refusedStatus?: number }).refusedStatus;
          const policy = refused !== undefined ? upgradePolicy(refused) : closePolicy(ev.code, ev.reason);
          // An abandoned socket's close was reported when it was abandoned.
          const current = ws === socket || !opened;
          if (refused === undefined && current) emit({ type: 'close', code: ev.code, reason: ev.reason, policy });
          if (!opened) reject(new Error(refused !== undefined ? `the upgrade was refused: HTTP ${refused}` : `closed before it opened (${ev.code})`));
          if (current) afterClose(policy, refused !== undefined ? `/ws refused the upgrade: HTTP ${refused}` : `/ws closed ${ev.code} ${ev.reason}`);
        };
      });
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  return {
    /** Opens the socket (the first `subscribe` does too); a refused first connection is retried as the policy says. */
    connect: () => connect().catch(() => undefined),
    /** Updates of one channel (`market:{id}`, `orderbook:{id}`, `positions:{wallet}`), as an async iterator. */
    subscribe(channel: string): AsyncIterableIterator<LiveItem> {
      const existing = channels.get(channel);
      if (existing) return existing.feed;
      const feed = createFeed<LiveItem>(() => {
        channels.delete(channel);
        if (socket?.readyState === OPEN) socket.send(JSON.stringify({ type: 'unsubscribe', channel }));
      });
      const s: ChannelState = { channel, feed, last: 0, started: false, unanchored: false };
      channels.set(channel, s);
      stopped = false;
      if (ready) void send(s).catch((e: Error) => emit({ type: 'error', message: e.message }));
      else if (!socket) void connect().catch(() => schedule());
      return feed;
    },
    /** The last seq received on a channel. */
    last: (channel: string) => channels.get(channel)?.last ?? 0,
    connections: () => connections,
    close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const s of channels.values()) clearTimeout(s.waiting);
      for (const s of channels.values()) s.feed.end();
      channels.clear();
      socket?.close(1000, 'client done');
    },
  };
}
export type LiveClient = ReturnType<typeof createLiveClient>;
