import { Client } from 'pg';
import type { Db } from './index';
import { LIVE_SCHEMA, PROJECTION_SCHEMA_NAME as SCHEMA_NAME } from './projection-schema';

/**
 * The schema whose projected tables are live (D-333): one row, `projection_live`, read by every
 * API replica and changed with a notification on `LIVE_PROJECTION_CHANNEL`. `public` until a
 * switch; a switch names a `p<version>` schema (D-332).
 */
export const LIVE_PROJECTION_CHANNEL = 'projection_live';

/** The live schema as the pointer row says. */
export async function readLiveSchema(db: Db): Promise<string> {
  const { schema_name: s } = await db.one<{ schema_name: string }>('SELECT schema_name FROM public.projection_live WHERE id = 1');
  return s;
}

/**
 * Points the API at `schema`, in one transaction with the notification, so a replica never hears
 * of a switch that did not commit. The schema must exist. The schema switched away from is
 * recorded as the previous one (D-412), kept for `retainMs` (then dropped by `dropExpiredSchema`)
 * or, without it, until dropped by hand. With `version`, the switch is refused unless the schema
 * records that projection version (D-456): a builder switches only to tables whose builder is known.
 */
export async function switchLiveSchema(db: Db, schema: string, opts: { retainMs?: number; version?: number } = {}): Promise<void> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`not a projection schema: ${JSON.stringify(schema)} (public or p<version>)`);
  await db.tx(async (t) => {
    const exists = await t.oneOrNone('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (!exists) throw new Error(`schema ${schema} does not exist`);
    if (opts.version !== undefined) {
      // Locked, so the version cannot change before the pointer does.
      const row = await t.oneOrNone<{ version: number | null }>(`SELECT version FROM ${schema}.projection_version WHERE id = 1 FOR SHARE`);
      const recorded = row?.version ?? null;
      if (recorded !== opts.version) throw new Error(`schema ${schema} records projection version ${recorded ?? 'none'}, not ${opts.version}: not switched to`);
    }
    await t.none(
      `UPDATE public.projection_live
          SET previous_schema = CASE WHEN schema_name = $1 THEN previous_schema ELSE schema_name END,
              retain_until = CASE WHEN schema_name = $1 THEN retain_until WHEN $2::bigint IS NULL THEN NULL ELSE now() + $2::bigint * interval '1 millisecond' END,
              schema_name = $1, switched_at = now()
        WHERE id = 1`,
      [schema, opts.retainMs ?? null],
    );
    await t.one('SELECT pg_notify($1, $2)', [LIVE_PROJECTION_CHANNEL, schema]);
  });
}

/**
 * Drops the previous projection schema once its retention has passed (D-412), in one transaction
 * with the pointer row locked, so a switch back to it cannot commit between the check and the
 * drop. `public` is never dropped (it holds the API's tables): its retention just ends. Returns
 * the schema dropped, if any.
 */
export async function dropExpiredSchema(db: Db): Promise<string | undefined> {
  return db.tx(async (t) => {
    const row = await t.one<{ previous: string | null; expired: boolean; live: string }>(
      `SELECT previous_schema AS previous, schema_name AS live, coalesce(retain_until <= now(), false) AS expired
         FROM public.projection_live WHERE id = 1 FOR UPDATE`,
    );
    if (!row.previous || !row.expired || row.previous === row.live) return undefined;
    const drop = row.previous !== LIVE_SCHEMA && SCHEMA_NAME.test(row.previous);
    // The name matched p<version> (and the column's CHECK): safe to interpolate.
    if (drop) await t.none(`DROP SCHEMA IF EXISTS ${row.previous} CASCADE`);
    await t.none('UPDATE public.projection_live SET previous_schema = NULL, retain_until = NULL WHERE id = 1');
    return drop ? row.previous : undefined;
  });
}

export interface LiveSchemaFollower {
  /** The schema this process reads now. */
  current(): string;
  /** The pointer has been read at least once (until then, reads go to public). */
  ready(): boolean;
  close(): Promise<void>;
}

