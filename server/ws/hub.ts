import { propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import type { Bus, Unsubscribe } from '../../core/redis/bus';
import { CHAIN_ATTRIBUTES as ATTR, CHAIN_SPANS } from '../../core/telemetry/trace-chain';
import { envelopeSchema, parseEnvelope, type UpdateEnvelope, type UpdateLog } from '../../core/redis/updates';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { backpressureStep, encode } from './protocol';

/** What the hub needs of a connection. */
export interface HubClient {
  readonly bufferedAmount: number;
  send(frame: Buffer): void;
  /** Called once when backpressure gives up on the client. */
  closeForBackpressure(): void;
  /** Consecutive skipped updates (spec 8 backpressure). */
  skips: number;
  readonly closed: boolean;
}

export interface Backpressure {
  maxBufferedBytes: number;
  maxSkips: number;
}

export type SubscribeOutcome =
  | { resumed: 'none' }
  | { resumed: 'replayed'; count: number; latest: number }
  | { resumed: 'snapshot'; latest: number };

interface ChannelState {
  clients: Set<HubClient>;
  /** Clients replaying `resumeFrom`: live frames wait here until the replay is sent. */
  buffering: Map<HubClient, { seq: number; frame: Buffer }[]>;
  /** Subscribes waiting for the bus subscription: the channel must not be released under them. */
  joining: number;
  bus: Promise<Unsubscribe>;
  /** The seq of the last update this replica received on the bus. */
  liveSeq: number;
  /**
   * Clients whose replay went past `liveSeq`, with the seq it reached. The stream and the bus are
   * two Redis connections: a replay can hold an update whose bus message is still on its way, and
   * that message must not reach the client a second time.
   */
  ahead: Map<HubClient, number>;
}

/**
 * Channel fan-out (design 5): one bus subscription per channel in use in this process,
 * reference counted by the channel's local subscribers; each update is framed once and the
 * same buffer goes to every subscriber, with per-client backpressure.
 */
export function createHub(opts: {
  bus: Bus;
  updates: UpdateLog | undefined;
  metrics: Metrics;
  logger: Logger;
  backpressure: Backpressure;
  now?: () => number;
  /**
   * The live projection schema (D-410; `public` when not given): updates sent under another
   * schema (a writer still running on the schema switched away from) are not delivered.
   */
  liveSchema?: () => string;
}) {
  const { bus, metrics, logger } = opts;
  const now = opts.now ?? Date.now;
  const channels = new Map<string, ChannelState>();
  const tracer = trace.getTracer('market-indexer/ws');

  const frameOf = (channel: string, e: UpdateEnvelope) =>
    encode({ type: 'update', channel, data: e.data, timestamp: now(), seq: e.seq, slot: e.slot });

  /** True when the frame was written; the caller counts sends (one metric update per fan-out). */
  function deliver(client: HubClient, frame: Buffer): boolean {
    const action = backpressureStep(client, opts.backpressure);
    if (action === 'send') {
      client.send(frame);
      return true;
    }
    metrics.wsMessagesSkipped.inc();
    if (action === 'close') {
      metrics.wsBackpressureCloses.inc();
      removeClient(client);
      client.closeForBackpressure();
    }
    return false;
  }
  const deliverOne = (client: HubClient, frame: Buffer) => deliver(client, frame) && metrics.wsMessagesSent.inc();

  function onMessage(channel: string, state: ChannelState, message: string): void {
    // Only the channel's current state delivers. A state released while its bus subscription
    // was still being made keeps its handler until that subscription completes; if the channel
    // was subscribed again meanwhile, both handlers receive the next message, and looking the
    // state up by name would send it twice to the new state's clients.
    if (channels.get(channel) !== state) return;
    const env = parseEnvelope(message);
    if (!env) {
      logger.warn({ channel }, 'dropped a bus message that is not an update envelope');
      return;
    }
    if (envelopeSchema(env) !== (opts.liveSchema?.() ?? 'public')) return;
    // The update's trace (D-86): a child of the indexer's publish span, when it sent one and
    // sampled it. Without tracing, the tracer and the propagator are no-ops.
    const span = env.tp
      ? tracer.startSpan(CHAIN_SPANS.fanout, { kind: SpanKind.CONSUMER }, propagation.extract(ROOT_CONTEXT, { traceparent: env.tp }))
      : undefined;
    const frame = frameOf(channel, env);
    for (const queue of state.buffering.values()) queue.push({ seq: env.seq, frame });
    // A seq lower than the last one: the channel started over (its counter was lost), and no
    // replay is ahead of it any more.
    if (env.seq < state.liveSeq) state.ahead.clear();
    state.liveSeq = env.seq;
    let sent = 0;
    const subscribers = state.clients.size;
    // Deleting from a Set while iterating it is safe: a backpressure close removes the client.
    for (const client of state.clients) {
      if (state.ahead.size !== 0 && hadInReplay(state, client, env.seq)) continue;
      if (deliver(client, frame)) sent += 1;
    }
    if (sent) metrics.wsMessagesSent.inc(sent);
    if (span?.isRecording()) {
      span.setAttributes({
        [ATTR.channel]: channel,
        [ATTR.seq]: env.seq,
        [ATTR.slot]: env.slot,
        [ATTR.subscribers]: subscribers,
        [ATTR.sent]: sent,
        [ATTR.skipped]: subscribers - sent,
      });
    }
    span?.end();
  }

  /** Whether the client's replay already sent `seq`; once the bus passes its replay, it is not ahead any more. */
  function hadInReplay(state: ChannelState, client: HubClient, seq: number): boolean {
    const reached = state.ahead.get(client);
    if (reached === undefined) return false;
    if (seq <= reached) return true;
    state.ahead.delete(client);
    return false;
  }

  function channelState(channel: string): ChannelState {
    const current = channels.get(channel);
    if (current) return current;
    const state: ChannelState = { clients: new Set(), buffering: new Map(), joining: 0, bus: Promise.resolve(async () => {}), liveSeq: 0, ahead: new Map() };
    state.bus = bus.subscribe(channel, (message) => onMessage(channel, state, message));
    channels.set(channel, state);
    state.bus.catch(() => channels.get(channel) === state && channels.delete(channel));
    return state;
  }

  function release(channel: string, state: ChannelState): void {
    if (state.clients.size || state.buffering.size || state.joining || channels.get(channel) !== state) return;
    channels.delete(channel);
    state.bus.then((unsubscribe) => unsubscribe()).catch((err: Error) => logger.warn({ err: err.message, channel }, 'bus unsubscribe failed'));
  }

  function removeClient(client: HubClient): void {
    for (const [channel, state] of channels) {
      const had = state.clients.delete(client) || state.buffering.delete(client);
      state.ahead.delete(client);
      if (had) {
        metrics.wsSubscriptions.dec();
        release(channel, state);
      }
    }
  }

  return {
    /**
     * Adds the client to the channel once the bus subscription is live. With `resumeFrom`,
     * `beforeReplay` runs first (the `subscribed` answer), then the missed updates, then the
     * live ones that arrived meanwhile, with no gap and no duplicate.
     */
    async subscribe(client: HubClient, channel: string, resumeFrom: number | undefined, beforeReplay: (o: SubscribeOutcome) => void): Promise<void> {
      const state = channelState(channel);
      metrics.wsSubscriptions.inc();
      if (resumeFrom === undefined || !opts.updates) {
        state.joining += 1;
        try {
          await state.bus;
        } catch (err) {
          metrics.wsSubscriptions.dec();
          throw err;
        } finally {
          state.joining -= 1;
        }
        if (client.closed) {
          metrics.wsSubscriptions.dec();
          release(channel, state);
          return;
        }
        state.clients.add(client);
        beforeReplay({ resumed: 'none' });
        return;
      }
      const queue: { seq: number; frame: Buffer }[] = [];
      state.buffering.set(client, queue);
      try {
        await state.bus;
        const r = await opts.updates.since(channel, resumeFrom);
        if (!state.buffering.has(client)) return; // removed while waiting (closed)
        let last = resumeFrom;
        if (r.ok) {
          beforeReplay({ resumed: 'replayed', count: r.entries.length, latest: r.latest });
          for (const e of r.entries) {
            deliverOne(client, frameOf(channel, e));
            last = e.seq;
          }
        } else {
          beforeReplay({ resumed: 'snapshot', latest: r.latest });
          last = r.latest;
        }
        // A replay can overflow a slow client's buffer, and backpressure then removed it.
        if (!state.buffering.delete(client)) return;
        state.clients.add(client);
        for (const q of queue) if (q.seq > last && state.clients.has(client)) deliverOne(client, q.frame);
        if (last > state.liveSeq && state.clients.has(client)) state.ahead.set(client, last);
      } catch (err) {
        if (state.buffering.delete(client)) {
          metrics.wsSubscriptions.dec();
          release(channel, state);
        }
        throw err;
      }
    },
    unsubscribe(client: HubClient, channel: string): void {
      const state = channels.get(channel);
      if (!state) return;
      state.ahead.delete(client);
      if (state.clients.delete(client) || state.buffering.delete(client)) {
        metrics.wsSubscriptions.dec();
        release(channel, state);
      }
    },
    removeClient,
    /**
     * Forgets every channel and subscriber (the live projection schema changed, D-410): the
     * caller closes the connections; a subscription made afterwards starts on fresh state, with
     * the new schema's sequences.
     */
    reset(): void {
      for (const [channel, state] of [...channels]) {
        const subscribers = state.clients.size + state.buffering.size;
        state.clients.clear();
        state.buffering.clear();
        state.ahead.clear();
        if (subscribers) metrics.wsSubscriptions.dec(subscribers);
        // A subscribe still waiting for the bus finds its client closed and counts itself out.
        channels.delete(channel);
        state.bus.then((unsubscribe) => unsubscribe()).catch((err: Error) => logger.warn({ err: err.message, channel }, 'bus unsubscribe failed'));
      }
    },
    /** Channels with local subscribers (each holds one bus subscription). */
    channelCount: () => channels.size,
  };
}

export type Hub = ReturnType<typeof createHub>;
