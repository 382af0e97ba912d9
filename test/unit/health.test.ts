import { buildHealth, type HealthInputs } from '../../core/health';
import { createProbes } from '../../server/http/probes';

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

describe('/ready of an API replica', () => {
  it('is ready once the database answers and, where given, the live-schema pointer was read (D-333)', async () => {
    let read = false;
    const probes = createProbes({ check: async () => inputs({}), cacheMs: 0, liveSchemaRead: () => read });
    expect(await probes.ready()).toEqual({ status: 503, body: { ready: false, dbConnected: true, indexerRunning: true } });
    read = true;
    expect(await probes.ready()).toEqual({ status: 200, body: { ready: true, dbConnected: true, indexerRunning: true } });
    const down = createProbes({ check: async () => inputs({ dbConnected: false }), cacheMs: 0, liveSchemaRead: () => true });
    expect((await down.ready()).status).toBe(503);
    // Single-process mode follows no pointer: the database alone.
    expect((await createProbes({ check: async () => inputs({}), cacheMs: 0 }).ready()).status).toBe(200);
  });
});
