/**
 * How a request is treated once admitted: the handler timeout, the probes' cached dependency
 * check, shutdown's grace for requests in flight, how long an auth nonce is remembered, and the
 * shared secret of the indexer's webhook ingest.
 */

import { int, secretText, type SettingSpec } from './kinds';

export const REQUEST_SETTINGS = {
  REQUEST_TIMEOUT_MS: int({
    min: 1,
    max: 300_000,
    default: 30_000,
    readBy: ['api'],
    description: 'handler timeout, then 504 `TIMEOUT`; also the API\'s PostgreSQL `statement_timeout` (D-65)',
  }),
  HEALTH_CHECK_CACHE_MS: int({
    min: 0,
    max: 60_000,
    default: 1_000,
    readBy: ['api'],
    description: 'how long the API reuses its last dependency check for `/ready` and `/health` (at most one database check per interval, however many probes arrive; D-101)',
  }),
  SHUTDOWN_GRACE_MS: int({
    min: 1,
    max: 120_000,
    default: 10_000,
    readBy: ['api'],
    description: 'how long SIGTERM waits for in-flight requests (the kit sets the pod\'s termination grace period from it)',
  }),
  NONCE_TTL_SECONDS: int({
    min: 330,
    max: 86_400,
    default: 330,
    readBy: ['api'],
    description: 'how long a used auth nonce is remembered (at least the whole 5 min + 30 s acceptance window)',
  }),

  WEBHOOK_SECRET: secretText(32, {
    readBy: ['indexer'],
    requiredBy: ['indexer:webhook'],
    description: 'shared secret of the internal webhook ingest route; unset disables the route',
  }),
} as const satisfies Record<string, SettingSpec<any>>;
