/**
 * Names of the spans that connect one change end to end (decision D-86): the indexer's commit of
 * a batch, its publish on the bus, and each API replica's `/ws` fan-out of one of its updates.
 * Declared once; the processes, the trace-chain test and docs/observability.md use them.
 */
export const CHAIN_SPANS = {
  commit: 'indexer.commit',
  publish: 'indexer.publish',
  fanout: 'ws.fanout',
} as const;

/** Attributes on those spans. */
export const CHAIN_ATTRIBUTES = {
  source: 'market_indexer.source',
  slot: 'solana.slot',
  slotLag: 'market_indexer.slot_lag',
  transactions: 'market_indexer.batch.transactions',
  events: 'market_indexer.batch.events',
  deadLetters: 'market_indexer.batch.dead_letters',
  path: 'market_indexer.batch.path',
  /** Prefix of the per-phase durations: `market_indexer.batch.parse_ms`, … */
  phase: 'market_indexer.batch.',
  updates: 'market_indexer.updates',
  /** How long the publish waited behind the previous batch's, in ms. */
  queuedMs: 'market_indexer.publish.queued_ms',
  channel: 'messaging.destination.name',
  seq: 'market_indexer.seq',
  subscribers: 'market_indexer.ws.subscribers',
  sent: 'market_indexer.ws.sent',
  skipped: 'market_indexer.ws.skipped',
} as const;
