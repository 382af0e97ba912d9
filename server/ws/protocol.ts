import bs58 from 'bs58';
import { WS_LIMITS } from '../../core/limits';
import { CHANNEL_KINDS, splitChannel, type ChannelKind } from '../../core/live/channels';

/** Spec 8: subscriptions per client. Fixed by the contract, hence not a setting (core/limits.ts). */
export const MAX_SUBSCRIPTIONS = WS_LIMITS.maxSubscriptions;
/** Spec 8: largest client message, in bytes. */
export const MAX_MESSAGE_BYTES = WS_LIMITS.maxMessageBytes;

/** Spec 7.3 word for word, plus the messages decision D-51 adds for conditions 7.3 does not name. */
export const WS_ERRORS = {
  invalidJson: 'Invalid JSON',
  unknownType: 'Unknown message type',
  invalidChannel: (channel: string) => `Invalid channel: ${channel}. Must start with: ${CHANNEL_KINDS.map((k) => `${k}:`).join(', ')}`,
  invalidChannelKey: (channel: string) =>
    `Invalid channel: ${channel}. Expected market:{marketId}, orderbook:{marketId} or positions:{wallet}`,
  maxSubscriptions: `Maximum subscriptions (${MAX_SUBSCRIPTIONS}) reached`,
  authRequired: 'Authentication required for position channels',
  walletMismatch: 'Channel wallet does not match authenticated wallet',
  badSignature: 'Invalid wallet signature',
  expired: 'Authentication expired',
  nonceUsed: 'Nonce already used',
  invalidAuthMessage: 'Invalid authentication message',
  domainMismatch: 'Authentication domain does not match this server',
  chainMismatch: 'Authentication chain is not supported',
  actionMismatch: (channel: string) => `Authentication action must be WS_SUBSCRIBE ${channel}`,
  invalidResumeFrom: 'Invalid resumeFrom: must be a non-negative integer',
  unavailable: 'Subscription failed: service temporarily unavailable',
  tooManyAuthFailures: 'Too many failed authentications from this address: try again later',
  unknownMarket: (marketId: string) => `Unknown market: ${marketId}. A channel takes the marketId of a market GET /api/v1/markets lists`,
} as const;

export const CONNECTED_MESSAGE = 'Connected to the market stream';
export const SHUTDOWN_REASON = 'Server shutting down';
export const BACKPRESSURE_REASON = 'Too many messages skipped: client is reading too slowly';
export const FLOOD_REASON = 'Too many messages waiting to be processed';
export const AUTH_FAILURES_REASON = 'Too many failed authentications';
export const UNKNOWN_MARKETS_REASON = 'Too many subscriptions to unknown markets';
/** The appendix variant: the connection's API key was revoked (D-190). */
export const KEY_REVOKED_REASON = 'API key revoked';
/**
 * The appendix variant's `/ws` may carry its API key in `Sec-WebSocket-Protocol`, the one header
 * a browser can set on a WebSocket (D-191): the client offers `market-indexer` and
 * `apikey.<key>`, the server selects `market-indexer`, so the key never comes back.
 */
export const WS_SUBPROTOCOL = 'market-indexer';
export const WS_API_KEY_PROTOCOL_PREFIX = 'apikey.';
/**
 * The live projection schema changed (D-410): the tables were rebuilt, sequences start over,
 * and the client reconnects, takes a fresh REST snapshot and subscribes again.
 */
export const PROJECTION_SWITCHED_REASON = 'Projection switched: reconnect, fetch a fresh REST snapshot and subscribe again';
export const RESNAPSHOT_MESSAGE = 'Missed updates are no longer available: fetch a fresh REST snapshot';

/** Close codes (decision D-50). */
export const CLOSE = {
  goingAway: 1001,
  policy: 1008,
  /** Application range (4000-4999): the live projection schema changed (D-410). */
  projectionSwitched: 4010,
  // 1009 (message too big) is sent by ws itself when a frame exceeds maxPayload.
} as const;

export type Channel = { name: string; kind: ChannelKind; key: string };

const U64_MAX = 18_446_744_073_709_551_615n;

function isWallet(s: string): boolean {
  if (s.length < 32 || s.length > 44) return false;
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}

function isMarketId(s: string): boolean {
  return /^(0|[1-9][0-9]{0,19})$/.test(s) && BigInt(s) <= U64_MAX;
}

/** Echoed channels are cut so an error frame stays small whatever the client sent. */
const echo = (s: string) => (s.length > 128 ? `${s.slice(0, 128)}…` : s);

