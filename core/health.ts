/** Health and readiness bodies of spec 2.15, shared by the API and the indexer processes. */
export const SYNCED_MAX_SLOT_LAG = 100;

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface HealthInputs {
  dbConnected: boolean;
  rpcConnected: boolean;
  indexerRunning: boolean;
  slotLag: number | null;
  lastProcessedSlot: string | null;
  lastActivityAt: Date | null;
  startedAt: number;
  now?: Date;
}

export interface HealthCheck {
  name: 'database' | 'rpc' | 'indexer' | 'slot_lag';
  status: 'pass' | 'fail' | 'warn';
  message: string;
}

/**
 * The database is critical (its failure is `unhealthy`, HTTP 503); RPC and slot lag are not
 * (their failure is `degraded`: the data is served, only staler). The indexer is critical to the
 * indexer process itself, not to an API replica, which keeps serving while the indexer restarts
 * (D-36): so an indexer outage never makes the API's liveness probe restart its pods (D-67).
 * In an API replica the database is not critical either (D-101): its `/health` is liveness,
 * and `/ready` takes a replica without its database out of service.
 */
export function buildHealth(i: HealthInputs, opts: { indexerCritical?: boolean; databaseCritical?: boolean } = {}) {
  const indexerCritical = opts.indexerCritical ?? true;
  const databaseCritical = opts.databaseCritical ?? true;
  const now = i.now ?? new Date();
  const lagOk = i.slotLag !== null && i.slotLag <= SYNCED_MAX_SLOT_LAG;
  const checks: HealthCheck[] = [
    { name: 'database', status: i.dbConnected ? 'pass' : databaseCritical ? 'fail' : 'warn', message: i.dbConnected ? 'connected' : 'database unreachable' },
    { name: 'rpc', status: i.rpcConnected ? 'pass' : 'warn', message: i.rpcConnected ? 'connected' : 'chain RPC unreachable' },
    {
      name: 'indexer',
      status: i.indexerRunning ? 'pass' : indexerCritical ? 'fail' : 'warn',
      message: i.indexerRunning ? 'running' : 'indexer not running',
    },
    {
      name: 'slot_lag',
      status: lagOk ? 'pass' : 'warn',
      message: i.slotLag === null ? 'slot lag unknown' : `${i.slotLag} slots behind (limit ${SYNCED_MAX_SLOT_LAG})`,
    },
  ];
  const status: HealthStatus = checks.some((c) => c.status === 'fail')
    ? 'unhealthy'
    : checks.some((c) => c.status !== 'pass')
      ? 'degraded'
      : 'healthy';
  return {
    status,
    slotLag: i.slotLag ?? 0,
    lastProcessedSlot: i.lastProcessedSlot ?? '0',
    lastActivityAt: (i.lastActivityAt ?? new Date(i.startedAt)).toISOString(),
    dbConnected: i.dbConnected,
    rpcConnected: i.rpcConnected,
    indexerRunning: i.indexerRunning,
    uptime: Math.floor((now.getTime() - i.startedAt) / 1000),
    timestamp: now.toISOString(),
    checks,
  };
}

export const isSynced = (i: Pick<HealthInputs, 'dbConnected' | 'rpcConnected' | 'indexerRunning' | 'slotLag'>) =>
  i.indexerRunning && i.dbConnected && i.rpcConnected && i.slotLag !== null && i.slotLag <= SYNCED_MAX_SLOT_LAG;
