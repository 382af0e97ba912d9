import type { Db } from './index';
import { readLiveSchema } from './live-projection';

/**
 * A projection schema being built beside the live one (D-411) as PostgreSQL holds it, whichever
 * process asks: the API's `GET /admin/indexer` and every indexer's own `/status` (which the
 * operator reads into the MarketIndexer's `Reindexing` condition, D-435) answer from this one query.
 */
export interface ProjectionBuildRow {
  schema: string;
  last_processed_slot: string | null;
  chain_tip_slot: string | null;
  writer_id: string | null;
  heartbeat_at: Date | null;
}

/**
 * The newest `p<version>` of a higher version than the live schema's (`public` counts as 0; a
 * schema kept after a switch is lower), with its cursor and its writer's status; undefined when
 * there is none.
 */
export async function projectionBuildState(db: Db): Promise<ProjectionBuildRow | undefined> {
  const found = await db.oneOrNone<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_namespace n, public.projection_live l
      WHERE l.id = 1 AND n.nspname ~ '^p[1-9][0-9]{0,8}$'
        AND substr(n.nspname, 2)::int > (CASE WHEN l.schema_name = 'public' THEN 0 ELSE substr(l.schema_name, 2)::int END)
      ORDER BY substr(n.nspname, 2)::int DESC LIMIT 1`,
  );
  if (!found) return undefined;
  // The name matched p<digits> above: safe to interpolate.
  const s = found.schema;
  const row = await db.oneOrNone<Omit<ProjectionBuildRow, 'schema'>>(
    `SELECT c.last_processed_slot, st.chain_tip_slot, st.writer_id, st.heartbeat_at
       FROM ${s}.indexer_cursor c LEFT JOIN ${s}.indexer_status st ON st.id = 1 WHERE c.id = 1`,
  );
  return { schema: s, last_processed_slot: null, chain_tip_slot: null, writer_id: null, heartbeat_at: null, ...row };
}

/** How far a build is: its schema, the last slot it processed (u64 as a string), the tip its writer last saw, and the slots between. */
export interface BuildProgress {
  schema: string;
  lastProcessedSlot: string | null;
  chainTipSlot: number | null;
  slotLag: number | null;
}

const num = (v: string | null | undefined) => (v === null || v === undefined ? null : Number(v));

export function buildProgressOf(row: ProjectionBuildRow): BuildProgress {
  const built = num(row.last_processed_slot);
  const tip = num(row.chain_tip_slot);
  return {
    schema: row.schema,
    lastProcessedSlot: built === null ? null : String(built),
    chainTipSlot: tip,
    slotLag: tip !== null && built !== null ? Math.max(0, tip - built) : null,
  };
}

/** The schema the API reads and the build in progress (null when none): the `projection` of an indexer's `/status`. */
export async function projectionState(db: Db): Promise<{ live: string; build: BuildProgress | null }> {
  const [live, build] = await Promise.all([readLiveSchema(db), projectionBuildState(db)]);
  return { live, build: build ? buildProgressOf(build) : null };
}
