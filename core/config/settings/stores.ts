/**
 * The stores and the chain a process talks to: PostgreSQL, Redis, the embedded stand-ins of
 * single-process mode and when production allows them, the Solana RPC.
 */

import { flag, int, redisUri, text, uri, type SettingSpec } from './kinds';
import { BOTH, INDEXER_SOURCES } from './readers';

export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;

export const STORE_SETTINGS = {
  DATABASE_URL: uri(['postgres', 'postgresql'], {
    readBy: ['api', 'indexer', 'migrate'],
    requiredBy: ['api', 'migrate', ...INDEXER_SOURCES],
    secret: true,
    description: 'PostgreSQL of the tenant; unset means embedded PostgreSQL (single-process mode)',
  }),
  // The API's reads from replicas (D-510): a CloudNativePG `<cluster>-ro` Service, an HA proxy's read front.
  DATABASE_READ_URL: uri(['postgres', 'postgresql'], {
    readBy: ['api'],
    secret: true,
    description:
      'PostgreSQL hot standby (or a pool of them, e.g. CloudNativePG\'s `<cluster>-ro` Service) the API reads from while it is within `DATABASE_READ_MAX_LAG_SLOTS` of the primary; writes (API keys, admin actions, cancel requests) always go to `DATABASE_URL`. Unset means every read goes to `DATABASE_URL` (D-510)',
  }),
  DATABASE_READ_MAX_LAG_SLOTS: int({
    min: 0,
    max: 1_000_000,
    default: 1,
    readBy: ['api'],
    description:
      'how many slots the replica\'s indexed slot may trail the newest slot this API process has seen committed on the primary and still serve a read; behind that (or unreachable) reads go to the primary, so a client never sees the indexed slot go back by more (D-511)',
  }),
  DATABASE_POOL_MAX: int({ min: 1, max: 200, default: 10, readBy: BOTH, description: 'connections per process' }),
  REDIS_URL: redisUri({
    readBy: BOTH,
    // ALLOW_EMBEDDED_STORES waives it for a process, deliberately (D-54); the kit never does.
    requiredBy: ['api', ...INDEXER_SOURCES],
    secret: true,
    description:
      'Redis shared by the API replicas and the indexer: `redis://[user:password@]host:port[/db]` for one Redis, `redis+cluster://[user:password@]host:port,host:port,…` for a Redis Cluster (seed nodes; D-92), `rediss` for TLS; unset means in-memory nonce store, rate limiter and bus (one process only)',
  }),
  REDIS_COMMAND_TIMEOUT_MS: int({
    min: 10,
    max: 60_000,
    default: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    readBy: BOTH,
    description:
      'a Redis command without a reply by then fails: rate limits fall back to the per-process insurance limiter, signed requests get 503, the indexer\'s publish is given up (D-66)',
  }),
  DATA_DIR: text(/^[^\0]+$/, 'path', {
    default: '.data',
    maxLength: 4096,
    readBy: ['embedded', 'chain'],
    description:
      'Single-process mode (`npm start`) and the simulated chain (`npm run chain`): where embedded PostgreSQL keeps its files and the chain its genesis and the transactions it accepted; survives restarts (`--fresh` deletes it)',
  }),
  ALLOW_EMBEDDED_STORES: flag({
    default: false,
    readBy: ['api', 'indexer', 'embedded'],
    description:
      'With `NODE_ENV=production`, lets a process run without `REDIS_URL` (per-process nonces, rate limits, bus) or in single-process mode (embedded PostgreSQL); refused otherwise',
  }),
  // RPC endpoints usually carry the provider's API key in their path or query: secrets.
  RPC_URL: uri(['http', 'https'], {
    default: 'http://127.0.0.1:8899',
    readBy: BOTH,
    // The default is a local validator's (or `npm start`'s chain): never a deployment's RPC.
    requiredBy: ['api', 'indexer:rpc', 'indexer:webhook'],
    secret: true,
    description: 'Solana JSON-RPC endpoint: the indexer reads the program\'s transactions, the API reads recent blockhashes for `/tx/*`',
  }),
  RPC_WS_URL: uri(['ws', 'wss'], {
    defaultText: '`RPC_URL` with the `ws` scheme',
    readBy: ['indexer'],
    secret: true,
    description: 'Solana RPC WebSocket endpoint (`logsSubscribe`)',
  }),
  // The provider's plan, as the `rpc` source paces itself by it (D-241).
  RPC_REQUESTS_PER_SECOND: int({
    min: 0,
    max: 1_000_000,
    default: 0,
    readBy: ['indexer'],
    description:
      "the RPC provider's rate limit the `rpc` source keeps under, in credits per second (a light call costs 1, `getTransaction` 2, `getSignaturesForAddress` 3: core/rpc-credits.ts); `0` sends unpaced until a 429 shows the limit, then settles under it. A 429's `Retry-After` is always honoured",
  }),
  RPC_CONCURRENCY: int({
    min: 1,
    max: 1_000,
    default: 8,
    readBy: ['indexer'],
    description:
      'JSON-RPC requests the `rpc` source has in flight at once (a batch is one); a backfill needs about the rate times the latency (1,000 calls/s at 40 ms: 40)',
  }),
  RPC_BATCH_SIZE: int({
    min: 1,
    // Providers take at most 100 calls a batch (Helius for getTransaction), D-474.
    max: 100,
    default: 1,
    readBy: ['indexer'],
    description:
      "`getTransaction` calls the `rpc` source sends in one JSON-RPC batch request; `1` sends single calls. A batch the provider refuses (HTTP 413, a lone error) is sent again as halves, down to single calls for a provider that takes none; most count each call of a batch against the rate limit (D-242, D-474)",
  }),
} as const satisfies Record<string, SettingSpec<any>>;
