import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { IMain } from 'pg-promise';
import type { Common } from '../core/common';
import type { Db } from '../core/db';
import { PROJECTION_VERSION, reindexDue } from '../core/db/projection-version';
import { ensureRetryQueue, LIVE_SCHEMA } from '../core/db/projection-schema';
import { BATCH_PATHS, RECENT_BATCHES, RETRY_CHANNEL, RETRY_OUTCOMES, type BatchTiming } from '../core/indexer-admin';
import type { UpdateLog } from '../core/redis/updates';
import { STORES } from '../core/telemetry/metrics';
import { createProjector, FencedError, type BatchResult, type PreparedBatch } from './projection';
import { CHAIN_ATTRIBUTES as ATTR, CHAIN_SPANS } from '../core/telemetry/trace-chain';
import { checkProjectionVersion } from './projection-version';
import { createPublisher } from './publish';
import type { Source } from './sources/types';
import { acquireWriterLease, writerInstance, type WriterLease } from './writer-lease';

export type IndexerRole = 'starting' | 'standby' | 'writer' | 'stopped' | 'failed';

export interface IndexerStatus {
  role: IndexerRole;
  lastProcessedSlot: number | null;
  chainTip: number | null;
  lastError: string | null;
  /** Once writing: the projection version that built the tables, and whether it differs from this release's (D-331). */
  projection: { tables: number | null; reindexDue: boolean } | null;
}

