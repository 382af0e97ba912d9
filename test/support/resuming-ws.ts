import { createClock, createLiveClient, type LiveEvent, type Signer, type Update } from '../../client/src';
import { createNodeSocket } from '../../client/src/node';

export interface ResumingWsOptions {
  /** The wallet of the client's positions channel (signed again, with a fresh nonce, on every subscribe). */
  signer?: Signer;
  /** The signed messages' domain (one of the tenant's PUBLIC_HOSTS; default the URL's host) and chain. */
  domain?: string;
  chain?: string;
  /** Every update the SDK yields (once, in seq order), with the connection that delivered it (1 for the first). */
  onUpdate?: (u: Update, connection: number) => void;
  /** A seq the SDK dropped as already received, with the connection it came on. */
  onDuplicate?: (channel: string, seq: number, connection: number) => void;
  /** A reset the SDK yielded (`projection-switched` after a 4010, `not-resumable`, `gap`). */
  onReset?: (channel: string, reason: string) => void;
  subscribeTimeoutMs?: number;
}

/**
 * The project's own `/ws` clients are the SDK's (D-535): its reconnect with backoff, its close
 * policy (resume with `resumeFrom`, start over after 4010, stop on what would repeat), its
 * subscribe timeout and its gap and duplicate detection by seq. This wraps it with what the
 * fault suite and the journeys judge it by: the close codes of the sockets the server ended,
 * failed connections, connections that resumed, sockets open at once, and errors (`error`
 * frames, a resume the server could not serve, a subscription ended by the policy).
 */
export function resumingWsClient(url: string, channels: string[], opts: ResumingWsOptions = {}) {
  const closes: number[] = [];
  const errors: string[] = [];
  let connection = 0;
  let isOpen = false;
  let failedConnects = 0;
  let overlaps = 0;
  const resumedOn = new Set<number>();
  const subscribed = new Set<string>();
  const onEvent = (e: LiveEvent) => {
    switch (e.type) {
      case 'open':
        if (isOpen) overlaps += 1;
        isOpen = true;
        connection = e.connection;
        return;
      case 'close':
        if (isOpen) closes.push(e.code);
        else failedConnects += 1;
        isOpen = false;
        return;
      case 'refused':
        failedConnects += 1;
        return;
      case 'subscribed':
        subscribed.add(e.channel);
        if (e.resumed !== undefined) resumedOn.add(connection);
        return;
      case 'duplicate':
        return opts.onDuplicate?.(e.channel, e.seq, connection);
      case 'error':
        errors.push(e.message);
        return;
      default:
        return;
    }
  };
  const live = createLiveClient({ url, signer: opts.signer, domain: opts.domain ?? new URL(url).hostname, chain: opts.chain, clock: createClock(), socket: createNodeSocket, subscribeTimeoutMs: opts.subscribeTimeoutMs, onEvent });
  const reading: Promise<void>[] = [];

  return {
    /** Subscribes every channel; resolves once each is subscribed (later reconnects are the SDK's). */
    async connect(deadlineMs = 30_000): Promise<void> {
      for (const channel of channels) {
        const feed = live.subscribe(channel);
        reading.push(
          (async () => {
            try {
              for await (const item of feed) {
                if (item.type === 'update') opts.onUpdate?.(item, connection);
                else {
                  if (item.reason === 'not-resumable') errors.push(`${channel}: not resumable`);
                  opts.onReset?.(channel, item.reason);
                }
              }
            } catch (err) {
              errors.push(`${channel}: ${(err as Error).message}`);
            }
          })(),
        );
      }
      const until = Date.now() + deadlineMs;
      while (channels.some((c) => !subscribed.has(c))) {
        if (Date.now() > until) throw new Error(`${url}: ${channels.filter((c) => !subscribed.has(c)).join(', ')} not subscribed in ${deadlineMs} ms (${errors.join('; ')})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    closes,
    errors,
    /** The highest seq received on a channel (0 before any). */
    last: (channel: string) => live.last(channel),
    /** Sockets the server (or the network) ended while the client ran: the SDK reconnected after each. */
    reconnects: () => closes.length,
    failedConnects: () => failedConnects,
    /** Connections that subscribed again with `resumeFrom`. */
    resumes: () => resumedOn.size,
    /** Times a socket opened while an earlier one of this client was still open (must stay 0). */
    overlaps: () => overlaps,
    open: () => isOpen,
    async stop() {
      live.close();
      await Promise.all(reading);
    },
  };
}
export type ResumingWsClient = ReturnType<typeof resumingWsClient>;
