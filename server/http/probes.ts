import { buildHealth, type HealthInputs } from '../../core/health';

/**
 * An API replica's view of its dependencies for `/health` and `/ready` (decision D-101): one
 * check at a time, and none while the last is younger than `cacheMs`, so a probe flood costs
 * the database at most one check per interval, whoever sends it.
 */
export interface Probes {
  /**
   * `/health`: from process state. The last check's result, never waited for once one exists;
   * a stale one starts a refresh in the background.
   */
  health(): Promise<{ status: number; body: ReturnType<typeof buildHealth> }>;
  /** `/ready`: the dependencies as checked at most `cacheMs` ago (waits for a due check). */
  ready(): Promise<{ status: number; body: { ready: boolean; dbConnected: boolean; indexerRunning: boolean } }>;
}

/**
 * In an API replica neither the database nor the indexer is critical to liveness: a restart
 * mends neither, and restarting every replica drops every `/ws` client (D-67, D-101). Their
 * failure is `degraded`; `/ready` takes the replica out of service instead.
 */
export const API_HEALTH = { indexerCritical: false, databaseCritical: false };

export function createProbes(opts: {
  check: () => Promise<HealthInputs>;
  cacheMs: number;
  now?: () => number;
  /** Whether this replica has read which schema is live (D-333); until then it is not ready. */
  liveSchemaRead?: () => boolean;
}): Probes {
  const now = opts.now ?? Date.now;
  let last: { at: number; inputs: HealthInputs } | undefined;
  let inFlight: Promise<HealthInputs> | undefined;

  const refresh = (): Promise<HealthInputs> => {
    inFlight ??= opts
      .check()
      .then((inputs) => {
        last = { at: now(), inputs };
        return inputs;
      })
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
  const fresh = () => last !== undefined && now() - last.at < opts.cacheMs;

  return {
    async health() {
      if (!last) await refresh();
      else if (!fresh()) refresh().catch(() => undefined);
      const body = buildHealth(last!.inputs, API_HEALTH);
      return { status: body.status === 'unhealthy' ? 503 : 200, body };
    },
    async ready() {
      const i = fresh() ? last!.inputs : await refresh();
      // A replica serves (possibly stale) data while the indexer restarts: readiness is the
      // database, and knowing which schema of it is live (before, it might read a replaced one).
      const ready = i.dbConnected && (opts.liveSchemaRead?.() ?? true);
      return { status: ready ? 200 : 503, body: { ready, dbConnected: i.dbConnected, indexerRunning: i.indexerRunning } };
    },
  };
}
