import { WS_PATH } from './generated';

/**
 * Where a script aims and as whom, from `__ENV` (k6 `-e NAME=value` or the environment):
 * BASE_URL (http[s]://host:port of one tenant's API), TENANT (a tag on every sample),
 * AUTH_DOMAIN (the `domain` signed messages carry: one of the service's PUBLIC_HOSTS; the
 * base URL's host by default), RUN_ID (seeds the wallets, so two runs sign as different
 * wallets), PROFILE (load.ts).
 */
export interface Target {
  baseUrl: string;
  wsUrl: string;
  tenant: string;
  authDomain: string;
  runId: string;
}

function hostOf(url: string): string {
  const m = /^[a-z]+:\/\/(\[[^\]]+\]|[^:/?#]+)/i.exec(url);
  if (!m || !m[1]) throw new Error(`BASE_URL must be an absolute http(s) URL, got ${JSON.stringify(url)}`);
  return m[1];
}

export function target(): Target {
  const baseUrl = (__ENV.BASE_URL || 'http://localhost:3000').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(baseUrl)) throw new Error(`BASE_URL must start with http:// or https://, got ${JSON.stringify(baseUrl)}`);
  return {
    baseUrl,
    wsUrl: `${baseUrl.replace(/^http/, 'ws')}${WS_PATH}`,
    tenant: __ENV.TENANT || 'default',
    authDomain: __ENV.AUTH_DOMAIN || hostOf(baseUrl),
    runId: __ENV.RUN_ID || 'run',
  };
}

/** A positive integer from `__ENV[name]`, or `fallback`; anything else is a clear error. */
export function intEnv(name: string, fallback: number): number {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}
