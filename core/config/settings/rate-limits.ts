/**
 * The API's rate-limit tiers: their window, the public, authenticated, sensitive and compliance
 * budgets, and the per-IP share of wallet-signed requests (D-187). `core/limits.ts` and
 * `server/limits/` read them.
 */

import { int, type SettingSpec } from './kinds';

export const RATE_LIMIT_SETTINGS = {
  // Redis counts whole seconds: windows are rounded up to a whole number of seconds.
  RATE_LIMIT_WINDOW_MS: int({
    min: 1000,
    default: 60_000,
    readBy: ['api'],
    description: 'window of every rate-limit tier; counted in whole seconds (rounded up)',
  }),
  PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: int({ min: 1, default: 300, readBy: ['api'], description: 'public market reads per IP per window' }),
  PUBLIC_READ_RATE_LIMIT_WINDOW_MS: int({
    min: 1000,
    defaultText: 'follows `RATE_LIMIT_WINDOW_MS`',
    readBy: ['api'],
    description: 'window of the public market-read tier',
  }),
  RATE_LIMIT_MAX_REQUESTS: int({
    min: 1,
    default: 100,
    readBy: ['api'],
    description: 'other public requests per IP per window; authenticated callers get 2×, writes ½',
  }),
  RATE_LIMIT_SENSITIVE_MAX: int({ min: 1, default: 20, readBy: ['api'], description: '`/orders`, `/positions`, `/tx/*`, `/admin/*` per window' }),
  RATE_LIMIT_COMPLIANCE_MAX: int({ min: 1, default: 5, readBy: ['api'], description: 'compliance tier per window' }),
  RATE_LIMIT_WALLETS_PER_IP: int({
    min: 1,
    max: 1000,
    default: 5,
    readBy: ['api'],
    description:
      'wallet-signed requests also spend a bucket of their client IP: this many wallets\' worth of the tier per window (sensitive 100, authenticated 1,000, compliance 25 by default), so new keypairs from one address buy nothing more (D-187)',
  }),
} as const satisfies Record<string, SettingSpec<any>>;
