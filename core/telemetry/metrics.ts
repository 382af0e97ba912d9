import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The metric catalog: every metric the service exposes, declared once as data. `createMetrics`
 * builds the registry from it; the deployment kit's alert rules and the dashboards import it,
 * so a renamed metric breaks their build instead of silently matching nothing. The six names of
 * spec 4.9 keep their exact spelling; the rest share the `service_` prefix.
 */

/** Labels every series of a process carries (prom-client default labels). */
export const METRIC_LABELS = { service: 'service', tenant: 'tenant' } as const;

/** Values of the `service` label: one per process kind. */
export const METRIC_SERVICES = { api: 'api', indexer: 'indexer', embedded: 'embedded', operator: 'operator' } as const;
export type MetricService = (typeof METRIC_SERVICES)[keyof typeof METRIC_SERVICES];

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSpec {
  name: string;
  type: MetricType;
  help: string;
  labelNames?: readonly string[];
  buckets?: readonly number[];
  /** Which processes set it (dashboards and alert rules select on the `service` label). */
  services: readonly MetricService[];
}

const API = ['api', 'embedded'] as const;
const INDEXER = ['indexer', 'embedded'] as const;

export const METRICS = {
  // spec 4.9
  indexerTransactionsProcessed: {
    name: 'service_indexer_transactions_processed_total',
    type: 'counter',
    help: 'Program transactions processed by the indexer',
    labelNames: ['source'],
    services: INDEXER,
  },
  indexerSlotLag: {
    name: 'service_indexer_slot_lag',
    type: 'gauge',
    help: 'Chain tip slot minus the last slot the indexer committed',
    // The API sets it too, from outside: its own RPC's tip minus the committed cursor (D-213).
    services: ['indexer', 'api', 'embedded'],
  },
  indexerProcessingDuration: {
    name: 'service_indexer_processing_duration_seconds',
    type: 'histogram',
    help: 'Time to decode, project and commit one batch',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    services: INDEXER,
  },
  apiRequests: {
    name: 'service_api_requests_total',
    type: 'counter',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    services: API,
  },
  apiRequestDuration: {
    name: 'service_api_request_duration_seconds',
    type: 'histogram',
    help: 'HTTP request duration by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
    services: API,
  },
  rateLimitExceeded: {
    name: 'service_rate_limit_exceeded_total',
    type: 'counter',
    help: 'Requests refused with 429, by tier',
    labelNames: ['tier'],
    services: API,
  },
  // indexer
  indexerEventsApplied: {
    name: 'service_indexer_events_applied_total',
    type: 'counter',
    help: 'Events applied to the projections (first delivery only), by kind',
    labelNames: ['kind'],
    services: INDEXER,
  },
  indexerDuplicateEvents: {
    name: 'service_indexer_duplicate_events_total',
    type: 'counter',
    help: 'Events seen again and skipped by the exactly-once ledger',
    services: INDEXER,
  },
  indexerBatches: {
    name: 'service_indexer_batches_total',
    type: 'counter',
    help: 'Committed batches by how their events were applied: ahead (while the previous batch committed), reapplied (applied ahead on a state that did not come to be, applied again in the transaction) or in_transaction',
    labelNames: ['path'],
    services: INDEXER,
  },
  indexerCachedRows: {
    name: 'service_indexer_row_cache_rows',
    type: 'gauge',
    help: 'Rows the indexer keeps in memory across batches (INDEXER_CACHE_ROWS is the limit)',
    services: INDEXER,
  },
  indexerDeadLetters: {
    name: 'service_indexer_dead_letters_total',
    type: 'counter',
    help: 'Events or transactions stored as dead letters, by reason',
    labelNames: ['reason'],
    services: INDEXER,
  },
  indexerDeadLetterRetries: {
    name: 'service_indexer_dead_letter_retries_total',
    type: 'counter',
    help: 'Dead-letter retry requests the writer settled (D-164), by outcome (applied, already_applied, still_failing, not_retryable)',
    labelNames: ['outcome'],
    services: INDEXER,
  },
  indexerRpcErrors: {
    name: 'service_indexer_rpc_errors_total',
    type: 'counter',
    help: 'Failed JSON-RPC calls, by method and kind (http, timeout, network, rpc, rate_limited, batch_refused)',
    labelNames: ['method', 'kind'],
    services: INDEXER,
  },
  indexerLastProcessedSlot: {
    name: 'service_indexer_last_processed_slot',
    type: 'gauge',
    help: 'Last slot committed by the indexer',
    services: INDEXER,
  },
  indexerIsWriter: {
    name: 'service_indexer_is_writer',
    type: 'gauge',
    help: '1 while this process holds the tenant writer lease, 0 while on standby or after stepping down',
    services: INDEXER,
  },
  indexerLeaseToken: {
    name: 'service_indexer_writer_lease_token',
    type: 'gauge',
    help: 'Fencing token of the writer lease this process took last (increments at every take-over, D-300)',
    services: INDEXER,
  },
  indexerLeaseTakeovers: {
    name: 'service_indexer_writer_lease_takeovers_total',
    type: 'counter',
    help: 'Times this process took the writer lease from a holder whose lease had expired (a hung writer, D-300)',
    services: INDEXER,
  },
  indexerProjectionVersion: {
    name: 'service_indexer_projection_version',
    type: 'gauge',
    help: "Projection version (D-330) of this process's release (of=release) and, once it writes, of the tables it writes (of=tables; 0 when none is recorded)",
    labelNames: ['of'],
    services: INDEXER,
  },
  indexerReindexDue: {
    name: 'service_indexer_reindex_due',
    type: 'gauge',
    help: "1 while this writer's release has another projection version than the one that built the tables it writes (a re-index is due, D-331), else 0",
    services: INDEXER,
  },
  busPublishLatency: {
    name: 'service_bus_commit_to_publish_seconds',
    type: 'histogram',
    help: 'Time from batch commit to the bus accepting its messages',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    services: INDEXER,
  },
  busPublishFailures: {
    name: 'service_bus_publish_failures_total',
    type: 'counter',
    help: 'Committed batches whose live updates the bus did not take (Redis down or not answering)',
    services: INDEXER,
  },
  storeErrors: {
    name: 'service_store_errors_total',
    type: 'counter',
    help: 'PostgreSQL or Redis errors seen by the process, by store: failed statements of requests, failed indexer writes, Redis connection errors',
    labelNames: ['store'],
    services: ['api', 'indexer', 'embedded'],
  },
  // Reads from a replica (D-510, D-511)
  dbReads: {
    name: 'service_db_reads_total',
    type: 'counter',
    help: 'API reads by the PostgreSQL pool that served them (primary, replica); with DATABASE_READ_URL unset every read is the primary\'s and none is counted',
    labelNames: ['pool'],
    services: API,
  },
  dbReplicaLagSlots: {
    name: 'service_db_replica_lag_slots',
    type: 'gauge',
    help: 'Slots the read replica\'s indexed slot trails the newest slot this API process has seen committed on the primary; NaN while the replica cannot be reached',
    services: API,
  },
  dbReplicaServing: {
    name: 'service_db_replica_serving',
    type: 'gauge',
    help: '1 while the read replica is reachable and within DATABASE_READ_MAX_LAG_SLOTS (reads go to it), 0 while reads go to the primary',
    services: API,
  },
  // WebSocket
  wsConnections: { name: 'service_ws_connections', type: 'gauge', help: 'Open WebSocket connections', services: API },
  wsSubscriptions: { name: 'service_ws_subscriptions', type: 'gauge', help: 'Active channel subscriptions', services: API },
  wsMessagesSent: { name: 'service_ws_messages_sent_total', type: 'counter', help: 'WebSocket messages sent', services: API },
  wsMessagesSkipped: {
    name: 'service_ws_messages_skipped_total',
    type: 'counter',
    help: 'Updates skipped for a client whose send buffer was over the backpressure limit',
    services: API,
  },
  wsBackpressureCloses: {
    name: 'service_ws_backpressure_closes_total',
    type: 'counter',
    help: 'Connections closed after too many consecutive skipped updates',
    services: API,
  },
  wsAuthFailures: {
    name: 'service_ws_auth_failures_total',
    type: 'counter',
    help: 'Rejected position-channel authentications, by reason',
    labelNames: ['reason'],
    services: API,
  },
  wsRefusals: {
    name: 'service_ws_refusals_total',
    type: 'counter',
    help: 'Refused connections or subscriptions, by reason',
    labelNames: ['reason'],
    services: API,
  },
  // The appendix variant's API-key plans (D-154, D-161): what the plan limits refuse, and who holds /ws.
  planLimitRefusals: {
    name: 'service_plan_limit_refusals_total',
    type: 'counter',
    help: 'Appendix-variant requests and /ws upgrades refused because the caller had spent its API-key plan, by plan and limit (requests, ws_connections)',
    labelNames: ['plan', 'limit'],
    services: API,
  },
  planWsConnections: {
    name: 'service_plan_ws_connections',
    type: 'gauge',
    help: 'Open /ws connections of the appendix variant on this process, by API-key plan (the plan limit counts across replicas)',
    labelNames: ['plan'],
    services: API,
  },
  // /admin/* (D-146, D-186): what was refused before an admin wallet was verified (admins' calls are audited instead).
  adminRefusals: {
    name: 'service_admin_refusals_total',
    type: 'counter',
    help: '/admin/* calls answered before an ADMIN_WALLETS wallet was verified, by reason (unauthenticated, forbidden, rate_limited, unavailable, other); not written to the audit table',
    labelNames: ['reason'],
    services: API,
  },
  // operator
  operatorReconciles: {
    name: 'service_operator_reconciles_total',
    type: 'counter',
    help: 'MarketIndexer reconciles by result (converged, degraded, error)',
    labelNames: ['result'],
    services: ['operator'],
  },
  operatorReconcileDuration: {
    name: 'service_operator_reconcile_duration_seconds',
    type: 'histogram',
    help: 'Time to reconcile one MarketIndexer',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    services: ['operator'],
  },
  operatorWrites: {
    name: 'service_operator_writes_total',
    type: 'counter',
    help: 'Requests that change the cluster, by verb (apply, create, patch, delete, status): an idle reconcile makes none',
    labelNames: ['verb'],
    services: ['operator'],
  },
  operatorQueueDepth: {
    name: 'service_operator_queue_depth',
    type: 'gauge',
    help: 'MarketIndexers waiting to be reconciled',
    services: ['operator'],
  },
  operatorIsLeader: {
    name: 'service_operator_is_leader',
    type: 'gauge',
    help: '1 while this operator holds the leader Lease',
    services: ['operator'],
  },
  // The documented limits (spec 8) beside their live values: what the limits dashboard draws.
  configuredLimit: {
    name: 'service_limit_configured',
    type: 'gauge',
    help: 'A documented /ws limit as this process enforces it, by limit (core/limits.ts WS_LIMIT_GAUGES)',
    labelNames: ['limit'],
    services: API,
  },
  rateLimitMax: {
    name: 'service_rate_limit_max_requests',
    type: 'gauge',
    help: 'Requests one client (IP or wallet) may make per window, by tier, as configured',
    labelNames: ['tier'],
    services: API,
  },
  rateLimitWindow: {
    name: 'service_rate_limit_window_seconds',
    type: 'gauge',
    help: 'Rate-limit window, by tier, as configured',
    labelNames: ['tier'],
    services: API,
  },
  rateLimitPeak: {
    name: 'service_rate_limit_peak_requests',
    type: 'gauge',
    help: 'Most requests one client made in its window (counted across replicas), among the requests this process saw in the current or previous window, by tier',
    labelNames: ['tier'],
    services: API,
  },
  wsIpConnectionsMax: {
    name: 'service_ws_ip_connections_max',
    type: 'gauge',
    help: 'Most WebSocket connections one client IP holds on this process (the limit counts across replicas)',
    services: API,
  },
  wsClientSubscriptionsMax: {
    name: 'service_ws_client_subscriptions_max',
    type: 'gauge',
    help: 'Most channel subscriptions one WebSocket client holds',
    services: API,
  },
  wsSendBufferMax: {
    name: 'service_ws_send_buffer_max_bytes',
    type: 'gauge',
    help: 'Largest send buffer of a WebSocket client, in bytes',
    services: API,
  },
  wsConsecutiveSkipsMax: {
    name: 'service_ws_consecutive_skips_max',
    type: 'gauge',
    help: 'Most consecutive updates skipped for one WebSocket client',
    services: API,
  },
} as const satisfies Record<string, MetricSpec>;

