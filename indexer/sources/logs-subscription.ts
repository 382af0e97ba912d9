import WebSocket from 'ws';
import type { Logger } from '../../core/telemetry/logger';

/**
 * `logsSubscribe` (mentions: the program, commitment confirmed) over the RPC WebSocket,
 * reconnecting with backoff. Notifications only say "something happened"; the caller's
 * signature poll fetches and orders what happened, so a missed notification costs latency,
 * never data.
 */
export function subscribeProgramLogs(opts: {
  wsUrl: string;
  programId: string;
  logger: Logger;
  /** `err`: the transaction's error, null when it succeeded. */
  onNotification: (signature: string, slot: number, err: unknown) => void;
  onStateChange?: (connected: boolean) => void;
}): { close(): void } {
  let ws: WebSocket | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;

  const connect = () => {
    if (closed) return;
    ws = new WebSocket(opts.wsUrl, { handshakeTimeout: 10_000 });
    ws.on('open', () => {
      attempt = 0;
      ws!.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'logsSubscribe',
          params: [{ mentions: [opts.programId] }, { commitment: 'confirmed' }],
        }),
      );
      opts.onStateChange?.(true);
    });
    ws.on('message', (raw) => {
      let msg: { method?: string; params?: { result?: { context?: { slot?: number }; value?: { signature?: string; err?: unknown } } } };
      try {
        msg = JSON.parse(raw.toString());
      } catch {
        return;
      }
      if (msg.method !== 'logsNotification') return;
      const sig = msg.params?.result?.value?.signature;
      if (typeof sig === 'string') opts.onNotification(sig, msg.params?.result?.context?.slot ?? 0, msg.params?.result?.value?.err ?? null);
    });
    ws.on('error', (err) => opts.logger.debug({ err: err.message }, 'logsSubscribe socket error'));
    ws.on('close', () => {
      opts.onStateChange?.(false);
      if (closed) return;
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