export interface Indexer {
  /** Runs until the source is exhausted or shutdown starts; waits as standby while another process writes. */
  run(): Promise<void>;
  status(): IndexerStatus;
  /** Resolves after every batch the source delivered (up to three in the pipeline, D-174) committed and published. */
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
  /** This process as the lease and its sessions name it (default host:pid). */
  instance?: string;
  /**
   * The projection schema this indexer builds (D-332), when `databaseUrl` and `db` resolve names
   * there first: its writer lease is that schema's, and it settles the dead-letter retries
   * requested for that schema (the API requests them for the schema it reads, D-442).
   */
  schema?: string;
  /** Whether committed changes are published now (always, unless given): a build publishes once switched to (D-411). */
  publishing?: () => boolean;
}): Indexer {
  const { common, db, source } = opts;
  const { logger, metrics, config } = common;
  const writerId = opts.instance ?? writerInstance();
  const projector = createProjector({ db, pgp: opts.pgp, programId: config.programId, source: source.name, cacheRows: config.indexerCacheRows });
  // Sequenced under the schema it writes, as the API derives the keys of the schema it reads (D-410).
  const publisher = createPublisher({ updates: opts.updates, schema: opts.schema ?? LIVE_SCHEMA, publishing: opts.publishing, logger, metrics });
  // Every path's counter exists from the start (a rule or a panel sees its first increase).
  for (const path of BATCH_PATHS) metrics.indexerBatches.inc({ path }, 0);
  for (const store of Object.values(STORES)) metrics.storeErrors.inc({ store }, 0);
  // Every outcome from the start, so a rate over it exists before the first retry (D-164).
  for (const outcome of RETRY_OUTCOMES) metrics.indexerDeadLetterRetries.inc({ outcome }, 0);
  metrics.indexerProjectionVersion.set({ of: 'release' }, PROJECTION_VERSION);
  const controller = new AbortController();
  common.shutdown.signal.addEventListener('abort', () => controller.abort(), { once: true });
  const listeners: ((r: BatchResult, publishMs: number) => void)[] = [];
  const st: IndexerStatus = { role: 'starting', lastProcessedSlot: null, chainTip: null, lastError: null, projection: null };
  let running: Promise<void> | undefined;
  let lock: WriterLease | undefined;
  // A ring in memory, written with the heartbeat: a commit pays one array push for it (D-165).
  const recent: BatchTiming[] = [];
  const tracer = trace.getTracer('market-indexer/indexer');

  /**
   * The publish of a committed batch, as a child of its commit span, carrying the publish
   * span's traceparent in every envelope so the API replicas' fan-out joins the trace.
   */
  async function publishTraced(commit: Span, result: BatchResult, committedAt: number): Promise<number> {
    if (!result.messages.length && !publisher.unsent()) return publisher.publish(result.messages, committedAt);
    const parent = trace.setSpan(ROOT_CONTEXT, commit);
    const span = tracer.startSpan(CHAIN_SPANS.publish, { kind: SpanKind.PRODUCER }, parent);
    const carrier: Record<string, string> = {};
    const spanContext = trace.setSpan(ROOT_CONTEXT, span);
    // Unsampled traces are propagated too (flags 00): the API then samples none of their fan-out.
    propagation.inject(spanContext, carrier);
    const startedAt = performance.now();
    const failuresBefore = publisher.failures();
    const publishMs = span.isRecording()
      ? await context.with(spanContext, () => publisher.publish(result.messages, committedAt, carrier.traceparent))
      : await publisher.publish(result.messages, committedAt, carrier.traceparent);
    if (span.isRecording()) {
      span.setAttributes({
        [ATTR.updates]: result.messages.length,
        [ATTR.slot]: result.slot ?? undefined,
        // Time from commit to the start of this publish: it waits for the previous batch's.
        [ATTR.queuedMs]: Math.round((startedAt - committedAt) * 1000) / 1000,
      });
      if (publisher.failures() > failuresBefore) span.setStatus({ code: SpanStatusCode.ERROR, message: 'bus publish failed' });
    }
    span.end();
    return publishMs;
  }

  async function heartbeat(epoch: number): Promise<void> {
    try {
      st.chainTip = await source.chainTip();
    } catch {
      // The source counts its own RPC errors; the tip just stays unknown.
    }
    if (st.chainTip !== null && st.lastProcessedSlot !== null) metrics.indexerSlotLag.set(Math.max(0, st.chainTip - st.lastProcessedSlot));
    if (st.role !== 'writer' || !lock?.valid()) return;
    await db
      .none(
        `INSERT INTO indexer_status (id, writer_id, chain_tip_slot, rpc_connected, started_at, heartbeat_at, recent_batches, projection_version)
         VALUES (1, $1, $2, $3, now(), now(), $4, $6)
         ON CONFLICT (id) DO UPDATE SET writer_id = EXCLUDED.writer_id, chain_tip_slot = EXCLUDED.chain_tip_slot,
           rpc_connected = EXCLUDED.rpc_connected, heartbeat_at = now(), recent_batches = EXCLUDED.recent_batches,
           projection_version = EXCLUDED.projection_version,
           started_at = CASE WHEN indexer_status.writer_id = EXCLUDED.writer_id THEN indexer_status.started_at ELSE now() END
         WHERE (SELECT token FROM writer_lease WHERE id = 1) = $5`,
        // Only the lease's holder tells who writes: a writer woken after losing it does not.
        [writerId, st.chainTip, source.connected(), JSON.stringify(recent), epoch, PROJECTION_VERSION],
      )
      .catch((err: unknown) => {
        metrics.storeErrors.inc({ store: STORES.postgres });
        logger.warn({ err }, 'heartbeat write failed');
      });
  }

  /**
   * Which projection built the tables this writer is about to write (D-331): a database with no
   * transaction processed takes this release's version; another version is reported (log,
   * metrics, `GET /admin/indexer`) and indexing goes on as before. Not indexed before it answers
   * (D-456); a projection schema whose version is unknown is not written at all.
   */
  async function checkProjection(epoch: number, held: WriterLease): Promise<boolean> {
    const v = await checkProjectionVersion(db, {
      release: PROJECTION_VERSION, epoch, signal: controller.signal, going: () => !controller.signal.aborted && held.valid(),
      onFailure: (err, nextMs) => {
        metrics.storeErrors.inc({ store: STORES.postgres });
        st.lastError = 'reading the projection version of the tables failed';
        logger.error({ err, retryInMs: nextMs }, 'reading the projection version of the tables failed: not indexing until it answers');
      },
    });
    if (!v) return false;
    st.lastError = null;
    if (opts.schema && v.tables === null) {
      throw new Error(`projection schema ${opts.schema} has processed transactions but records no projection version, so which release built it is unknown: drop it and build it again (docs/deploy.md#re-indexing)`);
    }
    st.projection = { tables: v.tables, reindexDue: reindexDue(v) };
    metrics.indexerProjectionVersion.set({ of: 'tables' }, v.tables ?? 0);
    metrics.indexerReindexDue.set(st.projection.reindexDue ? 1 : 0);
    if (v.recorded) logger.info({ projectionVersion: v.release }, 'no transaction processed yet: the tables are recorded as built by this release\'s projection version');
    else if (st.projection.reindexDue) {
      logger.warn(
        { tablesProjectionVersion: v.tables, releaseProjectionVersion: v.release },
        'the tables were built by another projection version than this release\'s: a re-index is due; this writer goes on writing them with its own projection',
      );
    }
    return true;
  }

  async function loop(): Promise<void> {
    metrics.indexerIsWriter.set(0);
    // Names would resolve to the live tables were the schema missing: refuse instead.
    if (opts.schema) {
      const { schema } = await db.one<{ schema: string | null }>('SELECT current_schema() AS schema');
      if (schema !== opts.schema) throw new Error(`projection schema ${opts.schema} does not exist (names resolve to ${schema}): create it first`);
    }
    st.role = 'standby';
    lock = await acquireWriterLease({
      databaseUrl: opts.databaseUrl,
      tenant: opts.schema ? `${config.tenantId}/${opts.schema}` : config.tenantId,
      instance: writerId,
      timing: config.writerLease,
      signal: controller.signal,
      onWaiting: () => logger.info('another indexer is writing; waiting as hot standby'),
      onTakeOver: ({ holder, terminated }) => {
        metrics.indexerLeaseTakeovers.inc();
        logger.warn({ holder, terminated }, 'writer lease expired: ending the hung writer\'s sessions and taking over');
      },
      onRenewFailed: (err) => {
        metrics.storeErrors.inc({ store: STORES.postgres });
        logger.warn({ err }, 'writer lease renewal failed; retried until the renew deadline');
      },
    });
    if (!lock) return;
    st.role = 'writer';
    st.lastProcessedSlot = lock.cursor.lastSlot;
    metrics.indexerIsWriter.set(1);
    metrics.indexerLastProcessedSlot.set(lock.cursor.lastSlot);
    metrics.indexerLeaseToken.set(lock.epoch);
    logger.info({ epoch: lock.epoch, fromSlot: lock.cursor.lastSlot }, 'writer lease acquired');
    const held = lock;
    void held.lost.then((err) => {
      if (st.role === 'writer' && !controller.signal.aborted) {
        logger.error({ err: err.message }, 'writer lease lost; stepping down');
        st.lastError = 'writer lease lost';
        metrics.indexerIsWriter.set(0);
        controller.abort();
      }
    });
    // This schema's own retry queue (D-455), made here for a schema built before it had one.
    if (opts.schema) await ensureRetryQueue(db, opts.schema);
    if (!(await checkProjection(lock.epoch, held))) return;
    let publishing: Promise<void> = Promise.resolve();
    const epoch = lock.epoch;
    // Dead-letter retries (D-164): settled by this writer between its commits, when the API
    // notifies and at every heartbeat (a notification sent while no writer listened); only
    // those of its own schema (D-442), so every writer may listen.
    let settling: Promise<void> | undefined;
    let settleAgain = false;
    const settleRetries = () => {
      if (settling) {
        settleAgain = true;
        return;
      }
      settling = (async () => {
        do {
          settleAgain = false;
          const done = await projector.settleRetries({ writerEpoch: epoch });
          for (const d of done) {
            logger.info({ request: d.requestId, deadLetter: d.deadLetterId, outcome: d.outcome, reason: d.reason }, 'dead-letter retry settled');
            metrics.indexerDeadLetterRetries.inc({ outcome: d.outcome });
            if (d.messages.length && held.valid()) publishing = publishing.then(() => publisher.publish(d.messages, performance.now()).then(() => undefined));
          }
        } while (settleAgain && !controller.signal.aborted);
      })()
        .catch((err: unknown) => {
          if (!(err instanceof FencedError)) metrics.storeErrors.inc({ store: STORES.postgres });
          logger.warn({ err }, 'dead-letter retries failed; tried again at the next heartbeat');
        })
        .finally(() => (settling = undefined));
    };
    // Without notifications (a database that cannot LISTEN) the heartbeat still finds requests.
    await lock.listen(RETRY_CHANNEL, settleRetries).catch((err: unknown) => logger.warn({ err }, 'LISTEN for dead-letter retries failed; found at heartbeats only'));
    const tick = () => {
      settleRetries();
      // Not awaited: a slow or unreachable RPC must not delay indexing.
      void heartbeat(epoch);
      // Updates a failed publish kept go out now rather than with a batch that may be long in
      // coming on a quiet chain; in order, behind any publish under way.
      if (publisher.unsent() > 0 && held.valid()) publishing = publishing.then(() => publisher.publish([], performance.now()).then(() => undefined));
    };
    tick();
    const timer = setInterval(tick, opts.heartbeatMs ?? 5_000);
    timer.unref();
    try {
      const commitOne = async (prepared: PreparedBatch): Promise<void> => {
        // One trace per change (D-86): this batch's commit, its publish, and every API
        // replica's /ws fan-out of its updates. Unsampled, the commit runs outside any trace
        // context, like an unsampled request (D-85).
        const span = tracer.startSpan(CHAIN_SPANS.commit, { kind: SpanKind.INTERNAL, attributes: { [ATTR.source]: source.name } });
        const spanContext = trace.setSpan(ROOT_CONTEXT, span);
        let result: BatchResult;
        try {
          // PostgreSQL refuses the commit of a writer whose lease lapsed (cursor.ts); this
          // spares the round trip when the process already knows.
          if (!held.valid()) throw new FencedError('the writer lease lapsed before this commit');
          result = span.isRecording()
            ? await context.with(spanContext, () => projector.commit(prepared, { writerEpoch: epoch }))
            : await projector.commit(prepared, { writerEpoch: epoch });
        } catch (err) {
          if (!(err instanceof FencedError)) metrics.storeErrors.inc({ store: STORES.postgres });
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          throw err;
        }
        const committedAt = performance.now();
        if (span.isRecording()) {
          span.setAttributes({
            [ATTR.slot]: result.slot ?? undefined,
            [ATTR.slotLag]: st.chainTip !== null && result.slot !== null ? Math.max(0, st.chainTip - result.slot) : undefined,
            [ATTR.transactions]: result.transactions,
            [ATTR.events]: [...result.appliedByKind.values()].reduce((a, b) => a + b, 0),
            [ATTR.deadLetters]: result.deadLetters.length,
            [ATTR.updates]: result.messages.length,
            [ATTR.path]: result.path,
            // Milliseconds of each phase: parse and apply happen ahead, while the previous batch commits.
            ...Object.fromEntries(Object.entries(result.phases).map(([k, v]) => [`${ATTR.phase}${k}_ms`, Math.round(v * 1000) / 1000])),
          });
        }
        span.end();
        const p = result.phases;
        const totalMs = p.parse + p.ledger + p.load + p.apply + p.write + p.commit;
        metrics.indexerProcessingDuration.observe(totalMs / 1000);
        const round = (ms: number) => Math.round(ms * 1000) / 1000;
        recent.push({
          at: new Date().toISOString(), slot: result.slot, transactions: result.transactions, events: result.applied,
          deadLetters: result.deadLetters.length, path: result.path, totalMs: round(totalMs),
          phasesMs: { parse: round(p.parse), ledger: round(p.ledger), load: round(p.load), apply: round(p.apply), write: round(p.write), commit: round(p.commit) },
        });
        if (recent.length > RECENT_BATCHES) recent.shift();
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
          // A writer that lost the lease publishes nothing more: its successor publishes from
          // the tables, and a late update could supersede a newer one on the clients.
          if (!held.valid()) return;
          const publishMs = await publishTraced(span, result, committedAt);
          for (const l of listeners) l(result, publishMs);
        });
        publishing.catch(() => {}); // surfaced by the next commit or the end of the loop
        await previous;
      };
      // Pipelined: the CPU work on a batch (parse, decode, apply on the row cache, encode)
      // overlaps the commits before it, which stay strictly in order, one at a time, each
      // started only after the one before it committed. A batch is parsed while up to two
      // commits are outstanding (the one under way and the one queued behind it), and applied
      // ahead once at most one is, so Node does not stop for a commit that ran long (D-174).
      // The CPU work yields to the event loop after each millisecond, so the commit's query
      // results are handled as they arrive.
      let queued: Promise<void> = Promise.resolve();
      let underway: Promise<void> = Promise.resolve();
      for await (const txs of source.batches(lock.cursor, controller.signal)) {
        const parsed = await projector.prepareInSlices(txs);
        // The commit before the last one queued: done (or failed) before this batch is applied
        // ahead, so the one still outstanding is the one under way (applyAhead waits for it
        // when the row cache cannot say what it leaves).
        await underway;
        const prepared = await projector.applyAhead(parsed);
        underway = queued;
        // A failed commit rejects every commit queued behind it unattempted.
        queued = queued.then(() => commitOne(prepared));
        queued.catch(() => {}); // surfaced by an await above or below, not as unhandled
      }
      await queued;
      await settling;
      await publishing;
      await heartbeat(epoch);
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
          if (st.lastError === 'writer lease lost') {
            st.role = 'failed';
            throw new Error('writer lease lost');
          }
          st.role = 'stopped';
        },
        (err: unknown) => {
          st.role = 'failed';
          metrics.indexerIsWriter.set(0);
          // A commit refused because the lease lapsed ends the loop before the lease's own
          // notice does: either way this process stepped down.
          if (st.lastError === 'writer lease lost' || (lock && !lock.valid())) {
            st.lastError = 'writer lease lost';
            throw new Error('writer lease lost', { cause: err });
          }
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
