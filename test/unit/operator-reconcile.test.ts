// The reconcile as a whole, and its finalizer, on fakes of the client and the caches: the steps in
// their order, an idle reconcile writing nothing, a refused spec touching nothing (operator/reconcile.ts,
// operator/reconcile/finalizer.ts). The same behaviour against an API server: test/journeys/operator.test.ts.
import type { MarketIndexer } from '../../cdk8s/lib/crd';
import { kindOf } from '../../cdk8s/lib/kinds';
import { KubeError } from '../../operator/kube/client';
import { addFinalizer, finalize } from '../../operator/reconcile/finalizer';
import { FINALIZER, type IndexerReading } from '../../operator/reconcile/outcome';
import { testCommon } from '../support/common';
import { cachesOf, fakeAccess, fakeCaches, fakeKube, fakeReconciler, marketIndexer, object, ownerRef, rollOutDeployments, type FakeKube, type KubeCall } from '../support/operator-fakes';

const show = (calls: KubeCall[]) => calls.map((c) => `${c.verb} ${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}${c.subresource ? `/${c.subresource}` : ''}`);

describe('reconcile step: finalizer', () => {
  it('adds its finalizer once, beside any other, on the version it read', async () => {
    const mi = marketIndexer('demo', {}, { finalizers: ['someone.else/keep'] });
    const kube = fakeKube([mi as never]);
    const added = await addFinalizer(kube, mi);
    expect(added.metadata.finalizers).toEqual(['someone.else/keep', FINALIZER]);
    expect(kube.calls[0]!.body).toEqual({ metadata: { finalizers: ['someone.else/keep', FINALIZER], resourceVersion: '7' } });
    expect(await addFinalizer(kube, added)).toBe(added);
    expect(kube.calls).toHaveLength(1);
  });

  const deleted = (deletionPolicy: 'Retain' | 'Delete') =>
    marketIndexer('demo', { deletionPolicy }, { finalizers: [FINALIZER], deletionTimestamp: '2025-01-01T00:00:00Z' });
  const ns = object('v1', 'Namespace', undefined, 'mi-demo', { owner: ownerRef(), labels: { tenant: 'demo', 'app.kubernetes.io/managed-by': 'market-indexer-operator' } });
  const children = [
    object('v1', 'ConfigMap', 'mi-demo', 'market-indexer-api', { owner: ownerRef() }),
    object('v1', 'Secret', 'mi-demo', 'market-indexer', { owner: ownerRef() }),
    object('v1', 'ConfigMap', 'mi-demo', 'by-hand'),
  ];
  const run = async (mi: MarketIndexer, namespaces = [ns]) => {
    const kube = fakeKube([mi as never, ...namespaces, ...children]);
    const access = fakeAccess();
    const outcome = await finalize({ kube, caches: fakeCaches({ namespaces, objects: children }), access, logger: testCommon().logger }, mi);
    return { kube, access, outcome };
  };

  it('is done when its finalizer is gone', async () => {
    const { kube, access, outcome } = await run(marketIndexer('demo', {}, { deletionTimestamp: '2025-01-01T00:00:00Z' }));
    expect(outcome).toEqual({ result: 'gone' });
    expect([kube.calls, access.log]).toEqual([[], []]);
  });

  it('with Delete, deletes the namespace it owns (by uid), stops watching it, then lets the resource go', async () => {
    const { kube, access, outcome } = await run(deleted('Delete'));
    expect(outcome).toEqual({ result: 'finalized' });
    expect(access.log).toEqual(['ensure mi-demo', 'drop mi-demo']);
    expect(show(kube.writes())).toEqual(['delete Namespace mi-demo', 'mergePatch MarketIndexer demo']);
    expect(kube.writes()[0]!.body).toEqual({ uid: ns.metadata.uid });
    expect(kube.writes()[1]!.body).toEqual({ metadata: { finalizers: [], resourceVersion: '7' } });
  });

  it('with Retain, lets the namespace and its Secrets go, deletes the rest it owns, gives its rights up last', async () => {
    const { kube, access, outcome } = await run(deleted('Retain'));
    expect(outcome).toEqual({ result: 'finalized' });
    expect(show(kube.writes())).toEqual(['mergePatch Namespace mi-demo', 'delete ConfigMap mi-demo/market-indexer-api', 'mergePatch Secret mi-demo/market-indexer', 'mergePatch MarketIndexer demo']);
    // Neither owned nor labelled as the operator's: no proof left for its admission policy (D-276).
    expect(kube.find('Namespace', undefined, 'mi-demo')!.metadata.ownerReferences).toEqual([]);
    expect(kube.find('Namespace', undefined, 'mi-demo')!.metadata.labels).toEqual({ tenant: 'demo' });
    expect(kube.find('ConfigMap', 'mi-demo', 'by-hand')).toBeDefined();
    expect(access.log).toEqual(['ensure mi-demo', 'release mi-demo']);
  });

  it('touches nothing in a namespace it does not own (another claim, or made by hand)', async () => {
    for (const policy of ['Retain', 'Delete'] as const) {
      const theirs = object('v1', 'Namespace', undefined, 'mi-demo', { owner: ownerRef('other-uid', 'first') });
      const { kube, access } = await run(deleted(policy), [theirs]);
      expect([policy, show(kube.writes()), access.log]).toEqual([policy, ['mergePatch MarketIndexer demo'], ['drop mi-demo']]);
    }
  });
});

