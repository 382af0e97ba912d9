import { KubeConfig } from '@kubernetes/client-node';
import { marketIndexerCrd } from '../../cdk8s/lib/crd';
import { MANAGED_SELECTOR, startInformers, WATCHED_KINDS, type Caches } from '../../operator/informers';
import { createKubeClient } from '../../operator/kube/client';
import { startTestApiServer, type TestApiServer } from '../../local/kube-apiserver/server';
import { testCommon } from '../support/common';
import { waitFor } from '../support/tables';

// Issue 40: the operator's watches are one per kind (controller-runtime's shape, D-320), not one
// per kind and tenant namespace: 3 tenants or 30, the same number of watch connections on the
// API server; the caches still see each tenant's objects, and its Secrets are read per namespace.
describe('operator at scale: the watch count does not grow with the tenants', () => {
  let api: TestApiServer;
  let caches: Caches;
  const abort = new AbortController();
  const labels = { 'app.kubernetes.io/managed-by': MANAGED_SELECTOR.split('=')[1]! };

  beforeAll(async () => {
    api = await startTestApiServer();
    const s = api.store;
    s.create(s.typeOf('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'), undefined, marketIndexerCrd(), 'test');
    const kc = new KubeConfig();
    kc.loadFromString(api.kubeconfig('operator'));
    const { logger } = testCommon();
    caches = startInformers({ kube: createKubeClient(kc, { platformNamespace: 'market-indexer-system' }), logger, onChange: () => {}, signal: abort.signal });
    await caches.synced;
  });
  afterAll(async () => {
    abort.abort();
    await caches.stop();
    await api.close();
  });

  /** A tenant namespace with a Deployment and a Secret of the operator's, read by the caches. */
  async function tenant(name: string): Promise<void> {
    const s = api.store;
    const ns = `mi-${name}`;
    s.create(s.typeOf('', 'v1', 'namespaces'), undefined, { metadata: { name: ns, labels } }, 'test');
    s.create(s.typeOf('apps', 'v1', 'deployments'), ns, { metadata: { name: 'api', labels }, spec: { replicas: 1 } }, 'test');
    s.create(s.typeOf('', 'v1', 'secrets'), ns, { metadata: { name: 'market-indexer', labels }, data: {} }, 'test');
    await caches.watchNamespace(ns);
    await waitFor(`the Deployment of ${ns} in the cache`, async () => caches.child('Deployment', ns)?.get('api', ns));
    expect(caches.child('Secret', ns)?.get('market-indexer', ns)).toBeDefined();
  }

  it('3 tenants or 30: the same watch connections, one per kind', async () => {
    for (let i = 0; i < 3; i++) await tenant(`a${i}`);
    const withThree = api.openWatches;
    for (let i = 3; i < 30; i++) await tenant(`a${i}`);
    expect(api.openWatches).toBe(withThree);
    // The MarketIndexers, the namespaces, and each namespaced kind but Secrets (listed, not
    // watched) the cluster serves (not the prometheus-operator's, Gateway API's or
    // CloudNativePG's: no CRD here).
    const notServed = ['monitoring.coreos.com', 'gateway.networking.k8s.io', 'postgresql.cnpg.io'];
    expect(withThree).toBe(2 + WATCHED_KINDS.filter((k) => !notServed.includes(k.group)).length);
    expect(api.requests.filter((r) => r.verb === 'watch' && r.resource === 'secrets')).toEqual([]);
  });
});
