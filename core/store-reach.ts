/**
 * What a process says when a store it needs does not answer at start: the setting, where it
 * points (host and port, never the credentials the URL may carry) and why, in one line, so an
 * operator reading a pod's log knows which setting to fix without reading a stack trace.
 */
import { Client } from 'pg';
import { redisReady, type Redis } from './redis/client';
import { parseRedisUrl } from './redis/url';

export type StoreSetting = 'DATABASE_URL' | 'REDIS_URL';

const DEFAULT_PORTS: Record<StoreSetting, number> = { DATABASE_URL: 5432, REDIS_URL: 6379 };

/** `host:port` of a store URL (every node of a Redis Cluster URL), without user or password. */
export function storeHost(setting: StoreSetting, url: string): string {
  if (setting === 'REDIS_URL') {
    const target = parseRedisUrl(url);
    if ('error' in target) return 'an invalid URL';
    if (target.cluster) return target.nodes.map((n) => `${n.host}:${n.port}`).join(',');
  }
  try {
    const u = new URL(url);
    return `${u.hostname || u.searchParams.get('host') || 'localhost'}:${u.port || DEFAULT_PORTS[setting]}`;
  } catch {
    // libpq's form for a Unix socket, which WHATWG URL refuses: postgres://user@/db?host=/run/postgresql
    const param = (name: string) => new RegExp(`[?&]${name}=([^&]+)`).exec(url)?.[1];
    const host = setting === 'DATABASE_URL' ? param('host') : undefined;
    return host ? `${decodeURIComponent(host)}:${param('port') ?? DEFAULT_PORTS[setting]}` : 'an invalid URL';
  }
}

/** A driver's message without any `scheme://user:password@` it may quote. */
const withoutCredentials = (message: string) => message.replace(/:\/\/[^@\s/]*@/g, '://');

/** The one line: `DATABASE_URL (db.internal:5432) cannot be reached: connect ECONNREFUSED …`. */
export function unreachableLine(setting: StoreSetting, url: string, reason: string): string {
  return `${setting} (${storeHost(setting, url)}) cannot be reached: ${withoutCredentials(reason)}`;
}

/**
 * One connection and `SELECT 1` to the database, within `timeoutMs`: undefined when it
 * answered, otherwise why not (a refused or timed-out connection, a failed login, a missing
 * database).
 */
export async function databaseProblem(url: string, timeoutMs = 5_000): Promise<string | undefined> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, application_name: 'market-indexer-start-check' });
  // A connection that fails after connect() settled must not become an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query({ text: 'SELECT 1', query_timeout: timeoutMs } as never);
    return undefined;
  } catch (err) {
    const e = err as Error & { code?: string };
    return e.message || e.code || String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Waits up to `timeoutMs` for Redis to be ready: undefined when it is, otherwise why not (the
 * last connection error seen meanwhile). The client keeps reconnecting either way.
 */
export async function redisProblem(client: Redis, timeoutMs = 5_000): Promise<string | undefined> {
  let last: string | undefined;
  const onError = (err: Error) => (last = err.message || (err as Error & { code?: string }).code);
  client.on('error', onError);
  try {
    await redisReady(client, timeoutMs);
    return undefined;
  } catch {
    return last ?? `not ready after ${timeoutMs} ms`;
  } finally {
    client.off('error', onError);
  }
}
