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
  // Above the ingress controller's upstream keep-alive (ingress-nginx `upstream-keepalive-timeout`,
  // 60 s): the proxy must be the side that closes an idle connection, or a request it sends on one
  // the process just closed gets a 502 (issue 41, D-282).
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int({
    min: 1_000,
    max: 600_000,
    default: 75_000,
    readBy: ['api', 'indexer'],
    description:
      'how long the API and the indexer keep an idle HTTP connection open (`Keep-Alive: timeout=`; the header timeout is 1 s more): above the ingress controller\'s upstream keep-alive, 60 s in ingress-nginx (D-282)',
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
