import WebSocket from 'ws';
import type { Logger } from '../../core/telemetry/logger';

/**
 * `logsSubscribe` (mentions: the program, commitment confirmed) over the RPC WebSocket,
 * reconnecting with backoff. Notifications only say "something happened"; the caller's
 * signature poll fetches and orders what happened, so a missed notification costs latency,
 * never data.
 *
 * Kept alive as providers ask (D-475): a ping frame every `pingIntervalMs` (Helius closes a
 * socket after 10 minutes without client traffic and asks for a ping a minute); a socket from
 * which nothing (a message, a pong) came for `silentAfterMs` is taken for dead and replaced (a
 * half-open connection never closes by itself); the subscribe call's answer is checked, and
 * an error or no answer within `subscribeTimeoutMs` is logged and the socket replaced, so
 * "connected" means subscribed.
 */
export function subscribeProgramLogs(opts: {
  wsUrl: string;
  programId: string;
  logger: Logger;
  /** `err`: the transaction's error, null when it succeeded. */
  onNotification: (signature: string, slot: number, err: unknown) => void;
  /** True once the subscription is confirmed, false when the socket is lost. */
  onStateChange?: (connected: boolean) => void;
  pingIntervalMs?: number;
  silentAfterMs?: number;
  subscribeTimeoutMs?: number;
}): { close(): void } {
  const pingMs = opts.pingIntervalMs ?? 30_000;
  const silentMs = opts.silentAfterMs ?? 2 * pingMs + 5_000;
  const subscribeMs = opts.subscribeTimeoutMs ?? 10_000;
  let ws: WebSocket | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  const SUBSCRIBE_ID = 1;

  const connect = () => {
    if (closed) return;
    const socket = new WebSocket(opts.wsUrl, { handshakeTimeout: 10_000 });
    ws = socket;
    let heardAt = performance.now();
    let subscribed = false;
    let keepAlive: NodeJS.Timeout | undefined;
    let answerDue: NodeJS.Timeout | undefined;
    /** Replaces this socket: the close handler reconnects with backoff. */
    const drop = (why: string, detail: Record<string, unknown> = {}) => {
      opts.logger.warn({ ...detail, wsUrl: redact(opts.wsUrl) }, `logsSubscribe: ${why}; reconnecting`);
      socket.terminate();
    };
    const heard = () => (heardAt = performance.now());

    socket.on('open', () => {
      heard();
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: SUBSCRIBE_ID, method: 'logsSubscribe', params: [{ mentions: [opts.programId] }, { commitment: 'confirmed' }] }));
      answerDue = setTimeout(() => drop(`no answer to the subscribe call in ${subscribeMs} ms`), subscribeMs);
      answerDue.unref();
      keepAlive = setInterval(() => {
        const quiet = performance.now() - heardAt;
        if (quiet > silentMs) return drop(`nothing heard for ${Math.round(quiet)} ms (no pong, no message)`);
        socket.ping();
      }, pingMs);
      keepAlive.unref();
    });
    socket.on('pong', heard);
    socket.on('message', (raw) => {
      heard();
      let msg: { id?: unknown; result?: unknown; error?: { code?: number; message?: string }; method?: string; params?: { result?: { context?: { slot?: number }; value?: { signature?: string; err?: unknown } } } };
      try {
        msg = JSON.parse(raw.toString());
      } catch {
        return;
      }
      if (msg.id === SUBSCRIBE_ID && !subscribed) {
        clearTimeout(answerDue);
        if (msg.error || typeof msg.result !== 'number') return drop('the subscribe call was refused', { code: msg.error?.code, message: msg.error?.message });
        subscribed = true;
        attempt = 0;
        opts.onStateChange?.(true);
        return;
      }
      if (msg.method !== 'logsNotification') return;
      const sig = msg.params?.result?.value?.signature;
      if (typeof sig === 'string') opts.onNotification(sig, msg.params?.result?.context?.slot ?? 0, msg.params?.result?.value?.err ?? null);
    });
    socket.on('error', (err) => opts.logger.debug({ err: err.message }, 'logsSubscribe socket error'));
    socket.on('close', (code) => {
      clearInterval(keepAlive);
      clearTimeout(answerDue);
      // Closed by the owner: nothing to report, no one to reconnect for.
      if (closed) return;
      if (subscribed) opts.onStateChange?.(false);
      if (subscribed) opts.logger.info({ code }, 'logsSubscribe socket closed; reconnecting');
      const wait = Math.min(10_000, 250 * 2 ** Math.min(attempt++, 6));
      timer = setTimeout(connect, wait);
      timer.unref();
    });
  };
  connect();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      ws?.terminate();
    },
  };
}

/** The WebSocket URL without its query (a provider's API key travels there). */
const redact = (url: string) => url.replace(/\?.*$/, '?…');