export type MetricKey = keyof typeof METRICS;

/** Values of the `store` label of service_store_errors_total. */
export const STORES = { postgres: 'postgres', redis: 'redis' } as const;

type LabelsOf<S> = S extends { labelNames: readonly (infer L extends string)[] } ? L : string;
type InstanceOf<S> = S extends { type: 'counter' }
  ? Counter<LabelsOf<S>>
  : S extends { type: 'gauge' }
    ? Gauge<LabelsOf<S>>
    : S extends { type: 'histogram' }
      ? Histogram<LabelsOf<S>>
      : never;

export type MetricInstances = { [K in MetricKey]: InstanceOf<(typeof METRICS)[K]> };

/** The exposed name of a catalog metric (alert rules and dashboards use these). */
export const metricName = (key: MetricKey): string => METRICS[key].name;

/**
 * Computes a gauge when /metrics is scraped: for values that are cheap to read once per scrape
 * and would cost something on every event if tracked (the largest send buffer of 1,000 clients).
 */
export function collectOnScrape(gauge: Gauge, compute: () => number): void {
  (gauge as unknown as { collect?: () => void }).collect = () => gauge.set(compute());
}

function build(spec: MetricSpec, registers: Registry[]): Counter | Gauge | Histogram {
  const common = { name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], registers };
  switch (spec.type) {
    case 'counter':
      return new Counter(common);
    case 'gauge':
      return new Gauge(common);
    case 'histogram':
      return new Histogram({ ...common, buckets: [...(spec.buckets ?? [])] });
    default: {
      const unknown: never = spec.type;
      throw new Error(`unknown metric type ${String(unknown)}`);
    }
  }
}

/** One registry per process, holding every catalog metric (and the default process metrics). */
export function createMetrics(opts: { defaultLabels?: Record<string, string>; processMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (opts.defaultLabels) registry.setDefaultLabels(opts.defaultLabels);
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const instances = Object.fromEntries(
    (Object.keys(METRICS) as MetricKey[]).map((key) => [key, build(METRICS[key], registers)]),
  ) as MetricInstances;
  return { registry, ...instances };
}

export type Metrics = ReturnType<typeof createMetrics>;