/**
 * Makes every session of `db`'s pool read the live schema: at each checkout, a session whose
 * search_path is not the current live schema's gets one `SET` first (queued ahead of the caller's
 * statement on the same connection, so it costs one statement per session per switch, not per
 * query). The pointer is read once the listening session (a session of its own) is open, and
 * again at each notification; that session is reopened when it is lost (and the pointer read
 * again, a switch may have been missed meanwhile).
 */
export function followLiveSchema(opts: {
  db: Db;
  databaseUrl: string;
  /** More pools whose sessions read the live schema (a replica's, which cannot LISTEN itself). */
  alsoPools?: Db[];
  onSwitch?: (from: string, to: string) => void;
  onError?: (err: unknown) => void;
  /** Between reconnection attempts of the listening session. */
  retryMs?: number;
}): LiveSchemaFollower {
  const { db } = opts;
  let current = LIVE_SCHEMA;
  let closed = false;
  let listener: Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  // What each pooled session was last set to; a session not in it has the default (public).
  const applied = new WeakMap<object, string>();

  const adopt = (schema: string) => {
    if (!SCHEMA_NAME.test(schema) || schema === current) return;
    const from = current;
    current = schema;
    opts.onSwitch?.(from, schema);
  };
  let read = false;
  // Serialised reads (D-450): one in flight and at most one queued, however many notifications
  // arrive (NOTIFY needs no privilege, so any role that can connect can send a flood). A read
  // starts only after the previous one has resolved, so the last read to resolve is the last
  // started, the one after the latest notification: an older answer resolving late never wins.
  let inFlight: Promise<void> | undefined;
  let queued = false;
  const readOnce = () =>
    readLiveSchema(db).then(
      (schema) => {
        read = true;
        adopt(schema);
      },
      (err: unknown) => opts.onError?.(err),
    );
  const refresh = (): Promise<void> => {
    if (inFlight) {
      queued = true;
      return inFlight;
    }
    const run = async () => {
      do {
        queued = false;
        await readOnce();
      } while (queued && !closed);
      inFlight = undefined;
    };
    inFlight = run();
    return inFlight;
  };

  const listen = async (): Promise<void> => {
    const client = new Client({ connectionString: opts.databaseUrl, application_name: 'market-indexer-live-schema', keepAlive: true, connectionTimeoutMillis: 5_000 });
    const lost = (err?: unknown) => {
      if (listener !== client) return;
      listener = undefined;
      if (err) opts.onError?.(err);
      client.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void listen(), opts.retryMs ?? 1_000);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n) => {
      if (n.channel === LIVE_PROJECTION_CHANNEL) void refresh();
    });
    listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${LIVE_PROJECTION_CHANNEL}`);
    } catch (err) {
      lost(err);
      return;
    }
    // After LISTEN: a switch committed meanwhile is in the row read now.
    await refresh();
  };

  const onAcquire = (client: { query(text: string): Promise<unknown> }) => {
    const schema = current;
    if ((applied.get(client) ?? LIVE_SCHEMA) === schema) return;
    applied.set(client, schema);
    client.query(`SET search_path TO ${schema}, ${LIVE_SCHEMA}`).catch((err: unknown) => {
      applied.delete(client);
      opts.onError?.(err);
    });
  };
  const pools = [db, ...(opts.alsoPools ?? [])];
  for (const p of pools) p.$pool.on('acquire', onAcquire);
  // Not awaited: a process starts serving whether or not PostgreSQL answers yet (its probes say
  // whether it can read), and reads go to public until the pointer has been read.
  void listen();
  return {
    current: () => current,
    ready: () => read,
    async close() {
      closed = true;
      clearTimeout(retry);
      for (const p of pools) p.$pool.removeListener('acquire', onAcquire);
      const c = listener;
      listener = undefined;
      await c?.end().catch(() => {});
    },
  };
}
