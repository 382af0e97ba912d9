import type { Db } from '../core/db';
import { LIVE_SCHEMA } from '../core/db/projection-schema';

/** The projection version of this release and of the tables it is about to write (D-331). */
export interface ProjectionVersions {
  /** PROJECTION_VERSION of this release. */
  release: number;
  /** The version that built the tables, null when none is recorded. */
  tables: number | null;
  /** This writer recorded its own version: the database had processed no transaction yet. */
  recorded: boolean;
}

/**
 * Run by a writer once it holds the lease: records its release's projection version on a
 * database that has processed no transaction (its tables are empty, whatever built them), and
 * reads the version that built the tables otherwise. Fenced like a batch: only the lease's
 * current holder records. In one statement, so no batch commits between the check and the write.
 */
export async function recordProjectionVersion(db: Db, opts: { release: number; epoch: number }): Promise<ProjectionVersions> {
  const row = await db.one<{ recorded: number | null; tables: number | null }>(
    `WITH recorded AS (
       UPDATE projection_version SET version = $1, recorded_at = now()
        WHERE id = 1 AND version IS DISTINCT FROM $1
          AND NOT EXISTS (SELECT 1 FROM processed_transactions)
          AND (SELECT token FROM writer_lease WHERE id = 1) = $2
       RETURNING version)
     SELECT (SELECT version FROM recorded) AS recorded, (SELECT version FROM projection_version WHERE id = 1) AS tables`,
    [opts.release, opts.epoch],
  );
  // The outer SELECT sees the row as it was before the UPDATE of the same statement.
  const tables = row.recorded ?? row.tables;
  return { release: opts.release, tables: tables === null ? null : Number(tables), recorded: row.recorded !== null };
}

/**
 * The writer's version check (`recordProjectionVersion`), tried until it answers, at growing
 * intervals (1 s doubling to 30 s), while `going()` (D-456). A writer that indexed before it
 * answered could leave its schema's version unrecorded for good: once a transaction is processed
 * nothing records it, and a schema of unknown version is one any release would write or switch to.
 * Undefined when `going()` turned false first.
 */
export async function checkProjectionVersion(
  db: Db,
  opts: { release: number; epoch: number; signal: AbortSignal; going: () => boolean; onFailure: (err: unknown, nextMs: number) => void; firstDelayMs?: number },
): Promise<ProjectionVersions | undefined> {
  for (let delayMs = opts.firstDelayMs ?? 1_000; opts.going(); delayMs = Math.min(delayMs * 2, 30_000)) {
    try {
      return await recordProjectionVersion(db, opts);
    } catch (err) {
      if (!opts.going()) return undefined;
      opts.onFailure(err, delayMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        opts.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
  return undefined;
}

/**
 * Why a live-mode writer must not write the schema the API reads, or undefined when it may: the
 * schema was built by a newer projection than this release's (D-441). Writing on would put an
 * older projection's rows into the newer tables, which no re-index would notice (versions only
 * look for a release newer than its tables). Happens to a release running after a switch made
 * by a newer one: a pod of the replaced release restarting, or a rollback that kept the pointer.
 */
export async function newerProjectionProblem(db: Db, opts: { schema: string; release: number }): Promise<string | undefined> {
  const row = await db.oneOrNone<{ version: number | null }>(`SELECT version FROM "${opts.schema}".projection_version WHERE id = 1`);
  const tables = row?.version ?? null;
  // `public` of no recorded version was built before versions were (projection 1) or holds nothing
  // yet; a built schema records its builder's before it indexes, and is switched to only then (D-456).
  if (tables === null && opts.schema !== LIVE_SCHEMA) {
    return `the API reads schema ${opts.schema}, whose projection version is not recorded, so which release may write it is unknown: switch the API back to the tables of projection ${opts.release}, or build it again (docs/deploy.md#switching-back)`;
  }
  if (tables === null || tables <= opts.release) return undefined;
  return `the API reads schema ${opts.schema}, built by projection version ${tables}, newer than this release's (${opts.release}): run a release of projection ${tables}, or switch the API back to the tables of projection ${opts.release} first (docs/deploy.md#switching-back)`;
}
