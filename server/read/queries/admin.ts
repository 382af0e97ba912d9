import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

export const indexerState = (db: Db) =>
  db.oneOrNone<DbRow>(
    `SELECT c.last_processed_slot, c.last_signature, c.last_activity_at, s.writer_id, s.chain_tip_slot, s.rpc_connected, s.started_at, s.heartbeat_at
       FROM indexer_cursor c LEFT JOIN indexer_status s ON s.id = 1 WHERE c.id = 1`,
  );

export const deadLetterCounts = (db: Db) => db.any<{ reason: string; n: number }>('SELECT reason, count(*)::int AS n FROM dead_letters GROUP BY reason ORDER BY reason');

export async function deadLettersPage(db: Db, q: { reason?: string; limit: number; offset: number }): Promise<{ rows: DbRow[]; total: number }> {
  const where = q.reason === undefined ? '' : 'WHERE reason = $3';
  const [rows, count] = await Promise.all([
    db.any<DbRow>(`SELECT id, signature, event_index, slot, kind, reason, detail, source, created_at FROM dead_letters ${where} ORDER BY id DESC LIMIT $1 OFFSET $2`, [q.limit, q.offset, q.reason]),
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM dead_letters ${where.replace('$3', '$1')}`, [q.reason]),
  ]);
  return { rows, total: count.n };
}

export async function auditPage(db: Db, q: { limit: number; offset: number }): Promise<{ rows: DbRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.any<DbRow>('SELECT id, at, wallet, action, status, outcome FROM admin_audit ORDER BY id DESC LIMIT $1 OFFSET $2', [q.limit, q.offset]),
    db.one<{ n: number }>('SELECT count(*)::int AS n FROM admin_audit'),
  ]);
  return { rows, total: count.n };
}

export const writeAudit = (db: Db, e: { wallet: string | null; action: string; status: number; outcome: string }) =>
  db.none('INSERT INTO admin_audit (wallet, action, status, outcome) VALUES ($1, $2, $3, $4)', [e.wallet, e.action, e.status, e.outcome]);

/** Revokes an attestation; null when there is none with that id, 'already' when it was revoked before. */
export async function revokeAttestation(db: Db, id: string, by: string): Promise<DbRow | null | 'already'> {
  const row = await db.oneOrNone<DbRow>(
    'UPDATE attestations SET revoked_at = now(), revoked_by = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id, wallet, country, revoked_at, revoked_by',
    [id, by],
  );
  if (row) return row;
  return (await db.oneOrNone('SELECT 1 FROM attestations WHERE id = $1', [id])) ? 'already' : null;
}
