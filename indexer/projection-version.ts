import type { Db } from '../core/db';

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
