import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, type QueryConfig, type QueryResult } from 'pg';
import { indexerPoolApplicationName, writerLockApplicationName, writerLockKey } from '../core/indexer-admin';

/** client-go's leader-election timings (D-300): retry period < renew deadline < duration. */
export interface LeaseTiming {
  durationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** This process as the lease and the session names show it: host:pid (the pod name in a cluster). */
export const writerInstance = () => `${hostname()}:${process.pid}`;

export interface WriterLease {
  /** The fencing token (= indexer_cursor.writer_epoch): every batch commits only while it is the lease's and the lease is current. */
  epoch: number;
  cursor: { lastSlot: number; lastSignature: string | null };
  /** Resolves when this process must stop writing: the lease was taken, not renewed in time, or its session ended. */
  lost: Promise<Error>;
  /** False once the lease is lost or has gone unrenewed for the renew deadline (this process's own clock, conservatively). */
  valid(): boolean;
  /** Calls `onNotify` on each PostgreSQL NOTIFY on `channel`, received on the lease's own connection. */
  listen(channel: string, onNotify: () => void): Promise<void>;
  /** Gives the lease up (it expires now) and closes the session. */
  release(): Promise<void>;
}

/** This session's role, as `pg_stat_activity.usesysid` shows it: the holder's sessions are the tenant role's own (D-451). */
const OWN_ROLE = '(SELECT oid FROM pg_roles WHERE rolname = current_user)';

type LeaseRow = { holder: string | null; token: string; expired: boolean; holder_present: boolean };

/**
 * One writer per tenant through a lease row (D-300), with the session-level advisory lock kept
 * as a second guard: the previous release's indexers wait on that lock, so they never write
 * beside this one. Every indexer keeps one session named for it (the standby list, D-165). A
 * standby polls every retry period, waiting in the lock between polls; it takes the lease when the lease was never held, has gone
 * unrenewed for its duration by PostgreSQL's clock, or its holder's session is gone (a killed
 * writer is replaced at once). A hung holder still holds the advisory lock and may hold row
 * locks in an open batch transaction: the standby terminates the holder's sessions first, then
 * takes the lock and, in one transaction, the lease and a new fencing epoch.
 */
export async function acquireWriterLease(opts: {
  databaseUrl: string;
  tenant: string;
  instance: string;
  timing: LeaseTiming;
  signal: AbortSignal;
  onWaiting?: () => void;
  onTakeOver?: (from: { holder: string; terminated: number }) => void;
  onRenewFailed?: (err: unknown) => void;
}): Promise<WriterLease | undefined> {
  const { timing, instance } = opts;
  const client = new Client({ connectionString: opts.databaseUrl, application_name: writerLockApplicationName(instance), keepAlive: true });
  let lostResolve!: (e: Error) => void;
  let isLost = false;
  const lost = new Promise<Error>((r) => (lostResolve = r));
  const loseWith = (e: Error) => {
    isLost = true;
    lostResolve(e);
  };
  client.on('error', (err) => loseWith(err));
  client.on('end', () => loseWith(new Error('writer lease session closed')));
  await client.connect();
  // A standby that goes away leaves no session behind for long: PostgreSQL checks every second (14+ on Linux).
  await client.query("SET client_connection_check_interval = '1s'").catch(() => {});
  const key = writerLockKey(opts.tenant);
  // Bounded by the renew deadline (node-postgres reads a per-query timeout its types omit): a
  // stalled statement fails instead of holding a poll or a renewal past the point it matters.
  const q = <R extends object = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<QueryResult<R>> =>
    client.query<R>({ text, values, query_timeout: timing.renewDeadlineMs } as QueryConfig);
  let haveLock = false;
  let waitingSaid = false;

  /**
   * Terminates the sessions of a holder that is no longer allowed to write (its lease expired or
   * its lock session is gone): only sessions of this role (D-451). Any role that can connect may
   * name a session like the holder's, and `application_name` is all `pg_stat_activity` shows
   * every role; a foreign role's session is not the holder's, and PostgreSQL would refuse to end
   * it anyway. Each session is ended on its own, a refusal only counted out.
   */
  const terminateHolder = async (holder: string) => {
    const { rows } = await q<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND usesysid = ${OWN_ROLE} AND application_name = ANY($1)`,
      [[writerLockApplicationName(holder), indexerPoolApplicationName(holder)]],
    );
    let n = 0;
    for (const { pid } of rows) {
      const ended = await q<{ ok: boolean }>('SELECT pg_terminate_backend($1, 5000) AS ok', [pid]).then(
        (r) => r.rows[0]?.ok === true,
        () => false,
      );
      if (ended) n++;
    }
    return n;
  };

  const tryTake = async (): Promise<WriterLease['cursor'] & { epoch: number } | undefined> => {
    const read = async () =>
      (
        await q<LeaseRow>(
          `SELECT holder, token, COALESCE(expires_at <= clock_timestamp(), true) AS expired,
                  EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                           AND usesysid = ${OWN_ROLE} AND application_name = left($1 || ' ' || holder, 63)) AS holder_present
             FROM writer_lease WHERE id = 1`,
          [writerLockApplicationName()],
        )
      ).rows[0]!;
    let lease = await read();
    const takeable = (l: LeaseRow) => l.holder === null || l.expired || !l.holder_present;
    if (!haveLock) haveLock = (await q<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key])).rows[0]!.ok;
    if (!haveLock) {
      // Held by the lease's holder, hung: end its sessions so that the lock is free. Held by
      // anyone else (a previous release's writer, which knows no lease): wait for it to go.
      if (lease.holder === null || !lease.expired) return undefined;
      const terminated = await terminateHolder(lease.holder);
      opts.onTakeOver?.({ holder: lease.holder, terminated });
      haveLock = (await q<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key])).rows[0]!.ok;
      if (!haveLock) return undefined;
      lease = await read();
    }
    if (!takeable(lease)) return undefined;
    // Sessions the old holder may still have (a batch transaction holding the cursor row) end
    // before the epoch moves; a lock wait is bounded so a poll never hangs.
    if (lease.holder !== null && lease.holder !== instance) await terminateHolder(lease.holder);
    try {
      await q('BEGIN');
      await q(`SET LOCAL lock_timeout = ${Math.max(100, timing.retryPeriodMs)}`);
      const cas = await q('SELECT 1 FROM writer_lease WHERE id = 1 AND token = $1 FOR UPDATE', [lease.token]);
      if (!cas.rowCount) {
        await q('ROLLBACK');
        return undefined;
      }
      const c = (
        await q<{ writer_epoch: string; last_processed_slot: string; last_signature: string | null }>(
          'UPDATE indexer_cursor SET writer_epoch = writer_epoch + 1 WHERE id = 1 RETURNING writer_epoch, last_processed_slot, last_signature',
        )
      ).rows[0]!;
      await q(
        `UPDATE writer_lease SET holder = $1, token = $2, acquired_at = clock_timestamp(), renewed_at = clock_timestamp(),
                expires_at = clock_timestamp() + $3 * interval '1 millisecond' WHERE id = 1`,
        [instance, c.writer_epoch, timing.durationMs],
      );
      await q('COMMIT');
      return { epoch: Number(c.writer_epoch), lastSlot: Number(c.last_processed_slot), lastSignature: c.last_signature };
    } catch (err) {
      await q('ROLLBACK').catch(() => {});
      if ((err as { code?: string }).code === '55P03') return undefined; // lock_timeout: tried again next period
      throw err;
    }
  };

  /**
   * Between polls a standby waits in `pg_advisory_lock` for up to a retry period: the lock is
   * granted the moment a dead writer's session ends, so a killed writer is replaced at once,
   * not at the next poll. Whoever gets the lock takes the lease (the lease changes hands only
   * with the lock held), so two standbys never both write.
   */
  const waitForLock = async (): Promise<boolean> => {
    try {
      await q('BEGIN');
      await q(`SET LOCAL lock_timeout = ${timing.retryPeriodMs}`);
      await q('SELECT pg_advisory_lock(hashtext($1))', [key]);
      await q('COMMIT');
      return true;
    } catch (err) {
      await q('ROLLBACK').catch(() => {});
      if ((err as { code?: string }).code === '55P03') return false;
      throw err;
    }
  };

  let taken: Awaited<ReturnType<typeof tryTake>>;
  const abort = () => void client.end().catch(() => {});
  opts.signal.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      if (opts.signal.aborted) break;
      taken = await tryTake();
      if (taken) break;
      if (!waitingSaid) opts.onWaiting?.();
      waitingSaid = true;
      if (haveLock) await delay(timing.retryPeriodMs, undefined, { signal: opts.signal }).catch(() => {});
      else haveLock = await waitForLock();
    }
  } catch (err) {
    await client.end().catch(() => {});
    if (opts.signal.aborted) return undefined;
    throw err;
  } finally {
    opts.signal.removeEventListener('abort', abort);
  }
  if (!taken) {
    await client.end().catch(() => {});
    return undefined;
  }
  const epoch = taken.epoch;

  // Renewal: every retry period; the deadline runs from when the last successful renewal was
  // sent (before PostgreSQL stamped it), so this process gives up before the lease can expire.
  let renewedSentAt = performance.now();
  let renewing = false;
  const valid = () => !isLost && performance.now() - renewedSentAt <= timing.renewDeadlineMs;
  const renew = async () => {
    if (isLost) return;
    if (!valid()) return loseWith(new Error(`writer lease not renewed for ${timing.renewDeadlineMs} ms`));
    if (renewing) return;
    renewing = true;
    const sentAt = performance.now();
    try {
      // One simple-protocol message (values inlined: a number, a number, an escaped literal): on
      // embedded PostgreSQL every connection shares one session, where a periodic extended-protocol
      // statement can find its unnamed statement replaced by another connection's.
      const r = await q(
        `UPDATE writer_lease SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + ${Number(timing.durationMs)} * interval '1 millisecond'
          WHERE id = 1 AND holder = ${client.escapeLiteral(instance)} AND token = ${Number(epoch)} AND expires_at > clock_timestamp()`,
      );
      if (r.rowCount) renewedSentAt = sentAt;
      else loseWith(new Error('writer lease expired or taken by another writer'));
    } catch (err) {
      opts.onRenewFailed?.(err);
    } finally {
      renewing = false;
    }
    if (!valid()) loseWith(new Error(`writer lease not renewed for ${timing.renewDeadlineMs} ms`));
  };
  const timer = setInterval(() => void renew(), timing.retryPeriodMs);
  timer.unref();
  void lost.then(() => clearInterval(timer));

  return {
    epoch,
    cursor: { lastSlot: taken.lastSlot, lastSignature: taken.lastSignature },
    lost,
    valid,
    listen: async (channel, onNotify) => {
      client.on('notification', (n) => {
        if (n.channel === channel) onNotify();
      });
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    },
    release: async () => {
      clearInterval(timer);
      // Expired now: a standby takes over at its next poll rather than after the duration.
      await q('UPDATE writer_lease SET expires_at = clock_timestamp() WHERE id = 1 AND holder = $1 AND token = $2', [instance, epoch]).catch(() => {});
      await q('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => {});
      await client.end().catch(() => {});
    },
  };
}
