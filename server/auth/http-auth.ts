import type { Request } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    wallet?: string;
  }
}

/**
 * The `action` a client signs: the request target as it sent it, without the `/api/v1`
 * prefix (or the legacy `/api` one): `GET /positions?owner=...`.
 */
export function requestAction(req: Request): string {
  const target = req.originalUrl.replace(/^\/api\/v1(?=\/|\?|$)/, '').replace(/^\/api(?=\/|\?|$)/, '');
  return `${req.method} ${target || '/'}`;
}
