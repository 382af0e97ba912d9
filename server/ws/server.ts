/**
 * `/ws` on the API's HTTP server (spec 6.1, 7.3, 8; design 5): the options and the wiring of
 * its parts, read top-down in `attachWebSocketServer`, and what a connection does with its
 * messages (subscribe, unsubscribe, each client's messages one at a time, in order). The parts:
 * `upgrade.ts` admits an upgrade or refuses it before the handshake, `auth.ts` checks a
 * `positions:` subscription's signature, `limits.ts` publishes the limits and counts refusals,
 * `lifecycle.ts` pings and shuts down, `client.ts` is one connection's state; `hub.ts` fans the
 * channels out, `protocol.ts` holds the messages.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Common } from '../../core/common';
import { WS_LIMITS } from '../../core/limits';
import type { Bus } from '../../core/redis/bus';
import type { NonceStore } from '../../core/redis/nonce-store';
import type { UpdateLog } from '../../core/redis/updates';
import type { SignatureVerifier } from '../../core/ed25519';
import { v1ErrorBody, type ErrorWriter } from '../http/errors';
import type { PlanLimits } from '../limits/plan-limits';
import type { AuthFailureBudget } from '../limits/rate-limit';
import { createSubscribeAuth } from './auth';
import { closeClient, send, sendError, type Client } from './client';
import { createFrameSender } from './frame-sender';
import { createHub, type SubscribeOutcome } from './hub';
import type { KnownMarket } from './known-markets';
import type { ConnectionLeases } from './ip-leases';
import { startLifecycle } from './lifecycle';
import { instrumentLimits } from './limits';
import {
  AUTH_FAILURES_REASON,
  UNKNOWN_MARKETS_REASON,
  BACKPRESSURE_REASON,
  CLOSE,
  CONNECTED_MESSAGE,
  FLOOD_REASON,
  KEY_REVOKED_REASON,
  MAX_MESSAGE_BYTES,
  MAX_SUBSCRIPTIONS,
  PROJECTION_SWITCHED_REASON,
  RESNAPSHOT_MESSAGE,
  WS_ERRORS,
  WS_SUBPROTOCOL,
  parseChannel,
  parseLegacyClientMessage,
  parseClientMessage,
  parseResumeFrom,
  type Channel,
  type WsAuth,
} from './protocol';
import { createUpgradeAdmission, type Admitted } from './upgrade';

export { WS_PATH } from '../../core/constants';
export { WS_AUTH_FAILURE_REASONS } from './auth';
export { WS_REFUSAL_REASONS } from './limits';

export interface WsOptions {
  pingIntervalMs: number;
  maxClients: number;
  /** Spec 8: 1 MB and 50. */
  maxBufferedBytes: number;
  maxSkips: number;
  /** Client messages waiting for processing before the connection is closed as a flood. */
  maxPendingMessages: number;
  /** Failed authentications after which a connection is closed (D-100). */
  maxAuthFailures: number;
  /** Subscriptions to unknown markets after which a connection is closed (D-352). */
  maxUnknownMarkets: number;
}

/** How long a subscription waits for its market lookup before it is let through (D-352). */
const MARKET_LOOKUP_TIMEOUT_MS = 1_000;

export const DEFAULT_WS_OPTIONS: Omit<WsOptions, 'pingIntervalMs' | 'maxClients'> = {
  maxBufferedBytes: WS_LIMITS.maxBufferedBytes,
  maxSkips: WS_LIMITS.maxSkips,
  maxPendingMessages: WS_LIMITS.maxPendingMessages,
  maxAuthFailures: WS_LIMITS.maxAuthFailures,
  maxUnknownMarkets: WS_LIMITS.maxUnknownMarkets,
};

export interface WsServer {
  clientCount(): number;
  channelCount(): number;
  /** Refuses new upgrades from now on (shutdown step 1, before HTTP draining). */
  refuseNew(): void;
  /** Closes every socket with 1001 and a reason; resolves when they are gone. */
  close(): Promise<void>;
  /**
   * The live projection schema changed (D-410): forgets every subscription and closes every
   * connection with 4010, so clients take a fresh snapshot and subscribe on the new schema's
   * sequences. Returns how many connections it closed.
   */
  projectionSwitched(): number;
}

/**
 * Upgrades are refused before the handshake when the process is full, the IP holds its
 * cluster-wide quota, or the server is shutting down. Each client's messages are handled one at
 * a time, in order.
 */