export function parseChannel(raw: unknown): { ok: true; channel: Channel } | { ok: false; error: string } {
  const name = typeof raw === 'string' ? raw : raw === undefined ? '' : JSON.stringify(raw);
  const split = typeof raw === 'string' ? splitChannel(name) : undefined;
  if (!split) return { ok: false, error: WS_ERRORS.invalidChannel(echo(name)) };
  const { kind, key } = split;
  const valid = kind === 'positions' ? isWallet(key) : isMarketId(key);
  if (!valid) return { ok: false, error: WS_ERRORS.invalidChannelKey(echo(name)) };
  return { ok: true, channel: { name, kind, key } };
}

export interface WsAuth {
  signature: string | undefined;
  message: string | undefined;
  publicKey: string | undefined;
}

export type ClientMessage =
  | { type: 'subscribe'; channel: unknown; auth: WsAuth | undefined; resumeFrom: unknown }
  | { type: 'unsubscribe'; channel: unknown };

/** Parses one client frame; the `error` is the message to send back. */
export function parseClientMessage(text: string): { ok: true; message: ClientMessage } | { ok: false; error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, error: WS_ERRORS.invalidJson };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { ok: false, error: WS_ERRORS.unknownType };
  const m = v as Record<string, unknown>;
  if (m.type === 'unsubscribe') return { ok: true, message: { type: 'unsubscribe', channel: m.channel } };
  if (m.type !== 'subscribe') return { ok: false, error: WS_ERRORS.unknownType };
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const a = m.auth && typeof m.auth === 'object' ? (m.auth as Record<string, unknown>) : undefined;
  const auth = a ? { signature: str(a.signature), message: str(a.message), publicKey: str(a.publicKey) } : undefined;
  return { ok: true, message: { type: 'subscribe', channel: m.channel, auth, resumeFrom: m.resumeFrom } };
}

export function parseResumeFrom(v: unknown): { ok: true; value: number | undefined } | { ok: false } {
  if (v === undefined || v === null) return { ok: true, value: undefined };
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return { ok: true, value: v };
  return { ok: false };
}

/**
 * Spec 8 backpressure, for one update and one client: send while the client's buffer holds at
 * most the limit, otherwise skip; the `maxSkips`-th consecutive skip closes; a send starts the
 * count again. Updates `client.skips`; allocates nothing (it runs per client per update).
 */
export function backpressureStep(
  client: { readonly bufferedAmount: number; skips: number },
  limits: { maxBufferedBytes: number; maxSkips: number },
): 'send' | 'skip' | 'close' {
  if (client.bufferedAmount <= limits.maxBufferedBytes) {
    client.skips = 0;
    return 'send';
  }
  client.skips += 1;
  return client.skips >= limits.maxSkips ? 'close' : 'skip';
}

/** Frames the server sends; `update` is built once per bus message and shared by all subscribers. */
export function encode(msg: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(msg));
}

/**
 * The appendix variant's client messages (D-158, D-162): `{ type: "subscribe" | "unsubscribe",
 * channel: "market.update", marketId }`, as the `market:<marketId>` subscription they mean, so
 * `resumeFrom`, the hub and the replies are v1's. Only that form: v1's channel names
 * (`orderbook:…`, `positions:…`) are not part of the variant and are refused, so a legacy
 * client never receives a v1-only frame.
 */
export const LEGACY_MARKET_CHANNEL = 'market.update';
export const LEGACY_WS_ERRORS = {
  channel: (channel: string) => `Invalid channel: ${channel}. Expected ${LEGACY_MARKET_CHANNEL} with a marketId`,
  marketId: 'Invalid marketId: expected a market epoch id',
} as const;

export function parseLegacyClientMessage(text: string): { ok: true; message: ClientMessage } | { ok: false; error: string } {
  const parsed = parseClientMessage(text);
  if (!parsed.ok) return parsed;
  const m = parsed.message;
  if (m.channel !== LEGACY_MARKET_CHANNEL) {
    const name = typeof m.channel === 'string' ? m.channel : m.channel === undefined ? '' : JSON.stringify(m.channel);
    return { ok: false, error: LEGACY_WS_ERRORS.channel(echo(name)) };
  }
  // parseClientMessage accepted it, so it is a JSON object.
  const marketId = (JSON.parse(text) as Record<string, unknown>).marketId;
  const id = typeof marketId === 'number' && Number.isSafeInteger(marketId) && marketId >= 0 ? String(marketId) : typeof marketId === 'string' ? marketId : '';
  if (!isMarketId(id)) return { ok: false, error: LEGACY_WS_ERRORS.marketId };
  return { ok: true, message: { ...m, channel: `market:${id}` } };
}
