// The reconcile's writing steps on plain objects: apply what differs, check the Secrets, prune
// what is no longer rendered (operator/reconcile/apply.ts, secrets.ts, prune.ts).
import type { KubeObject } from '../../operator/kube/client';
import { APPLIED_HASH, type Rendered } from '../../operator/render';
import { applyNamespace, applyObjects, needsApply } from '../../operator/reconcile/apply';
import { FIELD_MANAGER } from '../../operator/reconcile/outcome';
import { prune } from '../../operator/reconcile/prune';
import { checkSecrets, missingSecrets } from '../../operator/reconcile/secrets';
import { render } from '../../operator/reconcile/spec';
import { fakeCaches, fakeKube, marketIndexer, object, ownerRef } from '../support/operator-fakes';

const OPTS = { environment: 'dev', defaults: { quota: { persistentVolumeClaims: 3 } }, platformNamespace: 'market-indexer-system' };
const EGRESS = { egress: { database: { ipBlocks: [{ cidr: '10.0.0.0/16' }] }, redis: { ipBlocks: [{ cidr: '10.1.0.0/16' }] }, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } };

function rendered(spec: Record<string, unknown> = {}): Rendered {
  const out = render(marketIndexer('demo', spec), OPTS);
  if (!('rendered' in out)) throw new Error(out.problem.message);
  return out.rendered;
}
const applied = (calls: { verb: string; kind: string; name: string }[]) => calls.filter((c) => c.verb === 'apply').map((c) => `${c.kind}/${c.name}`);

describe('reconcile step: apply', () => {
  const desired = object('apps/v1', 'Deployment', 'mi-demo', 'api', { annotations: { [APPLIED_HASH]: 'h1' } });
  desired.spec = { replicas: 2, template: { spec: { containers: [{ name: 'api', resources: { requests: { cpu: '0.5' } } }] } } };

  it('sends an object only when it is missing, being deleted, rendered differently, or changed by someone', () => {
    const live = structuredClone(desired);
    live.status = { availableReplicas: 2 };
    (live.spec as { template: { spec: { containers: { resources: { requests: { cpu: string } } }[] } } }).template.spec.containers[0]!.resources.requests.cpu = '500m';
    expect(needsApply(desired, live)).toBe(false);
    expect(needsApply(desired, undefined)).toBe(true);
    expect(needsApply(desired, { ...live, metadata: { ...live.metadata, deletionTimestamp: '2025-01-01T00:00:00Z' } })).toBe(true);
    expect(needsApply(desired, { ...live, metadata: { ...live.metadata, annotations: { [APPLIED_HASH]: 'h0' } } })).toBe(true);
    expect(needsApply(desired, { ...live, spec: { ...(live.spec as object), replicas: 5 } })).toBe(true);
  });

  it('applies the namespace only when the live one does not hold it', async () => {
    const r = rendered();
    const ns = r.objects.find((o) => o.kind === 'Namespace')!;
    const kube = fakeKube();
    await applyNamespace(kube, r, structuredClone(ns));
    expect(kube.calls).toEqual([]);
    await applyNamespace(kube, r, { ...structuredClone(ns), metadata: { ...ns.metadata, labels: {} } });
    expect(kube.calls).toEqual([{ verb: 'apply', kind: 'Namespace', namespace: undefined, name: 'mi-demo', body: ns }]);
  });

  it('applies, with its field manager, every object that differs from the cache and nothing else', async () => {
    const r = rendered();
    const others = r.objects.filter((o) => o.kind !== 'Namespace');
    const live = others.map((o) => structuredClone(o));
    // Someone scaled the API by hand; the indexer's ConfigMap was deleted.
    const api = live.find((o) => o.kind === 'Deployment' && o.metadata.name === 'market-indexer-api')!;
    (api.spec as { replicas: number }).replicas = 7;
    const kept = live.filter((o) => !(o.kind === 'ConfigMap' && o.metadata.name === 'market-indexer-indexer'));
    const kube = fakeKube();
    const apply = jest.spyOn(kube, 'apply');
    expect(await applyObjects({ kube, caches: fakeCaches({ objects: kept }) }, r)).toEqual([]);
    expect(applied(kube.calls).sort()).toEqual(['ConfigMap/market-indexer-indexer', 'Deployment/market-indexer-api']);
    for (const [, , manager] of apply.mock.calls) expect(manager).toBe(FIELD_MANAGER);
  });

  it('skips the kinds the cluster does not serve and says which', async () => {
    const r = rendered({ monitoring: { enabled: true } });
    const kube = fakeKube();
    const unserved = await applyObjects({ kube, caches: fakeCaches({ unserved: ['ServiceMonitor', 'PrometheusRule'] }) }, r);
    expect([...new Set(unserved)].sort()).toEqual(['PrometheusRule', 'ServiceMonitor']);
    expect(applied(kube.calls).some((k) => k.startsWith('ServiceMonitor/') || k.startsWith('PrometheusRule/'))).toBe(false);
    expect(applied(kube.calls)).toHaveLength(r.objects.length - 1 - unserved.length);
  });
});