export function attachWebSocketServer(opts: {
  common: Common;
  server: http.Server;
  bus: Bus;
  updates: UpdateLog | undefined;
  nonceStore: NonceStore;
  /** The client IP's pre-authentication budget, shared with HTTP (D-77). */
  authFailures: AuthFailureBudget;
  /** The Ed25519 check (node:crypto by default); tests count its calls. */
  verifySignature?: SignatureVerifier;
  leases: ConnectionLeases;
  /** Whether a `market:` / `orderbook:` key names an indexed market (cached, D-352). */
  knownMarket: KnownMarket;
  /** The compiled `trust proxy` of the Express app, so the client IP is the one rate limits use. */
  trust: (addr: string, i: number) => boolean;
  options: WsOptions;
  /**
   * The appendix variant (D-158): connections counted per API-key plan (`X-API-Key` header or
   * `apiKey` query parameter; Free by IP without one) instead of per IP, and its subscribe form.
   */
  plans?: PlanLimits;
  /** The presentation's error body, for refused upgrades (v1's by default; the variant's own, D-160). */
  errorBody?: ErrorWriter;
  /** The live projection schema whose updates are delivered (D-410); `public` when not given. */
  liveSchema?: () => string;
}): WsServer {
  const { common, options } = opts;
  const { config, metrics, logger } = common;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
    // A client that carries its key as a subprotocol also offers `market-indexer`, which is the
    // one selected: the key is not echoed back (D-191). Other offers select nothing, as before.
    handleProtocols: (offered) => (offered.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false),
  });
  const clients = new Set<Client>();
  const hub = createHub({
    bus: opts.bus,
    updates: opts.updates,
    metrics,
    logger,
    backpressure: { maxBufferedBytes: options.maxBufferedBytes, maxSkips: options.maxSkips },
    liveSchema: opts.liveSchema,
  });
  const refused = instrumentLimits({
    metrics,
    clients,
    limits: { ...options, maxConnectionsPerIp: config.ws.maxConnectionsPerIp },
    plans: opts.plans !== undefined,
  });
  const authorize = createSubscribeAuth({ config, metrics, nonceStore: opts.nonceStore, authFailures: opts.authFailures, verifySignature: opts.verifySignature });
  const lifecycle = startLifecycle({ clients, pingIntervalMs: options.pingIntervalMs, leases: opts.leases, wss, detach: () => opts.server.off('upgrade', onUpgradeEvent) });
  const admit = createUpgradeAdmission({
    trust: opts.trust,
    leases: opts.leases,
    plans: opts.plans,
    writeError: opts.errorBody ?? v1ErrorBody,
    maxClients: options.maxClients,
    clientCount: () => clients.size,
    accepting: lifecycle.accepting,
    refused,
  });
  // Updates: one frame per payload, one write per socket, corked per event-loop turn.
  const sendFrame = createFrameSender();

  function onUpgradeEvent(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    admit(req, socket)
      .then((admitted) => {
        if (!admitted) return;
        // Checked in the turn of the handshake, so shutdown's close() sees every client it must close.
        if (socket.destroyed || !lifecycle.accepting()) {
          opts.leases.release(admitted.lease);
          socket.destroy();
          return;
        }
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, admitted));
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'ws upgrade failed');
        socket.destroy();
      });
  }
  opts.server.on('upgrade', onUpgradeEvent);

  function onConnection(ws: WebSocket, { ip, lease, plan, keyId }: Admitted): void {
    const client: Client = {
      ws,
      ip,
      lease,
      plan,
      subscriptions: new Set(),
      alive: true,
      pending: 0,
      authFailures: 0,
      unknownMarkets: 0,
      queue: Promise.resolve(),
      closed: false,
      skips: 0,
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
      send: (frame) => sendFrame(ws, frame),
      closeForBackpressure: () => closeClient(client, CLOSE.policy, BACKPRESSURE_REASON),
    };
    clients.add(client);
    metrics.wsConnections.inc();
    if (plan) metrics.planWsConnections.inc({ plan });
    // A revoked key's connections are closed, on every replica, within the key cache's time (D-190).
    if (keyId && opts.plans) {
      client.unwatch = opts.plans.watch(keyId, () => {
        refused('key_revoked');
        closeClient(client, CLOSE.policy, KEY_REVOKED_REASON);
      });
    }
    ws.on('pong', () => (client.alive = true));
    ws.on('error', (err: Error & { code?: string }) => {
      // ws closes the connection itself (1009 for an oversized frame, 1002 for a protocol error).
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') refused('message_too_big');
      else logger.debug({ err: err.message }, 'ws client error');
    });
    ws.on('close', () => {
      client.closed = true;
      client.unwatch?.();
      clients.delete(client);
      hub.removeClient(client);
      opts.leases.release(lease);
      metrics.wsConnections.dec();
      if (plan) metrics.planWsConnections.dec({ plan });
    });
    ws.on('message', (data: RawData) => {
      if (++client.pending > options.maxPendingMessages) {
        refused('flood');
        closeClient(client, CLOSE.policy, FLOOD_REASON);
        return;
      }
      client.queue = client.queue
        .then(() => (client.closed ? undefined : onMessage(client, data)))
        .catch((err: unknown) => logger.error({ err }, 'ws message handling failed'))
        .finally(() => (client.pending -= 1));
    });
    send(client, { type: 'connected', message: CONNECTED_MESSAGE, timestamp: Date.now() });
  }

  async function onMessage(client: Client, data: RawData): Promise<void> {
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8');
    const parsed = opts.plans ? parseLegacyClientMessage(text) : parseClientMessage(text);
    if (!parsed.ok) return sendError(client, parsed.error);
    const m = parsed.message;
    const ch = parseChannel(m.channel);
    if (!ch.ok) return sendError(client, ch.error);
    const channel = ch.channel;
    switch (m.type) {
      case 'unsubscribe':
        if (client.subscriptions.delete(channel.name)) hub.unsubscribe(client, channel.name);
        return send(client, { type: 'unsubscribed', channel: channel.name });
      case 'subscribe':
        return subscribe(client, channel, m.auth, m.resumeFrom);
      default: {
        const never: never = m;
        throw new Error(`unhandled message ${JSON.stringify(never)}`);
      }
    }
  }

  async function subscribe(client: Client, channel: Channel, auth: WsAuth | undefined, rawResume: unknown): Promise<void> {
    const resume = parseResumeFrom(rawResume);
    if (!resume.ok) return sendError(client, WS_ERRORS.invalidResumeFrom);
    if (client.subscriptions.has(channel.name)) return send(client, { type: 'subscribed', channel: channel.name });
    if (client.subscriptions.size >= MAX_SUBSCRIPTIONS) {
      refused('max_subscriptions');
      return sendError(client, WS_ERRORS.maxSubscriptions);
    }
    if (channel.kind === 'positions') {
      const failure = await authorize(client.ip, channel, auth);
      if (failure) {
        sendError(client, failure.message);
        // A connection that keeps failing is closed: it has nothing left to try that a new
        // connection (a per-IP lease, a handshake) would not charge it for (D-100).
        if (++client.authFailures >= options.maxAuthFailures) {
          refused('auth_failures');
          closeClient(client, CLOSE.policy, AUTH_FAILURES_REASON);
        }
        return;
      }
    } else if (!(await marketKnown(channel))) {
      sendError(client, WS_ERRORS.unknownMarket(channel.key));
      // Each id not remembered costs a lookup: a connection that keeps naming unknown markets
      // is closed, as one that keeps failing authentication is (D-352).
      if (++client.unknownMarkets >= options.maxUnknownMarkets) {
        refused('unknown_markets');
        closeClient(client, CLOSE.policy, UNKNOWN_MARKETS_REASON);
      }
      return;
    }
    client.subscriptions.add(channel.name);
    try {
      await hub.subscribe(client, channel.name, resume.value, (o: SubscribeOutcome) => send(client, subscribedMessage(channel.name, o)));
    } catch (err) {
      client.subscriptions.delete(channel.name);
      logger.warn({ err: (err as Error).message, channel: channel.name }, 'ws subscribe failed');
      sendError(client, WS_ERRORS.unavailable);
    }
  }

  /**
   * Unknown only when the store says so in time: a lookup that fails or takes over a second (a
   * database away or hung) lets the subscription through, as before, rather than hold it.
   */
  async function marketKnown(channel: Channel): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), MARKET_LOOKUP_TIMEOUT_MS)));
    try {
      return await Promise.race([opts.knownMarket(channel.key), late]);
    } catch (err) {
      logger.debug({ err: (err as Error).message, channel: channel.name }, 'ws market lookup failed; subscribing anyway');
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    clientCount: () => clients.size,
    channelCount: () => hub.channelCount(),
    refuseNew: lifecycle.refuseNew,
    close: lifecycle.close,
    projectionSwitched() {
      hub.reset();
      let closed = 0;
      for (const client of clients) {
        if (client.closed) continue;
        closeClient(client, CLOSE.projectionSwitched, PROJECTION_SWITCHED_REASON);
        closed += 1;
      }
      return closed;
    },
  };
}

function subscribedMessage(channel: string, o: SubscribeOutcome): Record<string, unknown> {
  switch (o.resumed) {
    case 'none':
      return { type: 'subscribed', channel };
    case 'replayed':
      return { type: 'subscribed', channel, resumed: true, replayed: o.count, latestSeq: o.latest };
    case 'snapshot':
      return { type: 'subscribed', channel, resumed: false, latestSeq: o.latest, message: RESNAPSHOT_MESSAGE };
    default: {
      const never: never = o;
      throw new Error(`unhandled outcome ${JSON.stringify(never)}`);
    }
  }
}
