import { WS_PATH } from '../../core/constants';
import { WS_LIMIT_GAUGES, WS_LIMITS, type WsLimitKey } from '../../core/limits';
import { collectOnScrape } from '../../core/telemetry/metrics';
import type http from 'node:http';
import { STATUS_CODES } from 'node:http';
import { ApiError } from '../../core/http/errors';
import type { Duplex } from 'node:stream';
import proxyaddr from 'proxy-addr';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Common } from '../../core/common';
import type { Bus } from '../../core/redis/bus';
import type { NonceStore } from '../../core/redis/nonce-store';
import type { UpdateLog } from '../../core/redis/updates';
import type { SignatureVerifier } from '../auth/verify';
import { v1ErrorBody, type ErrorWriter } from '../http/errors';
import { verifyWalletAuth, type AuthFailure } from '../auth/wallet-auth';
import { API_PLANS, planOf, type PlanName } from '../../core/plans';
import type { PlanLimits } from '../limits/plan-limits';
import type { AuthFailureBudget } from '../limits/rate-limit';
import { admitUpgrade } from './api-key';
import { createFrameSender } from './frame-sender';
import { createHub, type HubClient, type SubscribeOutcome } from './hub';
import type { ConnectionLeases, Lease } from './ip-leases';
import { createTurnGate } from './turn-gate';
import {
  AUTH_FAILURES_REASON,
  BACKPRESSURE_REASON,
  CLOSE,
  CONNECTED_MESSAGE,
  FLOOD_REASON,
  KEY_REVOKED_REASON,
  MAX_MESSAGE_BYTES,
  MAX_SUBSCRIPTIONS,
  RESNAPSHOT_MESSAGE,
  SHUTDOWN_REASON,
  WS_ERRORS,
  WS_SUBPROTOCOL,
  encode,
  parseChannel,
  parseLegacyClientMessage,
  parseClientMessage,
  parseResumeFrom,
  type Channel,
  type WsAuth,
} from './protocol';

export { WS_PATH } from '../../core/constants';
const TEXT = { binary: false } as const;

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
}

export const DEFAULT_WS_OPTIONS: Omit<WsOptions, 'pingIntervalMs' | 'maxClients'> = {
  maxBufferedBytes: WS_LIMITS.maxBufferedBytes,
  maxSkips: WS_LIMITS.maxSkips,
  maxPendingMessages: WS_LIMITS.maxPendingMessages,
  maxAuthFailures: WS_LIMITS.maxAuthFailures,
};

interface Client extends HubClient {
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
  queue: Promise<void>;
  closed: boolean;
}

export interface WsServer {
  clientCount(): number;
  channelCount(): number;
  /** Refuses new upgrades from now on (shutdown step 1, before HTTP draining). */
  refuseNew(): void;
  /** Closes every socket with 1001 and a reason; resolves when they are gone. */
  close(): Promise<void>;
}