describe('reconcile: the steps in order', () => {
  const answered: IndexerReading = { slotLag: 1, lastProcessedSlot: '10', writer: null, indexerRunning: true };
  const setup = (kube: FakeKube, observation: () => IndexerReading | undefined = () => answered) => fakeReconciler(kube, { observation, now: () => '2025-01-01T00:00:00Z' });
  const since = (kube: FakeKube, mark: number) => show(kube.calls.slice(mark).filter((c) => c.verb !== 'get' && c.verb !== 'list'));
  const rollOut = rollOutDeployments;

  it('claims, binds, applies and writes status; converges once rolled out; then writes nothing', async () => {
    const kube = fakeKube([marketIndexer('demo') as never]);
    const { caches, reconciler } = setup(kube);
    expect(await reconciler.reconcile('demo')).toEqual({ result: 'progressing' });
    const first = since(kube, 0);
    // Finalizer, namespace, binding (then its caches), every object, status and its Events.
    expect(first.slice(0, 3)).toEqual(['mergePatch MarketIndexer demo', 'create Namespace mi-demo', 'create RoleBinding mi-demo/market-indexer-operator']);
    expect(caches.watched).toContain('mi-demo');
    const applies = first.filter((w) => w.startsWith('apply '));
    expect(applies.length).toBeGreaterThan(20);
    expect(applies).not.toContain('apply Namespace mi-demo');
    const rest = first.slice(3 + applies.length);
    expect(rest[0]).toBe('mergePatch MarketIndexer demo/status');
    for (const w of rest.slice(1)) expect(w).toMatch(/^create Event market-indexer-system\/demo\./);
    expect(kube.find('MarketIndexer', undefined, 'demo')!.status).toMatchObject({ namespace: 'mi-demo', conditions: [{ type: 'Ready', status: 'False' }, { type: 'Progressing', status: 'True' }, { type: 'Degraded', status: 'False' }, { type: 'IndexerLagging', status: 'False' }, { type: 'Reindexing', status: 'Unknown' }] });

    rollOut(kube);
    let mark = kube.calls.length;
    expect(await reconciler.reconcile('demo')).toEqual({ result: 'converged' });
    expect(since(kube, mark)[0]).toBe('mergePatch MarketIndexer demo/status');
    expect(since(kube, mark).slice(1).every((w) => w.startsWith('create Event '))).toBe(true);

    mark = kube.calls.length;
    expect(await reconciler.reconcile('demo')).toEqual({ result: 'converged' });
    expect(since(kube, mark)).toEqual([]);

    // A child deleted by hand comes back, and only it.
    await kube.delete(kindOf('v1', 'ConfigMap'), 'mi-demo', 'market-indexer-api');
    mark = kube.calls.length;
    expect(await reconciler.reconcile('demo')).toEqual({ result: 'converged' });
    expect(since(kube, mark)).toEqual(['apply ConfigMap mi-demo/market-indexer-api']);
  });

  it('stops at the first problem, writing only the status: a spec outside the policy, a claimed tenant, a missing Secret', async () => {
    const claimed = object('v1', 'Namespace', undefined, 'mi-taken', { owner: ownerRef('other-uid', 'first') });
    const kube = fakeKube([
      marketIndexer('evil', { image: { repository: 'attacker.example/exfil' } }) as never,
      marketIndexer('taken') as never,
      claimed,
      marketIndexer('nosecret', { devStores: { enabled: false }, networkPolicy: { egress: { database: { ipBlocks: [{ cidr: '10.0.0.0/16' }] }, redis: { ipBlocks: [{ cidr: '10.1.0.0/16' }] }, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } } }) as never,
    ]);
    const { reconciler } = setup(kube);
    const expectations = [
      ['evil', 'InvalidSpec', []],
      ['taken', 'TenantClaimed', []],
      // The namespace is made (so the Secret can be), nothing else.
      ['nosecret', 'SecretMissing', ['mergePatch MarketIndexer nosecret', 'create Namespace mi-nosecret', 'create RoleBinding mi-nosecret/market-indexer-operator']],
    ] as const;
    for (const [name, reason, before] of expectations) {
      const mark = kube.calls.length;
      expect(await reconciler.reconcile(name)).toEqual({ result: 'degraded', reason, retryAfterMs: 15_000 });
      const writes = since(kube, mark);
      expect([name, writes.slice(0, before.length + 1)]).toEqual([name, [...before, `mergePatch MarketIndexer ${name}/status`]]);
      expect([name, writes.slice(before.length + 1).every((w) => w.startsWith('create Event market-indexer-system/'))]).toEqual([name, true]);
      expect((kube.find('MarketIndexer', undefined, name)!.status as { conditions: { type: string; reason: string }[] }).conditions.find((c) => c.type === 'Degraded')!.reason).toBe(reason);
    }
  });

  it('answers a resource that is not there with gone, and a deleted one through its finalizer', async () => {
    const kube = fakeKube([marketIndexer('old', {}, { deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: [FINALIZER] }) as never]);
    const { reconciler } = setup(kube);
    expect(await reconciler.reconcile('nobody')).toEqual({ result: 'gone' });
    expect(await reconciler.reconcile('old')).toEqual({ result: 'finalized' });
    expect(since(kube, 0)).toEqual(['mergePatch MarketIndexer old']);
  });

  it('a restarted operator (a fresh reconciler) over a converged tenant writes nothing, not even its binding again', async () => {
    const kube = fakeKube([marketIndexer('demo') as never]);
    await setup(kube).reconciler.reconcile('demo');
    rollOut(kube);
    await setup(kube).reconciler.reconcile('demo');
    const mark = kube.calls.length;
    expect(await setup(kube).reconciler.reconcile('demo')).toEqual({ result: 'converged' });
    expect(since(kube, mark)).toEqual([]);
  });

  it('a restarted operator that has not read the indexers yet writes nothing either: the status keeps what the last one read', async () => {
    const unknown: IndexerReading = { unavailable: "the indexer's /status did not answer (connection refused)" };
    for (const before of [answered, unknown]) {
      const kube = fakeKube([marketIndexer('demo') as never]);
      await setup(kube, () => before).reconciler.reconcile('demo');
      rollOut(kube);
      await setup(kube, () => before).reconciler.reconcile('demo');
      const mark = kube.calls.length;
      // Its poller has not answered yet: the status's own reading stands (no Unknown, no Event).
      expect([before, await setup(kube, () => undefined).reconciler.reconcile('demo'), since(kube, mark)]).toEqual([before, { result: 'converged' }, []]);
    }
    // What the first read then finds is written, as any change is.
    const kube = fakeKube([marketIndexer('demo') as never]);
    await setup(kube).reconciler.reconcile('demo');
    rollOut(kube);
    await setup(kube).reconciler.reconcile('demo');
    const mark = kube.calls.length;
    await setup(kube, () => ({ ...answered, slotLag: 500 })).reconciler.reconcile('demo');
    expect(since(kube, mark)[0]).toBe('mergePatch MarketIndexer demo/status');
    expect(kube.find('MarketIndexer', undefined, 'demo')!.status).toMatchObject({ indexer: { slotLag: 500 }, conditions: expect.arrayContaining([expect.objectContaining({ type: 'IndexerLagging', status: 'True' })]) });
  });

  it('a new tenant whose indexer was never read is IndexerLagging Unknown', async () => {
    const kube = fakeKube([marketIndexer('demo') as never]);
    await setup(kube, () => undefined).reconciler.reconcile('demo');
    expect(kube.find('MarketIndexer', undefined, 'demo')!.status).toMatchObject({ indexer: {}, conditions: expect.arrayContaining([expect.objectContaining({ type: 'IndexerLagging', status: 'Unknown', reason: 'StatusUnavailable' })]) });
  });

  it('after a refusal in the tenant namespace, binds there again on the next reconcile', async () => {
    let refuse = true;
    const kube = fakeKube([marketIndexer('demo') as never], {
      refuse: (c) => (refuse && c.verb === 'apply' && c.kind === 'ConfigMap' ? ((refuse = false), new KubeError(403, 'Forbidden', 'configmaps is forbidden')) : undefined),
    });
    const { reconciler } = setup(kube);
    await expect(reconciler.reconcile('demo')).rejects.toMatchObject({ status: 403 });
    const mark = kube.calls.length;
    await reconciler.reconcile('demo');
    expect(since(kube, mark)[0]).toBe('create RoleBinding mi-demo/market-indexer-operator');
  });
});
