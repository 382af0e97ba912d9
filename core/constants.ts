import { SETTINGS } from './config/settings';

/**
 * Operational facts about the processes and their image that the deployment kit must agree
 * with: probe and scrape paths, ports, the image's user and entry points. Declared here once;
 * the servers, the Dockerfile (checked by a test) and the kit all use these.
 */

/** Served by both processes at the root, unversioned (spec 4.9). */
export const OPS_PATHS = { health: '/health', ready: '/ready', metrics: '/metrics' } as const;

/** The WebSocket stream of the API (spec 6.1). */
export const WS_PATH = '/ws';

/** The versioned REST prefix (spec 4.1). */
export const API_PREFIX = '/api/v1';

/** The indexer's own status (spec 2.15 status data and the writer), on its port: what the operator reads. */
export const INDEXER_STATUS_PATH = '/status';

/** The indexer's internal ingest route for a chain-data provider (never routed by an ingress). */
export const WEBHOOK_PATH = '/internal/webhook';

export const DEFAULT_PORTS = {
  api: SETTINGS.API_PORT.default,
  indexer: SETTINGS.INDEXER_PORT.default,
  operator: SETTINGS.OPERATOR_PORT.default,
  chain: SETTINGS.CHAIN_RPC_PORT.default,
} as const;

/**
 * The simulated chain's probes: `health` as a Solana RPC node serves it (`ok`, or 503 `behind`
 * while it catches up with the wall clock), `live` 200 whenever the process answers.
 */
export const CHAIN_PATHS = { health: '/health', live: '/live' } as const;

/** The container image built by the Dockerfile. */
export const IMAGE = {
  /** Numeric non-root user and group (`USER 10001:10001`). */
  uid: 10001,
  gid: 10001,
  /** The only writable path: mount an emptyDir there with a read-only root filesystem. */
  writableDir: '/tmp',
  workingDir: '/app',
  /** Commands, relative to `workingDir`, of the processes the image runs. */
  commands: {
    api: ['node', 'dist/server/main.js'],
    // A batch stays alive from parse to publish, so V8's default young generation copies it
    // over and over: 64 MB semi-spaces took ~10 % off the indexer's CPU per event (D-123, D-176;
    // up to 192 MB of young generation, inside the 1 Gi limit). `npm run bench -- indexer` runs
    // under the same flags.
    indexer: ['node', '--max-semi-space-size=64', 'dist/indexer/main.js'],
    migrate: ['node', 'dist/core/db/migrate-main.js'],
    // The simulated chain and its JSON-RPC: a simulator-source tenant's chain (D-211).
    chain: ['node', 'dist/simulator/main.js'],
    // V8 grows the heap lazily: capped so the operator stays inside its 512 Mi limit. Live heap
    // is about 60 MB plus 0.14 MB a tenant (its caches, D-323): 256 MB holds 1,000 tenants (npm
    // run bench -- operator). The kit renders the cap as half the pods' memory limit (D-420,
    // operatorCommand in cdk8s/lib/operator.ts): this is the default limit's.
    operator: ['node', '--max-old-space-size=256', 'dist/operator/main.js'],
    // Checks a tenant's API through its Service: the chart's `helm test` Pod (check/main.ts).
    check: ['node', 'dist/check/main.js'],
  },
} as const;