/** An upgrade refused with an HTTP response, its body in the presentation's error shape (D-50, D-160). */
function refuse(socket: Duplex, write: ErrorWriter, err: ApiError, extra: string[] = []): void {
  const status = err.status;
  const json = JSON.stringify(write(err));
  socket.end(
    [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, 'Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(json)}`, 'Connection: close', ...extra, '', json].join('\r\n'),
  );
}

/** Values of the `reason` label of service_ws_refusals_total. */
export const WS_REFUSAL_REASONS = [
  'shutting_down',
  'max_clients',
  'per_ip',
  'flood',
  'message_too_big',
  'max_subscriptions',
  'auth_failures',
  'invalid_api_key',
  'key_revoked',
] as const;
type RefusalReason = (typeof WS_REFUSAL_REASONS)[number];

const AUTH_MESSAGES: Record<Exclude<AuthFailure, 'action'>, string> = {
  missing: WS_ERRORS.authRequired,
  invalid_public_key: WS_ERRORS.walletMismatch,
  bad_signature: WS_ERRORS.badSignature,
  expired: WS_ERRORS.expired,
  nonce: WS_ERRORS.nonceUsed,
  invalid_message: WS_ERRORS.invalidAuthMessage,
  domain: WS_ERRORS.domainMismatch,
  chain: WS_ERRORS.chainMismatch,
};

/** Values of the `reason` label of service_ws_auth_failures_total. */
export const WS_AUTH_FAILURE_REASONS = ['missing', 'wallet_mismatch', 'action', ...(Object.keys(AUTH_MESSAGES) as (keyof typeof AUTH_MESSAGES)[])].filter(
  (r, i, all) => all.indexOf(r) === i,
);

/**
 * `/ws` on the API's HTTP server (spec 6.1, 7.3, 8; design 5). Upgrades are refused before
 * the handshake when the process is full, the IP holds its cluster-wide quota, or the server
 * is shutting down. Each client's messages are handled one at a time, in order.
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
}): WsServer {
  const { common, options } = opts;
  const { config, metrics, logger } = common;
  const writeError = opts.errorBody ?? v1ErrorBody;
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
  });
  let accepting = true;
  let upgrading = 0;
  // One signature verification per event-loop turn, across every connection (D-100).
  const verifyGate = createTurnGate();
  let closing: Promise<void> | undefined;

  // The documented limits as enforced here, and the live values closest to them, computed when
  // /metrics is scraped (a pass over at most WS_MAX_CLIENTS clients), not on every update.
  const limits: Record<WsLimitKey, number> = {
    wsClients: options.maxClients,
    wsConnectionsPerIp: config.ws.maxConnectionsPerIp,
    wsSubscriptionsPerClient: MAX_SUBSCRIPTIONS,
    wsSendBufferBytes: options.maxBufferedBytes,
    wsConsecutiveSkips: options.maxSkips,
  };
  for (const key of Object.keys(limits) as WsLimitKey[]) metrics.configuredLimit.set({ limit: WS_LIMIT_GAUGES[key].label }, limits[key]);
  const most = (value: (c: Client) => number) => () => {
    let m = 0;
    for (const c of clients) m = Math.max(m, value(c));
    return m;
  };
  collectOnScrape(metrics.wsClientSubscriptionsMax, most((c) => c.subscriptions.size));
  collectOnScrape(metrics.wsSendBufferMax, most((c) => c.ws.bufferedAmount));
  collectOnScrape(metrics.wsConsecutiveSkipsMax, most((c) => c.skips));
  collectOnScrape(metrics.wsIpConnectionsMax, () => {
    const perIp = new Map<string, number>();
    let m = 0;
    for (const c of clients) {
      const n = (perIp.get(c.lease.ip) ?? 0) + 1;
      perIp.set(c.lease.ip, n);
      if (n > m) m = n;
    }
    return m;
  });
  const refused = (reason: RefusalReason) => metrics.wsRefusals.inc({ reason });
  // Every reason's counter exists from the start, so a rule sees its first increase.
  for (const reason of WS_REFUSAL_REASONS) metrics.wsRefusals.inc({ reason }, 0);
  for (const reason of WS_AUTH_FAILURE_REASONS) metrics.wsAuthFailures.inc({ reason }, 0);
  if (opts.plans) for (const p of API_PLANS) metrics.planWsConnections.set({ plan: p.name }, 0);

  // Updates: one frame per payload, one write per socket, corked per event-loop turn.
  const sendFrame = createFrameSender();

  const send = (client: Client, msg: Record<string, unknown>) => {
    // Text frames, as updates are: a Buffer would otherwise go out as a binary frame.
    if (client.ws.readyState === WebSocket.OPEN) client.ws.send(encode(msg), TEXT);
  };
  const sendError = (client: Client, message: string) => send(client, { type: 'error', message });

  async function onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '').split('?')[0];
    if (path !== WS_PATH) {
      refuse(socket, writeError, new ApiError('NOT_FOUND', 'Route not found'));
      return;
    }
    if (!accepting) {
      refused('shutting_down');
      refuse(socket, writeError, new ApiError('SERVICE_UNAVAILABLE', 'Server is shutting down'));
      return;
    }
    if (clients.size + upgrading >= options.maxClients) {
      refused('max_clients');
      refuse(socket, writeError, new ApiError('SERVICE_UNAVAILABLE', 'WebSocket server is at capacity'), ['Retry-After: 1']);
      return;
    }
    const ip = proxyaddr(req, opts.trust);
    upgrading += 1;
    let lease: Lease | undefined;
    let plan: PlanName | undefined;
    let keyId: string | undefined;
    try {
      if (opts.plans) {
        const a = await admitUpgrade(req, ip, opts.plans);
        if (!a.ok) {
          refused(a.reason);
          refuse(socket, writeError, a.error, a.headers);
          return;
        }
        plan = a.caller.plan;
        keyId = a.caller.keyId;
        lease = await opts.leases.acquire(a.caller.subject, planOf(a.caller.plan).wsConnections);
      } else {
        lease = await opts.leases.acquire(ip);
      }
    } finally {
      upgrading -= 1;
    }
    if (!lease) {
      refused('per_ip');
      if (plan) opts.plans?.refused(plan, 'ws_connections');
      refuse(socket, writeError, new ApiError('RATE_LIMITED', opts.plans ? 'Too many WebSocket connections for this plan' : 'Too many WebSocket connections from this address'), ['Retry-After: 10']);
      return;
    }
    if (socket.destroyed || !accepting) {
      opts.leases.release(lease);
      socket.destroy();
      return;
    }
    const held = lease;
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, held, ip, plan, keyId));
  }

  function onConnection(ws: WebSocket, lease: Lease, ip: string, plan: PlanName | undefined, keyId: string | undefined): void {
    const client: Client = {
      ws,
      ip,
      lease,
      plan,
      subscriptions: new Set(),
      alive: true,
      pending: 0,
      authFailures: 0,
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

  function closeClient(client: Client, code: number, reason: string): void {
    if (client.closed) return;
    client.closed = true;
    client.ws.close(code, reason);
    // A client that does not read will not answer the close handshake either.
    setTimeout(() => client.ws.terminate(), 5_000).unref();
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
      const failure = await authorize(client, channel, auth);
      if (failure) {
        metrics.wsAuthFailures.inc({ reason: failure.reason });
        sendError(client, failure.message);
        // A connection that keeps failing is closed: it has nothing left to try that a new
        // connection (a per-IP lease, a handshake) would not charge it for (D-100).
        if (++client.authFailures >= options.maxAuthFailures) {
          refused('auth_failures');
          closeClient(client, CLOSE.policy, AUTH_FAILURES_REASON);
        }
        return;
      }
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
   * Spec 6.1 rules 1-2 and part 5; the cheap wallet comparison runs before the signature check,
   * and so does the client IP's pre-authentication budget (D-77): once its failed
   * authentications have spent it, a subscription is refused without verifying anything. Every
   * failure counts against it, as on HTTP.
   */
  async function authorize(client: Client, channel: Channel, auth: WsAuth | undefined): Promise<{ reason: string; message: string } | undefined> {
    if (opts.authFailures.spent(client.ip)) return { reason: 'rate_limited', message: WS_ERRORS.tooManyAuthFailures };
    const failure = await check(channel, auth);
    if (failure) await opts.authFailures.record(client.ip);
    return failure;
  }

  async function check(channel: Channel, auth: WsAuth | undefined): Promise<{ reason: string; message: string } | undefined> {
    if (!auth || !auth.publicKey || !auth.signature || !auth.message) return { reason: 'missing', message: WS_ERRORS.authRequired };
    if (auth.publicKey !== channel.key) return { reason: 'wallet_mismatch', message: WS_ERRORS.walletMismatch };
    await verifyGate.pass();
    const r = await verifyWalletAuth(auth, {
      publicHosts: config.publicHosts,
      chainId: config.chainId,
      expectedAction: `WS_SUBSCRIBE ${channel.name}`,
      nonceStore: opts.nonceStore,
      verify: opts.verifySignature,
    });
    if (r.ok) return undefined;
    return { reason: r.reason, message: r.reason === 'action' ? WS_ERRORS.actionMismatch(channel.name) : AUTH_MESSAGES[r.reason] };
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

  const onUpgradeEvent = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(req, socket, head).catch((err: unknown) => {
      logger.error({ err }, 'ws upgrade failed');
      socket.destroy();
    });
  };
  opts.server.on('upgrade', onUpgradeEvent);

  // One timer for every client: a client that missed the previous ping's pong is dropped.
  const pinger = setInterval(() => {
    for (const client of clients) {
      if (!client.alive) {
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }, options.pingIntervalMs);
  pinger.unref();

  return {
    clientCount: () => clients.size,
    channelCount: () => hub.channelCount(),
    refuseNew() {
      accepting = false;
    },
    close() {
      closing ??= closeAll();
      return closing;
    },
  };

  async function closeAll(): Promise<void> {
    accepting = false;
    clearInterval(pinger);
    opts.server.off('upgrade', onUpgradeEvent);
    const gone = [...clients].map((c) => new Promise<void>((resolve) => (c.ws.readyState === WebSocket.CLOSED ? resolve() : c.ws.once('close', () => resolve()))));
    for (const c of clients) closeClient(c, CLOSE.goingAway, SHUTDOWN_REASON);
    const cut = setTimeout(() => clients.forEach((c) => c.ws.terminate()), 2_000);
    await Promise.all(gone);
    clearTimeout(cut);
    await opts.leases.close();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  }
}