describe('reconcile step: check the Secrets', () => {
  const rpc = { devStores: { enabled: false }, networkPolicy: EGRESS, source: { type: 'rpc', programId: '11111111111111111111111111111111', rpcUrlSecretRef: { name: 'rpc', key: 'url' }, rpcWsUrlSecretRef: { name: 'rpc', key: 'ws' } } };
  const secret = (name: string, content: { data?: Record<string, string>; stringData?: Record<string, string> }): KubeObject => ({ ...object('v1', 'Secret', 'mi-demo', name), ...content });

  it('asks for nothing with dev stores (the operator renders their Secrets)', async () => {
    const kube = fakeKube();
    expect(await missingSecrets(kube, rendered())).toEqual([]);
    expect(await checkSecrets(kube, rendered())).toBeUndefined();
    expect(kube.calls).toEqual([]);
  });

  it('names every key missing, reading each Secret once', async () => {
    const kube = fakeKube([secret('market-indexer', { data: { DATABASE_URL: 'eA==' } }), secret('rpc', { stringData: { url: 'https://rpc' } })]);
    expect(await checkSecrets(kube, rendered(rpc))).toEqual({
      reason: 'SecretMissing',
      message: 'namespace mi-demo lacks the Secret key(s) market-indexer/REDIS_URL, rpc/ws (docs/deploy.md)',
    });
    expect(kube.calls.map((c) => `${c.verb} ${c.kind} ${c.namespace}/${c.name}`)).toEqual(['get Secret mi-demo/market-indexer', 'get Secret mi-demo/rpc']);
  });

  it('passes once every key is there, in data or stringData', async () => {
    const kube = fakeKube([secret('market-indexer', { data: { DATABASE_URL: 'eA==', REDIS_URL: 'eA==' } }), secret('rpc', { data: { url: 'eA==' }, stringData: { ws: 'wss://rpc' } })]);
    expect(await checkSecrets(kube, rendered(rpc))).toBeUndefined();
    expect(kube.writes()).toEqual([]);
  });
});

describe('reconcile step: prune', () => {
  const owner = ownerRef();
  const r = rendered();
  const live = (kind: string, name: string, extra: Partial<KubeObject['metadata']> = {}) =>
    object(kind === 'Deployment' ? 'apps/v1' : 'v1', kind, 'mi-demo', name, { owner, ...extra });

  it('deletes what it owns and no longer renders, by uid; lets a Secret go; leaves the rest', async () => {
    const stale = live('ConfigMap', 'old-settings');
    const secret = live('Secret', 'old-credentials', { resourceVersion: '42', ownerReferences: [owner, { ...owner, uid: 'someone', controller: false }] });
    const objects = [
      ...r.objects.filter((o) => o.kind !== 'Namespace'), // still rendered
      stale,
      secret,
      live('Deployment', 'theirs', { ownerReferences: [ownerRef('other-uid')] }), // not its own
      live('ConfigMap', 'going', { deletionTimestamp: '2025-01-01T00:00:00Z' }), // already going
      object('v1', 'ConfigMap', 'mi-demo', 'by-hand'), // owned by nobody
    ];
    const kube = fakeKube([stale, secret]);
    await prune({ kube, caches: fakeCaches({ objects }) }, marketIndexer('demo'), r);
    expect(kube.writes().map((c) => `${c.verb} ${c.kind}/${c.name}`)).toEqual(['delete ConfigMap/old-settings', 'mergePatch Secret/old-credentials']);
    expect(kube.writes()[0]!.body).toEqual({ uid: stale.metadata.uid });
    // Its own ownerReference dropped, anyone else's kept, on the version it saw.
    expect(kube.writes()[1]!.body).toEqual({ metadata: { ownerReferences: [{ ...owner, uid: 'someone', controller: false }], resourceVersion: '42' } });
    expect(kube.find('Secret', 'mi-demo', 'old-credentials')).toBeDefined();
    expect(kube.find('ConfigMap', 'mi-demo', 'old-settings')).toBeUndefined();
  });

  it('writes nothing when everything it owns is rendered', async () => {
    const kube = fakeKube();
    await prune({ kube, caches: fakeCaches({ objects: r.objects.filter((o) => o.kind !== 'Namespace') }) }, marketIndexer('demo'), r);
    expect(kube.calls).toEqual([]);
  });
});
