import type { EventEmitter } from 'node:events';
import pgPromise, { type IDatabase, type IMain } from 'pg-promise';

export type Db = IDatabase<unknown>;

export interface Database {
  db: Db;
  pgp: IMain;
  /** Column-set and multi-row helpers live on pgp.helpers; exposed for the projector. */
  helpers: IMain['helpers'];
  close(): Promise<void>;
}

// One pg-promise root per process: pg-promise warns about (and leaks listeners for)
// repeated initialisation, and type parsers are process-global anyway.
let root: IMain | undefined;
function pgpRoot(): IMain {
  if (!root) {
    root = pgPromise({ capSQL: true });
    // INT8 stays a string (u64 slots and ids can exceed 2^53); NUMERIC stays a string by
    // default. Both leave the API as decimal strings unless a query casts them.
  }
  return root;
}

export function createDatabase(opts: {
  url: string;
  poolMax?: number;
  applicationName?: string;
  /** PostgreSQL cancels any statement of these connections that runs longer (57014). */
  statementTimeoutMs?: number;
}): Database {
  const pgp = pgpRoot();
  const db = pgp({
    connectionString: opts.url,
    max: opts.poolMax ?? 10,
    application_name: opts.applicationName ?? 'market-indexer',
    // Fail fast instead of queueing forever when PostgreSQL is down; callers map this to
    // DATABASE_ERROR / SERVICE_UNAVAILABLE.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    statement_timeout: opts.statementTimeoutMs ?? false,
  });
  return {
    db,
    pgp,
    helpers: pgp.helpers,
    close: () => closePool(db.$pool),
  };
}

/**
 * pg-pool's end() resolves once its clients are detached, before their sockets close; a
 * connection still closing can then receive a server-side termination as an unhandled error.
 * So wait for each client's own 'end' (emitted once its socket closed) too: pg-pool's 'remove'
 * is not enough, as a client whose connection attempt fails never emits it (a pool closed while
 * its database was unreachable would wait forever).
 */
function closePool(pool: Db['$pool']): Promise<void> {
  if (pool.ending) return Promise.resolve();
  // pg-pool keeps no public list of its clients, connecting ones included.
  const clients = (pool as unknown as { _clients: (EventEmitter & { _ended?: boolean })[] })._clients;
  const ended = clients.filter((c) => !c._ended).map((c) => new Promise<void>((resolve) => c.once('end', () => resolve())));
  return Promise.all([pool.end(), ...ended]).then(() => undefined);
}

/** Cheap liveness check for /health and /ready. */
export async function pingDatabase(db: Db, timeoutMs = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database ping timed out')), timeoutMs);
    });
    await Promise.race([db.one('SELECT 1 AS ok'), timeout]);
    return true;
  } catch {
    return false;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
