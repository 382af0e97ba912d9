import type { Db } from './db';
import { pingDatabase } from './db';
import { buildHealth, isSynced, type HealthInputs } from './health';

/** An indexer whose heartbeat is older than this is not running (heartbeats come every 5 s). */
export const HEARTBEAT_STALE_MS = 30_000;

/** The indexer's state as stored in PostgreSQL: what the API reports, and the indexer's own `/status`. */
export async function indexerHealthInputs(db: Db, startedAt: number): Promise<HealthInputs & { writer: string | null }> {
  const down = { dbConnected: false, rpcConnected: false, indexerRunning: false, slotLag: null, lastProcessedSlot: null, lastActivityAt: null, startedAt, writer: null };
  if (!(await pingDatabase(db))) return down;
  const dbConnected = true;
  const row = await db
    .oneOrNone<{
    last_processed_slot: string;
    last_activity_at: Date | null;
    chain_tip_slot: string | null;
    rpc_connected: boolean | null;
    heartbeat_at: Date | null;
    writer_id: string | null;
  }>(
    `SELECT c.last_processed_slot, c.last_activity_at, s.chain_tip_slot, s.rpc_connected, s.heartbeat_at, s.writer_id
       FROM indexer_cursor c LEFT JOIN indexer_status s ON s.id = 1 WHERE c.id = 1`,
    )
    // A reachable database without the schema (migrations not applied yet) is not usable:
    // probes report it as down (503) instead of failing with a 500.
    .catch((err: { code?: string }) => {
      if (err.code === '42P01') return 'no-schema' as const;
      throw err;
    });
  if (row === 'no-schema') return down;
  const last = row ? Number(row.last_processed_slot) : null;
  const tip = row?.chain_tip_slot ? Number(row.chain_tip_slot) : null;
  const indexerRunning = !!row?.heartbeat_at && Date.now() - row.heartbeat_at.getTime() < HEARTBEAT_STALE_MS;
  return {
    dbConnected,
    rpcConnected: row?.rpc_connected ?? false,
    indexerRunning,
    // The process holding the writer lock (host:pid; the pod name in a cluster), while it beats.
    writer: indexerRunning ? (row?.writer_id ?? null) : null,
    slotLag: tip !== null && last !== null ? Math.max(0, tip - last) : null,
    lastProcessedSlot: last === null ? null : String(last),
    lastActivityAt: row?.last_activity_at ?? null,
    startedAt,
  };
}

/**
 * The `data` of `GET /api/v1/status` (spec 2.15), also served by the indexer's own port with the
 * writer's identity added (the operator reads it into the MarketIndexer status).
 */
export function statusBody(i: HealthInputs, health: ReturnType<typeof buildHealth>) {
  return {
    status: health.status,
    synced: isSynced(i),
    slotLag: health.slotLag,
    lastProcessedSlot: health.lastProcessedSlot,
    lastActivityAt: health.lastActivityAt,
    indexerRunning: i.indexerRunning,
  };
}
