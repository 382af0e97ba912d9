import { buildHealth, type HealthInputs } from '../../core/health';

const inputs = (over: Partial<HealthInputs>): HealthInputs => ({
  dbConnected: true,
  rpcConnected: true,
  indexerRunning: true,
  slotLag: 3,
  lastProcessedSlot: '10',
  lastActivityAt: null,
  startedAt: 0,
  now: new Date(5_000),
  ...over,
});

describe('health', () => {
  it('is unhealthy without the database, in every process', () => {
    expect(buildHealth(inputs({ dbConnected: false })).status).toBe('unhealthy');
    expect(buildHealth(inputs({ dbConnected: false }), { indexerCritical: false }).status).toBe('unhealthy');
  });

  it('counts a stopped indexer as critical only where it is (the indexer process), a warning elsewhere (D-67)', () => {
    const own = buildHealth(inputs({ indexerRunning: false }));
    expect(own.status).toBe('unhealthy');
    expect(own.checks.find((c) => c.name === 'indexer')).toEqual({ name: 'indexer', status: 'fail', message: 'indexer not running' });
    const api = buildHealth(inputs({ indexerRunning: false }), { indexerCritical: false });
    expect(api.status).toBe('degraded');
    expect(api.checks.find((c) => c.name === 'indexer')).toEqual({ name: 'indexer', status: 'warn', message: 'indexer not running' });
  });

  it('counts the database as critical unless told otherwise (an API replica\'s liveness, D-101)', () => {
    const api = buildHealth(inputs({ dbConnected: false }), { indexerCritical: false, databaseCritical: false });
    expect(api.status).toBe('degraded');
    expect(api.checks.find((c) => c.name === 'database')).toEqual({ name: 'database', status: 'warn', message: 'database unreachable' });
  });

  it('is degraded, not unhealthy, on RPC or slot-lag trouble', () => {
    expect(buildHealth(inputs({ rpcConnected: false })).status).toBe('degraded');
    expect(buildHealth(inputs({ slotLag: 101 })).status).toBe('degraded');
    expect(buildHealth(inputs({})).status).toBe('healthy');
  });
});
