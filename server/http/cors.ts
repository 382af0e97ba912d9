import cors, { type CorsOptions } from 'cors';
import type { NextFunction, Request, Response } from 'express';
import { API_KEY_HEADER } from '../limits/plan-limits';

/**
 * CORS (D-521): which web pages' scripts may read the API's answers and send its headers.
 * Every origin may read the public routes (no credentials exist to steal: the API sets no
 * cookie and a browser sends none, `Access-Control-Allow-Credentials` is never set); only the
 * allow-listed origins may send the wallet-signature and API-key headers, so a page elsewhere
 * cannot have a browser carry a user's signed request or a tenant's key.
 */

/** Request headers any origin may send: the conditional read and the correlation id. */
export const PUBLIC_REQUEST_HEADERS = ['If-None-Match', 'x-request-id'] as const;
/** Request headers only an allow-listed origin may send: what signs or identifies a caller, and a body's type. */
export const CREDENTIAL_REQUEST_HEADERS = ['x-wallet-pubkey', 'x-wallet-signature', 'x-wallet-message', API_KEY_HEADER, 'Content-Type'] as const;
/** Response headers a page's script may read: rate limits and their wait, the request id, validators, the alias headers, and `Date` (the SDK's clock-offset correction). */
export const EXPOSED_RESPONSE_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'x-request-id',
  'ETag',
  'Date',
  'Deprecation',
  'Link',
  'X-Service-Canonical-Path',
] as const;
/** How long a browser may keep a preflight's answer (Chromium caps it at 2 h). */
const PREFLIGHT_MAX_AGE_S = 600;

export function createCors(allowed: readonly string[] | '*') {
  const listed = new Set(allowed === '*' ? [] : allowed.map((o) => o.toLowerCase()));
  const isListed = (origin: string | undefined) => origin !== undefined && (allowed === '*' || listed.has(origin.toLowerCase()));
  const common = { exposedHeaders: [...EXPOSED_RESPONSE_HEADERS], maxAge: PREFLIGHT_MAX_AGE_S, optionsSuccessStatus: 204 };
  const open: CorsOptions = { ...common, origin: '*', methods: ['GET', 'HEAD'], allowedHeaders: [...PUBLIC_REQUEST_HEADERS] };
  const trusted: CorsOptions = { ...common, origin: true, methods: ['GET', 'HEAD', 'POST'], allowedHeaders: [...PUBLIC_REQUEST_HEADERS, ...CREDENTIAL_REQUEST_HEADERS] };
  const handler = cors((req, cb) => cb(null, isListed(req.headers.origin) ? trusted : open));
  return (req: Request, res: Response, next: NextFunction) => {
    // The answer depends on the origin (reflected, or `*` with fewer headers): shared caches must key on it.
    res.vary('Origin');
    if (req.headers.origin === undefined) return next();
    handler(req, res, next);
  };
}
