import type { Common } from '../core/common';
import { createDatabase, type Db } from '../core/db';
import { dropExpiredSchema, readLiveSchema, switchLiveSchema } from '../core/db/live-projection';
import { createProjectionSchema, inSchema, projectionSchema } from '../core/db/projection-schema';
import { indexerPoolApplicationName } from '../core/indexer-admin';
import type { UpdateLog } from '../core/redis/updates';
import type { Logger } from '../core/telemetry/logger';
import { createIndexer, type Indexer } from './indexer';
import type { Source } from './sources/types';
import { writerInstance } from './writer-lease';

/** What a building indexer reports beside its indexing status (`/status`, D-411). */
export interface BuildStatus {
  /** The schema it builds: `p<version>`. */
  schema: string;
  /** `building` until it switched the API to its schema (or found it switched), `live` after. */
  state: 'building' | 'live';
  /** The last slot the build processed. */
  builtSlot: number | null;
  /** The live writer's last processed slot, as last read (null once live: it is the build's). */
  liveWriterSlot: number | null;
  /** When this process switched the pointer (null when it found it switched, or has not). */
  switchedAt: string | null;
}

/**
 * Creates the version's schema unless it exists (a restarted builder goes on with what it built).
 * Two builders starting together: the second's CREATE fails and it finds the schema there.
 */
export async function ensureProjectionSchema(db: Db, version: number): Promise<{ schema: string; created: boolean }> {
  const schema = projectionSchema(version);
  const exists = async () => (await db.oneOrNone('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])) !== null;
  if (await exists()) return { schema, created: false };
  try {
    await createProjectionSchema(db, version);
    return { schema, created: true };
  } catch (err) {
    if (await exists()) return { schema, created: false };
    throw err;
  }
}

/**
 * The switch of a build (D-411): once the build's last processed slot is within `withinSlots` of
 * the live writer's (the cursor of the schema the pointer names), the pointer is moved to the
 * build's schema, in one transaction with the notification every API process follows (D-333).
 * From then on the build is the live schema and its writer the live writer; it never switches
 * back. `check` runs after each committed batch and at a period; checks do not overlap.
 */
export function createProjectionBuild(opts: {
  /** Sessions whose names resolve in the live schema (`public`): the pointer and the live cursor are read there. */
  db: Db;
  schema: string;
  /** The projection version built: the schema must record it before it is switched to (D-456). */
  version: number;
  withinSlots: number;
  /** How long the schema switched away from is kept (D-412). */
  retainMs: number;
  builtSlot: () => number | null;
  logger: Logger;
}) {
  const { db, schema, logger } = opts;
  const st: BuildStatus = { schema, state: 'building', builtSlot: null, liveWriterSlot: null, switchedAt: null };
  let checking: Promise<void> | undefined;

  async function checkOnce(): Promise<void> {
    st.builtSlot = opts.builtSlot();
    if (st.state === 'live') return;
    const live = await readLiveSchema(db);
    if (live === schema) {
      st.state = 'live';
      st.liveWriterSlot = null;
      logger.info({ schema }, 'the API already reads the built schema: writing it as the live writer');
      return;
    }
    // The pointer's value is a schema name by its CHECK (public or p<version>).
    const { s } = await db.one<{ s: string }>(`SELECT last_processed_slot AS s FROM ${live}.indexer_cursor WHERE id = 1`);
    st.liveWriterSlot = Number(s);
    if (st.builtSlot === null || st.builtSlot < st.liveWriterSlot - opts.withinSlots) return;
    await switchLiveSchema(db, schema, { retainMs: opts.retainMs, version: opts.version });
    st.state = 'live';
    st.switchedAt = new Date().toISOString();
    logger.info({ from: live, to: schema, builtSlot: st.builtSlot, liveWriterSlot: st.liveWriterSlot }, 'build caught up with the live writer: the API now reads the built schema');
    st.liveWriterSlot = null;
  }

  return {
    /** Resolves once this check is done; a failed check is logged and tried at the next. */
    check(): Promise<void> {
      checking ??= checkOnce()
        .catch((err: unknown) => logger.error({ err }, 'checking whether the build can be switched to failed: not switched; tried again'))
        .finally(() => (checking = undefined));
      return checking;
    },
    /** Once live: drops the schema switched away from when its retention has passed (D-412). */
    async sweep(): Promise<void> {
      if (st.state === 'live') await sweepRetainedSchema(db, logger);
    },
    /** Resolves when no check is under way. */
    idle: (): Promise<void> => checking ?? Promise.resolve(),
    live: () => st.state === 'live',
    status: (): BuildStatus => ({ ...st, builtSlot: opts.builtSlot() }),
  };
}

export type ProjectionBuild = ReturnType<typeof createProjectionBuild>;

/**
 * Drops the schema switched away from once its retention has passed (D-412); a failure is logged
 * and tried at the next sweep. Only a live writer sweeps, while it holds its lease, so the old
 * schema stays while its own writer may still be the live one.
 */
export async function sweepRetainedSchema(db: Db, logger: Logger): Promise<void> {
  try {
    const dropped = await dropExpiredSchema(db);
    if (dropped) logger.info({ dropped }, 'the projection schema switched away from was kept for its retention and is dropped');
  } catch (err) {
    logger.warn({ err }, 'dropping the previous projection schema failed; tried again');
  }
}

/** Sweeps every `intervalMs` while `writing()`; returns the stop. */
export function startRetentionSweep(db: Db, logger: Logger, writing: () => boolean, intervalMs = 60_000): () => void {
  const timer = setInterval(() => void (writing() ? sweepRetainedSchema(db, logger) : undefined), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * An indexer in build mode (D-411): this release's projection schema created if missing, an
 * indexer writing it through a pool of its own whose names resolve there first (under that
 * schema's writer lease), publishing nothing until the API reads it, and the switch checked after
 * each batch and every `checkMs`.
 */
export async function startProjectionBuild(opts: {
  common: Common;
  /** The live schema's pool (the pointer, the live writer's cursor). */
  db: Db;
  databaseUrl: string;
  version: number;
  updates: UpdateLog | undefined;
  source: Source;
  instance?: string;
  checkMs?: number;
}): Promise<{ indexer: Indexer; build: ProjectionBuild; db: Db; close(): Promise<void> }> {
  const { common } = opts;
  const { config, logger } = common;
  const { schema, created } = await ensureProjectionSchema(opts.db, opts.version);
  logger.info({ schema, created }, created ? 'projection schema created: building it from the chain' : 'projection schema found: building on from its cursor');
  const url = inSchema(opts.databaseUrl, schema);
  const database = createDatabase({ url, poolMax: config.databasePoolMax, applicationName: indexerPoolApplicationName(opts.instance ?? writerInstance()) });
  let indexer: Indexer | undefined;
  const build = createProjectionBuild({ db: opts.db, schema, version: opts.version, withinSlots: config.indexerBuildSwitchSlots, retainMs: config.projectionRetainMs, builtSlot: () => indexer?.status().lastProcessedSlot ?? null, logger });
  indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: url, updates: opts.updates, source: opts.source, instance: opts.instance, schema, publishing: build.live });
  indexer.onBatch(() => void build.check());
  // The retention sweep is the writer's: only while this process holds the build schema's lease.
  const timer = setInterval(() => void build.check().then(() => (indexer?.status().role === 'writer' ? build.sweep() : undefined)), opts.checkMs ?? 5_000);
  timer.unref();
  void build.check();
  return {
    indexer,
    build,
    db: database.db,
    async close() {
      clearInterval(timer);
      await build.idle();
      await database.close();
    },
  };
}
