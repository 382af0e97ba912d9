import WebSocket from 'ws';
import type { Json } from './api';
import { WsClient } from './ws';

export interface ResumingWsOptions {
  /** The signed `auth` a channel's subscribe needs (a positions channel), or undefined. */
  auth?: (channel: string) => Json | undefined;
  /** Every frame every socket receives, with that socket's index in `sockets` (0 for the first). */
  onMessage?: (m: Json, socket: number) => void;
  /** The pause between two failed reconnects. */
  retryMs?: number;
  /** How long a subscribe may wait for its answer before the connection counts as failed. */
  subscribeTimeoutMs?: number;
  /**
   * What a close means for the next connection: `resume` (the default) subscribes again with
   * `resumeFrom`; `start-over` subscribes afresh, as after `4010` (the sequence started over, D-410).
   */
  onClose?: (code: number) => 'resume' | 'start-over';
}

/**
 * A /ws client as a D-53 application writes it: when the server closes its socket it reconnects
 * (through whatever balancer or Ingress `url` names) and subscribes each channel again with
 * `resumeFrom` the last seq it has. The fault suite and the upgrade journey each judge it their
 * own way (`onMessage`, `sockets`); the reconnect loop is this one, so a fix lands in both.
 */
export function resumingWsClient(url: string, channels: string[], opts: ResumingWsOptions = {}) {
  const sockets: WsClient[] = [];
  /** The close code of each socket the server (or the network) ended while the client ran. */
  const closes: number[] = [];
  const errors: string[] = [];
  const lastSeq = new Map<string, number>(channels.map((c) => [c, 0]));
  const subscribed = new Set<string>();
  let stopped = false;
  let failedConnects = 0;
  let overlaps = 0;
  let resumes = 0;

  const connect = async (): Promise<void> => {
    const s = await WsClient.open(url);
    // Two sockets of one client delivering at once would count their shared updates twice.
    if (sockets.some((x) => x.ws.readyState !== WebSocket.CLOSED && x !== s)) overlaps += 1;
    sockets.push(s);
    const socket = sockets.length - 1;
    s.ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString()) as Json;
      if (m.type === 'update' && lastSeq.has(m.channel)) lastSeq.set(m.channel, Math.max(lastSeq.get(m.channel)!, m.seq as number));
      else if (m.type === 'error') errors.push(String(m.message));
      opts.onMessage?.(m, socket);
    });
    let resumed = false;
    try {
      await s.next((m) => m.type === 'connected');
      for (const channel of channels) {
        const auth = opts.auth?.(channel);
        const resuming = subscribed.has(channel);
        const from = lastSeq.get(channel)!;
        const r = await s.request({ type: 'subscribe', channel, ...(resuming ? { resumeFrom: from } : {}), ...(auth ? { auth } : {}) }, opts.subscribeTimeoutMs);
        if (r.type !== 'subscribed') errors.push(`${channel}: ${JSON.stringify(r)}`);
        if (resuming && r.resumed === false) errors.push(`${channel}: not resumable from ${from}`);
        subscribed.add(channel);
        resumed ||= resuming;
      }
    } catch (err) {
      // A subscribe that timed out leaves a socket subscribed to the channels before it: an
      // application that starts over on a new socket ends the old one first, or it would read
      // those channels twice (once per socket).
      s.ws.terminate();
      await s.closed;
      throw err;
    }
    if (resumed) resumes += 1;
    void s.closed.then(({ code }) => {
      if (stopped) return;
      closes.push(code);
      if (opts.onClose?.(code) === 'start-over') {
        subscribed.clear();
        for (const c of channels) lastSeq.set(c, 0);
      }
      void reconnect();
    });
  };
  // A reconnect that fails is retried, as a client with a reconnect loop does; failures are counted.
  const reconnect = async (): Promise<void> => {
    while (!stopped) {
      try {
        return await connect();
      } catch {
        failedConnects += 1;
        await new Promise((r) => setTimeout(r, opts.retryMs ?? 200));
      }
    }
  };

  return {
    /** The first connection; a failure throws (later ones are retried). */
    connect,
    sockets,
    closes,
    /** `error` frames and refused or unresumable subscribes. */
    errors,
    /** The highest seq received on a channel (0 before any). */
    last: (channel: string) => lastSeq.get(channel)!,
    /** Sockets the server ended while the client ran: each was followed by a reconnect. */
    reconnects: () => closes.length,
    failedConnects: () => failedConnects,
    /** Connections that subscribed again with `resumeFrom`. */
    resumes: () => resumes,
    /** Times a new socket opened while an earlier one of this client was still open (must stay 0). */
    overlaps: () => overlaps,
    stop() {
      stopped = true;
      sockets.forEach((s) => s.ws.terminate());
    },
  };
}
export type ResumingWsClient = ReturnType<typeof resumingWsClient>;
