import { createWorkQueue, runWorker } from '../../operator/queue';
import { createRenderCache, renderTenant } from '../../operator/render';
import type { MarketIndexer } from '../../cdk8s/lib/crd';

// Issue 40: a resync queues every tenant at once, and a reconcile that finds nothing to do
// awaits nothing real. The workers must still hand the event loop back between reconciles, or
// no timer (lease renewal), watch event or /healthz is served until the queue is empty. These
// assert the structure (what runs before what), not wall-clock figures.
describe('operator at scale: the workers yield to the event loop', () => {
  it('a timer set when a resync of 2,000 tenants starts fires before the resync ends', async () => {
    const q = createWorkQueue();
    const tenants = 2000;
    let processed = 0;
    let processedWhenTimerFired: number | undefined;
    for (let i = 0; i < tenants; i++) q.add(`t${i}`);
    setTimeout(() => (processedWhenTimerFired = processed), 0);
    // As the operator runs them: four workers; each reconcile resolves without any I/O.
    const workers = Array.from({ length: 4 }, () =>
      runWorker(q, async () => {
        processed += 1;
        if (processed === tenants) q.shutDown();
      }),
    );
    await Promise.all(workers);
    expect(processed).toBe(tenants);
    expect(processedWhenTimerFired).toBeDefined();
    // With four workers yielding after each reconcile, a timer waits a few turns at most.
    expect(processedWhenTimerFired!).toBeLessThan(tenants / 10);
  });

  it('a key that fails is done all the same (the next add is processed)', async () => {
    const q = createWorkQueue();
    const seen: string[] = [];
    q.add('a');
    const worker = runWorker(q, async (key) => {
      seen.push(key);
      if (seen.length === 1) {
        q.add('a');
        throw new Error('boom');
      }
      q.shutDown();
    }).catch((err: Error) => err.message);
    // A throwing reconcile propagates (the operator's own callback catches); the key is released.
    expect(await worker).toBe('boom');
    expect(seen).toEqual(['a']);
  });
});

describe('operator at scale: a render is cached by what it depends on', () => {
  const mi = (generation: number, uid = 'u-1'): MarketIndexer =>
    ({ apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: 'alpha', uid, generation }, spec: { tenant: 'alpha' } }) as unknown as MarketIndexer;
  // The operator bench's environment defaults (a simulator source, dev stores).
  const opts = { environment: 'dev', defaults: { source: { type: 'simulator' as const }, devStores: { enabled: true }, monitoring: { enabled: false }, quota: { persistentVolumeClaims: 3 } }, platformNamespace: 'market-indexer-system' };

  it('renders once per uid, generation and options; again when any changes', () => {
    let renders = 0;
    const cache = createRenderCache((m, o) => (renders++, renderTenant(m, o)));
    const first = cache.render(mi(1), opts);
    expect(cache.render(mi(1), { ...opts })).toEqual(first);
    expect(renders).toBe(1);
    // Kept deflated: a few KiB a tenant, not the objects.
    expect(cache.bytes).toBeLessThan(JSON.stringify(first).length / 3);
    cache.render(mi(2), opts);
    expect(renders).toBe(2);
    cache.render(mi(2, 'u-2'), opts);
    expect(renders).toBe(3);
    cache.render(mi(2, 'u-2'), { ...opts, environment: 'prod' });
    expect(renders).toBe(4);
    cache.forget('alpha');
    expect(cache.size).toBe(0);
  });
});
