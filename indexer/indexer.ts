import { hostname } from 'node:os';
import type { IMain } from 'pg-promise';
import type { Common } from '../core/common';
import type { Db } from '../core/db';
import type { UpdateLog } from '../core/redis/updates';
import { createProjector, FencedError, type BatchResult, type PreparedBatch } from './project';
import { createPublisher } from './publish';
import type { Source } from './sources/types';
import { acquireWriterLock, type WriterLock } from './writer-lock';

export type IndexerRole = 'starting' | 'standby' | 'writer' | 'stopped' | 'failed';

export interface IndexerStatus {
  role: IndexerRole;
  lastProcessedSlot: number | null;
  chainTip: number | null;
  lastError: string | null;
}

export interface Indexer {
  /** Runs until the source is exhausted or shutdown starts; waits as standby while another process writes. */
  run(): Promise<void>;
  status(): IndexerStatus;
  /** Resolves after the batch in flight (if any) committed and published. */
  stop(): Promise<void>;
  onBatch(listener: (r: BatchResult, publishMs: number) => void): void;
}

export function createIndexer(opts: {
  common: Common;
  db: Db;
  pgp: IMain;
  databaseUrl: string;
  /** Where committed changes are published; undefined publishes nothing. */
  updates: UpdateLog | undefined;
  source: Source;
  heartbeatMs?: number;
}): Indexer {
  const { common, db, source } = opts;
  const { logger, metrics, config } = common;
  const writerId = `${hostname()}:${process.pid}`;
  const projector = createProjector({ db, pgp: opts.pgp, programId: config.programId, source: source.name, cacheRows: config.indexerCacheRows });
  const publisher = createPublisher({ updates: opts.updates, logger, metrics });
  const controller = new AbortController();
  common.shutdown.signal.addEventListener('abort', () => controller.abort(), { once: true });
  const listeners: ((r: BatchResult, publishMs: number) => void)[] = [];
  const st: IndexerStatus = { role: 'starting', lastProcessedSlot: null, chainTip: null, lastError: null };
  let running: Promise<void> | undefined;
  let lock: WriterLock | undefined;

  async function heartbeat(): Promise<void> {
    try {
      st.chainTip = await source.chainTip();
    } catch {
      // The source counts its own RPC errors; the tip just stays unknown.
    }
    if (st.chainTip !== null && st.lastProcessedSlot !== null) metrics.indexerSlotLag.set(Math.max(0, st.chainTip - st.lastProcessedSlot));
    if (st.role !== 'writer') return;
    await db
      .none(
        `INSERT INTO indexer_status (id, writer_id, chain_tip_slot, rpc_connected, started_at, heartbeat_at)
         VALUES (1, $1, $2, $3, now(), now())
         ON CONFLICT (id) DO UPDATE SET writer_id = EXCLUDED.writer_id, chain_tip_slot = EXCLUDED.chain_tip_slot,
           rpc_connected = EXCLUDED.rpc_connected, heartbeat_at = now(),
           started_at = CASE WHEN indexer_status.writer_id = EXCLUDED.writer_id THEN indexer_status.started_at ELSE now() END`,
        [writerId, st.chainTip, source.connected()],
      )
      .catch((err: unknown) => logger.warn({ err }, 'heartbeat write failed'));
  }

  async function loop(): Promise<void> {
    metrics.indexerIsWriter.set(0);
    st.role = 'standby';
    lock = await acquireWriterLock({
      databaseUrl: opts.databaseUrl,
      tenant: config.tenantId,
      signal: controller.signal,
      onWaiting: () => logger.info('another indexer is writing; waiting as hot standby'),
    });
    if (!lock) return;
    st.role = 'writer';
    st.lastProcessedSlot = lock.cursor.lastSlot;
    metrics.indexerIsWriter.set(1);
    metrics.indexerLastProcessedSlot.set(lock.cursor.lastSlot);
    logger.info({ epoch: lock.epoch, fromSlot: lock.cursor.lastSlot }, 'writer lock acquired');
    void lock.lost.then((err) => {
      if (st.role === 'writer' && !controller.signal.aborted) {
        logger.error({ err }, 'writer lock lost; stopping');
        st.lastError = 'writer lock lost';
        controller.abort();
      }
    });
    let publishing: Promise<void> = Promise.resolve();
    const tick = () => {
      // Not awaited: a slow or unreachable RPC must not delay indexing.
      void heartbeat();
      // Updates a failed publish kept go out now rather than with a batch that may be long in
      // coming on a quiet chain; in order, behind any publish under way.
      if (publisher.unsent() > 0) publishing = publishing.then(() => publisher.publish([], performance.now()).then(() => undefined));
    };
    tick();
    const timer = setInterval(tick, opts.heartbeatMs ?? 5_000);
    timer.unref();
    try {
      const epoch = lock.epoch;
      const commitOne = async (prepared: PreparedBatch): Promise<void> => {
        const result = await projector.commit(prepared, { writerEpoch: epoch });
        const committedAt = performance.now();
        const p = result.phases;
        metrics.indexerProcessingDuration.observe((p.parse + p.ledger + p.load + p.apply + p.write + p.commit) / 1000);
        metrics.indexerTransactionsProcessed.inc({ source: source.name }, result.transactions);
        for (const [kind, n] of result.appliedByKind) metrics.indexerEventsApplied.inc({ kind }, n);
        metrics.indexerDuplicateEvents.inc(result.duplicates);
        metrics.indexerBatches.inc({ path: result.path });
        metrics.indexerCachedRows.set(projector.cachedRows());
        for (const d of result.deadLetters) {
          metrics.indexerDeadLetters.inc({ reason: d.reason });
          logger.warn({ signature: d.signature, eventIndex: d.eventIndex, kind: d.kind, reason: d.reason, detail: d.detail }, 'dead letter');
        }
        if (result.slot !== null) {
          st.lastProcessedSlot = Math.max(st.lastProcessedSlot ?? 0, result.slot);
          metrics.indexerLastProcessedSlot.set(st.lastProcessedSlot);
          if (st.chainTip !== null) metrics.indexerSlotLag.set(Math.max(0, st.chainTip - st.lastProcessedSlot));
        }
        // The next commit need not wait for this publish, but publishes stay in commit order
        // and at most one runs behind the commits, so Redis trouble cannot queue up batches.
        const previous = publishing;
        publishing = previous.then(async () => {
          const publishMs = await publisher.publish(result.messages, committedAt);
          for (const l of listeners) l(result, publishMs);
        });
        publishing.catch(() => {}); // surfaced by the next commit or the end of the loop
        await previous;
      };
      // Two-stage pipeline: the next batch is parsed, decoded and applied ahead on the row
      // cache (CPU) while the previous one is being written (database I/O). Commits stay
      // strictly in order, one at a time. The CPU work yields to the event loop after each
      // millisecond, so the commit's query results are handled as they arrive.
      let inflight: Promise<void> | undefined;
      for await (const txs of source.batches(lock.cursor, controller.signal)) {
        const prepared = await projector.applyAhead(await projector.prepareInSlices(txs));
        if (inflight) await inflight;
        inflight = commitOne(prepared);
        inflight.catch(() => {}); // surfaced by the await above or below, not as unhandled
      }
      if (inflight) await inflight;
      await publishing;
      await heartbeat();
    } finally {
      clearInterval(timer);
    }
  }

  return {
    run() {
      running ??= loop().then(
        () => {
          metrics.indexerIsWriter.set(0);
          // Losing the lock ends the loop like a shutdown would, but it is a failure.
          if (st.lastError === 'writer lock lost') {
            st.role = 'failed';
            throw new Error('writer lock lost');
          }
          st.role = 'stopped';
        },
        (err: unknown) => {
          st.role = 'failed';
          st.lastError = err instanceof FencedError ? 'fenced: another writer took over' : 'indexer loop failed';
          metrics.indexerIsWriter.set(0);
          throw err;
        },
      ).finally(async () => {
        await lock?.release();
      });
      return running;
    },
    status: () => ({ ...st }),
    async stop() {
      controller.abort();
      await running?.catch(() => {});
    },
    onBatch(listener) {
      listeners.push(listener);
    },
  };
}
