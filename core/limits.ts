import type { Config } from './config';
import { SETTINGS } from './config/settings';

/**
 * The documented limits of spec 8 that are not settings, declared once: the `/ws` server
 * enforces these values, and the dashboards and alert rules draw them. Limits that are settings
 * (rate-limit tiers, `WS_MAX_CLIENTS`, `WS_MAX_CONNECTIONS_PER_IP`) have their defaults in the
 * settings catalog (core/config/settings.ts).
 */
export const WS_LIMITS = {
  /** Spec 8: subscriptions per client. Fixed by the contract, hence not a setting. */
  maxSubscriptions: 20,
  /** Spec 8: largest client message, in bytes. */
  maxMessageBytes: 4096,
  /** Spec 8: updates are skipped while a client's send buffer holds more than this (1 MB). */
  maxBufferedBytes: 1024 * 1024,
  /** Spec 8: the connection is closed on this many consecutive skipped updates. */
  maxSkips: 50,
  /** D-49: client messages waiting for processing before the connection is closed as a flood. */
  maxPendingMessages: 64,
  /**
   * D-100: failed `positions:` authentications (refusals by the IP's pre-authentication budget
   * included) after which a connection is closed with 1008.
   */
  maxAuthFailures: 10,
  /**
   * D-352: subscriptions to markets the store does not have after which a connection is closed
   * with 1008 (each one not remembered costs a lookup).
   */
  maxUnknownMarkets: 10,
} as const;

/** Spec 8 rate-limit tiers (D-43); the values of the `tier` label. */
export const RATE_LIMIT_TIERS = ['public_read', 'public', 'authenticated', 'write', 'sensitive', 'compliance'] as const;
export type Tier = (typeof RATE_LIMIT_TIERS)[number];

/** Requests per key and window of every tier, from the rate-limit settings. */
export function tierSpecs(c: Config['rateLimit']): Record<Tier, { points: number; windowMs: number }> {
  return {
    public_read: { points: c.publicReadMax, windowMs: c.publicReadWindowMs },
    public: { points: c.publicMax, windowMs: c.windowMs },
    authenticated: { points: c.publicMax * 2, windowMs: c.windowMs },
    write: { points: Math.max(1, Math.floor(c.publicMax / 2)), windowMs: c.windowMs },
    sensitive: { points: c.sensitiveMax, windowMs: c.windowMs },
    compliance: { points: c.complianceMax, windowMs: c.windowMs },
  };
}

/**
 * D-187: the bucket a wallet-signed request also spends, per client IP, beside its wallet's
 * (spec 8 keys authenticated callers per wallet; a new keypair costs nothing, so per wallet alone
 * one address with fresh keypairs had no ceiling). Named `<tier>_per_ip` (the `tier` label of the
 * rate-limit metrics and the Redis key prefix), it holds `RATE_LIMIT_WALLETS_PER_IP` wallets'
 * worth of the tier: sensitive 100, authenticated 1,000, compliance 25 a window by default.
 */
export const addressTier = (tier: Tier) => `${tier}_per_ip` as const;
export type AddressTier = ReturnType<typeof addressTier>;

/** The per-address bucket of every tier, in the tiers' windows. */
export function addressTierSpecs(c: Config['rateLimit']): Record<Tier, { name: AddressTier; points: number; windowMs: number }> {
  const tiers = tierSpecs(c);
  return Object.fromEntries(
    RATE_LIMIT_TIERS.map((t) => [t, { name: addressTier(t), points: tiers[t].points * c.walletsPerIp, windowMs: tiers[t].windowMs }]),
  ) as Record<Tier, { name: AddressTier; points: number; windowMs: number }>;
}

/** The rate-limit settings at their catalog defaults (what spec 8 documents). */
export const DEFAULT_RATE_LIMITS: Config['rateLimit'] = {
  windowMs: SETTINGS.RATE_LIMIT_WINDOW_MS.default,
  publicReadMax: SETTINGS.PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS.default,
  publicReadWindowMs: SETTINGS.RATE_LIMIT_WINDOW_MS.default,
  publicMax: SETTINGS.RATE_LIMIT_MAX_REQUESTS.default,
  sensitiveMax: SETTINGS.RATE_LIMIT_SENSITIVE_MAX.default,
  complianceMax: SETTINGS.RATE_LIMIT_COMPLIANCE_MAX.default,
  walletsPerIp: SETTINGS.RATE_LIMIT_WALLETS_PER_IP.default,
};

/**
 * The `/ws` limits an API process exports as `service_limit_configured{limit}`, so a dashboard
 * draws each one as configured beside its live value; `default` is the documented value.
 */
export const WS_LIMIT_GAUGES = {
  wsClients: { label: 'ws_clients', default: SETTINGS.WS_MAX_CLIENTS.default, what: 'WebSocket clients per API process (WS_MAX_CLIENTS)' },
  wsConnectionsPerIp: {
    label: 'ws_connections_per_ip',
    default: SETTINGS.WS_MAX_CONNECTIONS_PER_IP.default,
    what: 'WebSocket connections per client IP, across replicas (WS_MAX_CONNECTIONS_PER_IP)',
  },
  wsSubscriptionsPerClient: { label: 'ws_subscriptions_per_client', default: WS_LIMITS.maxSubscriptions, what: 'subscriptions per WebSocket client' },
  wsSendBufferBytes: { label: 'ws_send_buffer_bytes', default: WS_LIMITS.maxBufferedBytes, what: 'send buffer above which updates are skipped' },
  wsConsecutiveSkips: { label: 'ws_consecutive_skips', default: WS_LIMITS.maxSkips, what: 'consecutive skipped updates before a close' },
} as const;
export type WsLimitKey = keyof typeof WS_LIMIT_GAUGES;
