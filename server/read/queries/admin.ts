import type { Db } from '../../../core/db';
import { PROJECTION_SCHEMA_NAME } from '../../../core/db/projection-schema';
import type { DbRow } from './rows';

export const indexerState = (db: Db) =>
  db.oneOrNone<DbRow>(
    `SELECT c.last_processed_slot, c.last_signature, c.last_activity_at, s.writer_id, s.chain_tip_slot, s.rpc_connected, s.started_at, s.heartbeat_at,
            s.recent_batches, l.holder AS lease_holder, l.token AS lease_token, l.expires_at AS lease_expires_at,
            (l.expires_at > clock_timestamp()) AS lease_current, s.projection_version AS writer_projection_version,
            p.version AS tables_projection_version, p.recorded_at AS projection_recorded_at
       FROM indexer_cursor c LEFT JOIN indexer_status s ON s.id = 1 LEFT JOIN writer_lease l ON l.id = 1
       LEFT JOIN projection_version p ON p.id = 1 WHERE c.id = 1`,
  );

/**
 * The indexers' writer-lease sessions (D-165, D-300): every indexer keeps one, named
 * `market-indexer-writer-lock <instance>`; `granted` marks the one holding the tenant's advisory
 * lock (the writer). A previous release's standby waits in `pg_advisory_lock` and is listed by
 * the lock table. `pg_advisory_lock(int4)` takes the int4 sign-extended to a bigint key, split
 * into classid (high half) and objid (low half).
 */
export const writerLockSessions = (db: Db, key: string, applicationPrefix: string) =>
  db.any<{ pid: number; application_name: string | null; backend_start: Date | null; client_addr: string | null; granted: boolean }>(
    `WITH lock AS (
       SELECT l.pid, l.granted FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.objid::text::bigint = (hashtext($1)::bigint & 4294967295)
          AND l.classid::text::bigint = (CASE WHEN hashtext($1) < 0 THEN 4294967295 ELSE 0 END)
     )
     SELECT a.pid, a.application_name, a.backend_start, host(a.client_addr) AS client_addr,
            COALESCE((SELECT bool_or(granted) FROM lock WHERE lock.pid = a.pid), false) AS granted
       FROM pg_stat_activity a
      WHERE a.datname = current_database()
        AND (a.application_name LIKE $2 || ' %' OR a.pid IN (SELECT pid FROM lock))
        AND (a.application_name IS NULL OR a.application_name LIKE $2 || '%')
      ORDER BY granted DESC, a.backend_start`,
    [key, applicationPrefix],
  );

export const deadLetterCounts = (db: Db) => db.any<{ reason: string; n: number }>('SELECT reason, count(*)::int AS n FROM dead_letters GROUP BY reason ORDER BY reason');

export async function deadLettersPage(db: Db, q: { reason?: string; resolved?: boolean; limit: number; offset: number }): Promise<{ rows: DbRow[]; total: number }> {
  // Named parameters: the same filter serves the page and its count.
  const conditions = [
    ...(q.reason === undefined ? [] : ['reason = ${reason}']),
    ...(q.resolved === undefined ? [] : [q.resolved ? 'resolved_at IS NOT NULL' : 'resolved_at IS NULL']),
  ];
  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const values = { reason: q.reason, limit: q.limit, offset: q.offset };
  const [rows, count] = await Promise.all([
    db.any<DbRow>(`SELECT id, signature, event_index, slot, kind, reason, detail, source, created_at, resolved_at FROM dead_letters ${where} ORDER BY id DESC LIMIT \${limit} OFFSET \${offset}`, values),
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM dead_letters ${where}`, values),
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

export interface RetryRow {
  id: string;
  dead_letter_id: string;
  requested_by: string;
  requested_at: Date;
  outcome: string | null;
  reason: string | null;
  detail: string | null;
  done_at: Date | null;
}
const RETRY_COLUMNS = 'id, dead_letter_id, requested_by, requested_at, outcome, reason, detail, done_at';

/**
 * Records a retry request for the indexer's writer and notifies it (D-164); null when there is
 * no such dead letter. A dead letter resolved before is answered here, settled at once: its
 * resolution is final, and the writer would only say so again. The request goes to the queue of
 * the schema this session read the dead letter from (the live one, D-333), named, never found
 * through the search path: a built schema's request in `public`'s queue is one a release that
 * knows no schemas would settle (D-455). `schema` is what `retryById` is given back.
 */
export async function requestRetry(db: Db, deadLetterId: string, by: string, channel: string): Promise<(RetryRow & { schema: string }) | null> {
  return db.tx('dead-letter-retry-request', async (t) => {
    const dl = await t.oneOrNone<{ resolved_at: Date | null; schema: string }>('SELECT resolved_at, current_schema() AS schema FROM dead_letters WHERE id = $1', [deadLetterId]);
    if (!dl) return null;
    const queue = `${retrySchema(dl.schema)}.dead_letter_retries`;
    if (dl.resolved_at) {
      const settled = await t.one<RetryRow>(
        `INSERT INTO ${queue} (dead_letter_id, requested_by, outcome, done_at, schema_name) VALUES ($1, $2, 'already_applied', now(), $3) RETURNING ${RETRY_COLUMNS}`,
        [deadLetterId, by, dl.schema],
      );
      return { ...settled, schema: dl.schema };
    }
    // Settled by that schema's writer only (D-442).
    const row = await t.one<RetryRow>(`INSERT INTO ${queue} (dead_letter_id, requested_by, schema_name) VALUES ($1, $2, $3) RETURNING ${RETRY_COLUMNS}`, [deadLetterId, by, dl.schema]);
    // Delivered when this transaction commits, so the writer finds the request.
    await t.any('SELECT pg_notify($1, $2)', [channel, row.id]);
    return { ...row, schema: dl.schema };
  });
}

/** A schema name as the pointer's CHECK allows it, so it can be interpolated. */
function retrySchema(schema: string): string {
  if (!PROJECTION_SCHEMA_NAME.test(schema)) throw new Error(`dead letters read from schema ${JSON.stringify(schema)}, not a projection schema`);
  return schema;
}

/** A request as `requestRetry` recorded it, from the queue of the schema it named. */
export const retryById = (db: Db, id: string, schema: string) => db.one<RetryRow>(`SELECT ${RETRY_COLUMNS} FROM ${retrySchema(schema)}.dead_letter_retries WHERE id = $1`, [id]);
