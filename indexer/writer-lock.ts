import { Client } from 'pg';
import { writerLockApplicationName, writerLockKey } from '../core/indexer-admin';

export interface WriterLock {
  /** Fencing token of this writer: every batch commits only while it is still current. */
  epoch: number;
  cursor: { lastSlot: number; lastSignature: string | null };
  /** Resolves when the lock connection is lost (another process may take over). */
  lost: Promise<Error>;
  /**
   * Calls `onNotify` on each PostgreSQL NOTIFY on `channel`, received on the lock's own
   * connection (idle while it holds the lock, so listening costs no pool connection).
   */
  listen(channel: string, onNotify: () => void): Promise<void>;
  release(): Promise<void>;
}

/**
 * One writer per tenant: a session-level PostgreSQL advisory lock held on a dedicated
 * connection. A second indexer blocks in `pg_advisory_lock` as a hot standby and gets the
 * lock the moment the writer's session ends (crash, kill, network loss). Taking the lock
 * bumps the fencing epoch, so a writer that lost its session can no longer commit.
 */
export async function acquireWriterLock(opts: {
  databaseUrl: string;
  tenant: string;
  /** This process, shown to operators as the lock session's application name (the standby list, D-165). */
  instance?: string;
  signal: AbortSignal;
  onWaiting?: () => void;
}): Promise<WriterLock | undefined> {
  const client = new Client({ connectionString: opts.databaseUrl, application_name: writerLockApplicationName(opts.instance), keepAlive: true });
  let lostResolve!: (e: Error) => void;
  const lost = new Promise<Error>((r) => (lostResolve = r));
  client.on('error', (err) => lostResolve(err));
  client.on('end', () => lostResolve(new Error('writer lock connection closed')));
  await client.connect();
  // A standby that goes away (stopped, killed, its pod gone) leaves a backend blocked in
  // pg_advisory_lock that would otherwise wait for the lock before noticing, and show as a
  // standby meanwhile (D-165): checked every second where PostgreSQL can (14+ on Linux).
  await client.query("SET client_connection_check_interval = '1s'").catch(() => {});
  const key = writerLockKey(opts.tenant);
  const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key]);
  if (!rows[0]?.ok) {
    opts.onWaiting?.();
    const abort = () => void client.end().catch(() => {});
    opts.signal.addEventListener('abort', abort, { once: true });
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
    } catch (err) {
      if (opts.signal.aborted) return undefined;
      throw err;
    } finally {
      opts.signal.removeEventListener('abort', abort);
    }
  }
  const res = await client.query<{ writer_epoch: string; last_processed_slot: string; last_signature: string | null }>(
    'UPDATE indexer_cursor SET writer_epoch = writer_epoch + 1 WHERE id = 1 RETURNING writer_epoch, last_processed_slot, last_signature',
  );
  const row = res.rows[0]!;
  return {
    epoch: Number(row.writer_epoch),
    cursor: { lastSlot: Number(row.last_processed_slot), lastSignature: row.last_signature },
    lost,
    listen: async (channel, onNotify) => {
      client.on('notification', (n) => {
        if (n.channel === channel) onNotify();
      });
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    },
    release: async () => {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => {});
      await client.end().catch(() => {});
    },
  };
}
