import type { Db } from '../../core/db';
import { pingDatabase } from '../../core/db';
import type { HealthInputs } from '../../core/health';

/** An indexer whose heartbeat is older than this is not running (heartbeats come every 5 s). */
export const HEARTBEAT_STALE_MS = 30_000;

/** The indexer's state as the API sees it: what it stored in PostgreSQL. */
export async function indexerHealthInputs(db: Db, startedAt: number): Promise<HealthInputs> {
  const down: HealthInputs = { dbConnected: false, rpcConnected: false, indexerRunning: false, slotLag: null, lastProcessedSlot: null, lastActivityAt: null, startedAt };
  if (!(await pingDatabase(db))) return down;
  const dbConnected = true;
  const row = await db
    .oneOrNone<{
    last_processed_slot: string;
    last_activity_at: Date | null;
    chain_tip_slot: string | null;
    rpc_connected: boolean | null;
    heartbeat_at: Date | null;
  }>(
    `SELECT c.last_processed_slot, c.last_activity_at, s.chain_tip_slot, s.rpc_connected, s.heartbeat_at
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
  return {
    dbConnected,
    rpcConnected: row?.rpc_connected ?? false,
    indexerRunning: !!row?.heartbeat_at && Date.now() - row.heartbeat_at.getTime() < HEARTBEAT_STALE_MS,
    slotLag: tip !== null && last !== null ? Math.max(0, tip - last) : null,
    lastProcessedSlot: last === null ? null : String(last),
    lastActivityAt: row?.last_activity_at ?? null,
    startedAt,
  };
}
