import type { Db } from './index';

/** The pools a read can be served from (the `pool` label of the read metrics). */
export const READ_POOLS = { primary: 'primary', replica: 'replica' } as const;
export type ReadPool = (typeof READ_POOLS)[keyof typeof READ_POOLS];

/** The indexed slot of the data a session reads: the cursor commits with its batch (D-511). */
const CURSOR_SQL = 'SELECT last_processed_slot AS slot FROM indexer_cursor WHERE id = 1';

/** The query methods of a pg-promise database the router serves (each runs in one session). */
const ROUTED = ['none', 'one', 'oneOrNone', 'many', 'manyOrNone', 'any', 'result', 'query', 'multi', 'multiResult', 'map', 'each', 'func', 'proc', 'task', 'taskIf'] as const;

export interface ReadRouterState {
  /** The newest slot this process has seen committed on the primary. */
  highWater: number;
  /** The replica's indexed slot at its last read or probe; undefined while unknown. */
  replicaSlot: number | undefined;
  /** Whether the last read or probe of the replica found it reachable and within the bound. */
  replicaServing: boolean;
}

export interface ReadRouter {
  /** A `Db` whose queries run on the replica while it is fresh enough, on the primary otherwise. */
  db: Db;
  state(): ReadRouterState;
  /** One look at both pools now (the probe the metrics and `/ready` rely on). */
  probe(): Promise<void>;
  close(): void;
}

class ReplicaBehind extends Error {}

/** Rounds of a read over both pools before it fails (250 ms apart). */
const RETRIES = 4;

/**
 * Connection-level failures: the pool could not reach the server, or the server went away or is
 * shutting down (57P01..57P03, 08xxx). A failed statement (a timeout, a bad query) is not one:
 * it would fail on the primary too.
 */
export function isUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^(08|57P0[123])/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'].includes(code)) return true;
  const m = typeof e?.message === 'string' ? e.message : '';
  return /timeout exceeded when trying to connect|Connection terminated|connection .* closed|the database system is (starting up|shutting down|in recovery)/i.test(m);
}

/**
 * Reads from a hot standby, never from the past (D-510, D-511). Every read on the replica runs
 * in one session that first reads the replica's indexed slot (the replicated `indexer_cursor`)
 * and serves only if it is within `maxLagSlots` of the newest slot this process has seen
 * committed on the primary (`highWater`); otherwise, or when the replica cannot be reached, the
 * read runs on the primary, in a session that reads the primary's cursor first and so raises
 * `highWater` to at least what that read returns. With the primary unreachable, the replica
 * still serves within the bound (a standby replays WAL in order: its slot never goes back).
 */
export function createReadRouter(opts: {
  primary: Db;
  replica: Db;
  maxLagSlots: number;
  /** Told of each read served, by pool. */
  onRead?: (pool: ReadPool) => void;
  /** Told after each probe: the replica's lag in slots (NaN while unknown) and whether it serves. */
  onProbe?: (lagSlots: number, serving: boolean) => void;
  /** Told when the replica starts or stops serving reads. */
  onChange?: (serving: boolean, why: string) => void;
  probeMs?: number;
}): ReadRouter {
  const { primary, replica, maxLagSlots } = opts;
  const s: ReadRouterState = { highWater: 0, replicaSlot: undefined, replicaServing: false };
  const serving = (now: boolean, why: string) => {
    if (now !== s.replicaServing) opts.onChange?.(now, why);
    s.replicaServing = now;
  };
  const slotOf = async (t: { oneOrNone: Db['oneOrNone'] }): Promise<number> => Number((await t.oneOrNone<{ slot: string }>(CURSOR_SQL))?.slot ?? 0);
  const raise = (slot: number) => {
    if (slot > s.highWater) s.highWater = slot;
  };

  const onReplica = <T>(run: (t: Db) => Promise<T>): Promise<T> =>
    replica.task('read-replica', async (t) => {
      const slot = await slotOf(t);
      s.replicaSlot = slot;
      if (slot < s.highWater - maxLagSlots) {
        serving(false, `behind by ${s.highWater - slot} slots`);
        throw new ReplicaBehind();
      }
      serving(true, 'within the bound');
      return run(t as unknown as Db);
    });
  const onPrimary = <T>(run: (t: Db) => Promise<T>): Promise<T> =>
    primary.task('read-primary', async (t) => {
      raise(await slotOf(t));
      return run(t as unknown as Db);
    });

  /**
   * A read that found no pool is tried again a few times over about a second: while a primary
   * fails over, the fronts cut sessions and move (HAProxy's checks, CNPG's endpoints), a
   * standby replays the WAL it already received, and a read would otherwise fail in that gap.
   */
  async function routed<T>(run: (t: Db) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await routedOnce(run);
      } catch (err) {
        if (attempt >= RETRIES || !isUnreachable(err)) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  async function routedOnce<T>(run: (t: Db) => Promise<T>): Promise<T> {
    // The replica is tried while its last look found it serving, or while the primary is the
    // one that fails (then it is the only place a read can go).
    if (s.replicaServing) {
      try {
        const r = await onReplica(run);
        opts.onRead?.(READ_POOLS.replica);
        return r;
      } catch (err) {
        if (!(err instanceof ReplicaBehind)) {
          if (!isUnreachable(err)) throw err;
          serving(false, 'unreachable');
        }
      }
    }
    try {
      const r = await onPrimary(run);
      opts.onRead?.(READ_POOLS.primary);
      return r;
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      // The primary is gone: the replica serves if it is within the bound of what was seen.
      const r = await onReplica(run).catch((e: unknown) => {
        throw e instanceof ReplicaBehind ? err : e;
      });
      opts.onRead?.(READ_POOLS.replica);
      return r;
    }
  }

  const db = new Proxy(primary, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && (ROUTED as readonly string[]).includes(prop)) {
        return (...args: unknown[]) => routed((t) => (t as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[prop]!(...args));
      }
      return Reflect.get(target, prop, receiver);
    },
  }) as Db;

  async function probe(): Promise<void> {
    const [p, r] = await Promise.allSettled([slotOf(primary), slotOf(replica)]);
    if (p.status === 'fulfilled') raise(p.value);
    if (r.status === 'fulfilled') {
      s.replicaSlot = r.value;
      serving(r.value >= s.highWater - maxLagSlots, r.value >= s.highWater - maxLagSlots ? 'within the bound' : `behind by ${s.highWater - r.value} slots`);
    } else {
      serving(false, 'unreachable');
    }
    const lag = r.status === 'fulfilled' ? Math.max(0, s.highWater - r.value) : Number.NaN;
    opts.onProbe?.(lag, s.replicaServing);
  }

  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= probe().finally(() => (running = undefined));
  }, opts.probeMs ?? 1_000);
  timer.unref();
  return { db, state: () => ({ ...s }), probe, close: () => clearInterval(timer) };
}
