import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric the service exposes, declared once. The six names of spec 4.9 keep their
 * exact spelling; the rest share the `service_` prefix. Each process builds one registry.
 */
export function createMetrics(opts: { defaultLabels?: Record<string, string>; processMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (opts.defaultLabels) registry.setDefaultLabels(opts.defaultLabels);
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  return {
    registry,
    // spec 4.9
    indexerTransactionsProcessed: new Counter({
      name: 'service_indexer_transactions_processed_total',
      help: 'Program transactions processed by the indexer',
      labelNames: ['source'] as const,
      registers,
    }),
    indexerSlotLag: new Gauge({
      name: 'service_indexer_slot_lag',
      help: 'Chain tip slot minus the last slot the indexer committed',
      registers,
    }),
    indexerProcessingDuration: new Histogram({
      name: 'service_indexer_processing_duration_seconds',
      help: 'Time to decode, project and commit one batch',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    apiRequests: new Counter({
      name: 'service_api_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    apiRequestDuration: new Histogram({
      name: 'service_api_request_duration_seconds',
      help: 'HTTP request duration by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers,
    }),
    rateLimitExceeded: new Counter({
      name: 'service_rate_limit_exceeded_total',
      help: 'Requests refused with 429, by tier',
      labelNames: ['tier'] as const,
      registers,
    }),
    // indexer
    indexerEventsApplied: new Counter({
      name: 'service_indexer_events_applied_total',
      help: 'Events applied to the projections (first delivery only), by kind',
      labelNames: ['kind'] as const,
      registers,
    }),
    indexerDuplicateEvents: new Counter({
      name: 'service_indexer_duplicate_events_total',
      help: 'Events seen again and skipped by the exactly-once ledger',
      registers,
    }),
    indexerBatches: new Counter({
      name: 'service_indexer_batches_total',
      help: 'Committed batches by how their events were applied: ahead (while the previous batch committed), reapplied (applied ahead on a state that did not come to be, applied again in the transaction) or in_transaction',
      labelNames: ['path'] as const,
      registers,
    }),
    indexerCachedRows: new Gauge({
      name: 'service_indexer_row_cache_rows',
      help: 'Rows the indexer keeps in memory across batches (INDEXER_CACHE_ROWS is the limit)',
      registers,
    }),
    indexerDeadLetters: new Counter({
      name: 'service_indexer_dead_letters_total',
      help: 'Events or transactions stored as dead letters, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    indexerRpcErrors: new Counter({
      name: 'service_indexer_rpc_errors_total',
      help: 'Failed JSON-RPC calls, by method and kind (http, timeout, rpc, rate_limited)',
      labelNames: ['method', 'kind'] as const,
      registers,
    }),
    indexerLastProcessedSlot: new Gauge({
      name: 'service_indexer_last_processed_slot',
      help: 'Last slot committed by the indexer',
      registers,
    }),
    indexerIsWriter: new Gauge({
      name: 'service_indexer_is_writer',
      help: '1 while this process holds the tenant writer lock, 0 while on standby',
      registers,
    }),
    busPublishLatency: new Histogram({
      name: 'service_bus_commit_to_publish_seconds',
      help: 'Time from batch commit to the bus accepting its messages',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers,
    }),
    busPublishFailures: new Counter({
      name: 'service_bus_publish_failures_total',
      help: 'Committed batches whose live updates the bus did not take (Redis down or not answering)',
      registers,
    }),
    // WebSocket
    wsConnections: new Gauge({ name: 'service_ws_connections', help: 'Open WebSocket connections', registers }),
    wsSubscriptions: new Gauge({ name: 'service_ws_subscriptions', help: 'Active channel subscriptions', registers }),
    wsMessagesSent: new Counter({ name: 'service_ws_messages_sent_total', help: 'WebSocket messages sent', registers }),
    wsMessagesSkipped: new Counter({
      name: 'service_ws_messages_skipped_total',
      help: 'Updates skipped for a client whose send buffer was over the backpressure limit',
      registers,
    }),
    wsBackpressureCloses: new Counter({
      name: 'service_ws_backpressure_closes_total',
      help: 'Connections closed after too many consecutive skipped updates',
      registers,
    }),
    wsAuthFailures: new Counter({
      name: 'service_ws_auth_failures_total',
      help: 'Rejected position-channel authentications, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    wsRefusals: new Counter({
      name: 'service_ws_refusals_total',
      help: 'Refused connections or subscriptions, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
