import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { marketIndexerCrd, type Condition, type MarketIndexer } from '../../cdk8s/lib/crd';
import { FIELD_MANAGER } from '../../operator/reconcile';
import { renderTenant } from '../../operator/render';
import { OPERATOR_NAME, OPERATOR_PERMISSIONS, permissionsFor, TENANT_BINDING, tenantBinding, tenantClusterRoleName } from '../../cdk8s/lib/operator-permissions';
import { synthEnvironment } from '../../cdk8s/synth';
import { createRbacAuthorizer, serviceAccountIdentity } from '../../local/kube-apiserver/rbac';
import { LEASE_NAME } from '../../operator/run';
import { startTestApiServer, type TestApiServer } from '../../local/kube-apiserver/server';
import type { Json } from '../../local/kube-apiserver/fields';
import { parseManifests, ROOT } from '../support/kit';
import { spawnOperator, type Child } from '../support/processes';
import { waitFor } from '../support/tables';
import { readFileSync } from 'node:fs';

// The operator runs as its own process (the real entry point) against the protocol-faithful
// test API server (local/kube-apiserver, checked with the real kubectl in
// test/integration/kube-apiserver.test.ts). Pods never run there: the test stands in for the
// Deployment controller by writing the Deployments' status, and for the tenants' indexers by
// answering their /status.
jest.setTimeout(120_000);

const TOKEN = 'operator';
/** The operator's identity too, for the requests the test makes in its name. */
const PROBE_TOKEN = 'operator-probe';
const PLATFORM_NAMESPACE = 'market-indexer-system';
/** What the kit renders that governs the operator's rights: its RBAC and the admission policy on its RoleBindings. */
const ACCESS_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
const LEASE_SECONDS = 3;
/** What a MarketIndexer may ask beyond the environment's values (platform.operator.policy). */
const POLICY = { imageRepositories: ['registry.example/market-indexer-canary'], egressBlocks: [{ cidr: '10.0.0.0/8', except: ['10.96.0.0/12'] }] };
const ENVIRONMENT_DEFAULTS = {
  image: { tag: '1.0.0' },
  // The ingress controller's and the Gateway's addresses, which a tenant with an edge needs (D-230).
  api: { ingress: { trustedProxies: ['10.2.0.0/16'] }, httpRoute: { trustedProxies: ['10.3.0.0/16'] } },
  networkPolicy: { egress: { database: { ipBlocks: [{ cidr: '10.0.0.0/16' }] }, redis: { ipBlocks: [{ cidr: '10.1.0.0/16' }] }, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } },
};

type Mi = MarketIndexer & { metadata: { uid: string; generation: number } };

describe('operator: a MarketIndexer becomes a whole tenant, kept converged', () => {
  let api: TestApiServer;
  let dir: string;
  let statusServer: http.Server;
  const indexerStatus = new Map<string, { slotLag: number; lastProcessedSlot: string; writer: string; indexerRunning: boolean }>();
  const operators: Child[] = [];
  let operatorPort: number;

  const s = () => api.store;
  const type = (group: string, version: string, plural: string) => s().typeOf(group, version, plural);
  const MI = () => type('marketindexer.dev', 'v1alpha1', 'marketindexers');
  const getMi = (name: string) => s().find(MI(), undefined, name) as unknown as Mi | undefined;
  const condition = (name: string, t: string) => (getMi(name)?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === t);
  const ofTenant = (ns: string) => s().allTypes().flatMap((t) => (t.namespaced ? s().list(t, ns, []) : t.kind === 'Namespace' ? s().list(t, undefined, []).filter((o) => (o.metadata as Json).name === ns) : []));
  const keyOf = (o: Json) => `${o.kind}/${(o.metadata as Json).namespace ?? ''}/${(o.metadata as Json).name}`;
  /** Requests of the operator that change the cluster, leases aside, since a mark. */
  const writesSince = (mark: number) => api.requests.slice(mark).filter((r) => r.token === TOKEN && !['get', 'list', 'watch'].includes(r.verb) && r.resource !== 'leases');
  const apply = (kind: string, plural: string, group: string, body: Json) => s().apply(type(group, 'v1', plural), (body.metadata as Json).namespace as string | undefined, (body.metadata as Json).name as string, body, 'test', true, 'main');
  const createMi = (name: string, spec: Json) => s().create(MI(), undefined, { apiVersion: "marketindexer.dev/v1alpha1", kind: "MarketIndexer", metadata: { name }, spec }, "test") as unknown as Mi;
  const patchSpec = (name: string, spec: Json) => s().patch(MI(), undefined, name, (live) => ({ ...live, spec: { ...(live.spec as Json), ...spec } }), 'test', 'main');

  /** The Deployment controller's part: every Deployment of the namespace rolled out and available. */
  function rollOut(ns: string): void {
    const t = type('apps', 'v1', 'deployments');
    for (const d of s().list(t, ns, [])) {
      const m = d.metadata as Json & { name: string; generation: number };
      const replicas = ((d.spec as Json).replicas as number | undefined) ?? 1;
      s().patch(t, ns, m.name, (live) => ({ ...live, status: { observedGeneration: m.generation, replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas } }), 'deployment-controller', 'status');
    }
  }

  const metricsOf = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const metric = (text: string, name: string) => [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.e+]+)$`, 'gm'))].reduce((a, m) => a + Number(m[2]), 0);

  function startOperator(): Child {
    const statusUrl = `http://127.0.0.1:${(statusServer.address() as AddressInfo).port}/{tenant}/status`;
    const env = { OPERATOR_ENVIRONMENT: 'test', OPERATOR_DEFAULTS_FILE: path.join(dir, 'defaults.json'), OPERATOR_STATUS_URL: statusUrl, OPERATOR_STATUS_SECONDS: '1', OPERATOR_RESYNC_SECONDS: '2', OPERATOR_LEASE_SECONDS: String(LEASE_SECONDS) };
    const child = spawnOperator(['--kubeconfig', path.join(dir, 'operator.kubeconfig')], env);
    operators.push(child);
    return child;
  }

  /** A request in the operator's name (its ServiceAccount), as a stolen token would make it. */
  const asOperator = async (method: string, urlPath: string, body?: Json) => {
    const headers = { Authorization: `Bearer ${PROBE_TOKEN}`, 'Content-Type': 'application/json' };
    const res = await fetch(`${api.url}${urlPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    // RBAC applies to the operator's ServiceAccount: it runs with exactly the RBAC the kit renders.
    const identity = serviceAccountIdentity(PLATFORM_NAMESPACE, OPERATOR_NAME);
    api = await startTestApiServer({ authorizer: (store) => createRbacAuthorizer(store, { [TOKEN]: identity, [PROBE_TOKEN]: identity }) });
    dir = mkdtempSync(path.join(os.tmpdir(), 'operator-'));
    writeFileSync(path.join(dir, 'operator.kubeconfig'), api.kubeconfig(TOKEN));
    const platform = synthEnvironment({ environment: 'test', ...ENVIRONMENT_DEFAULTS, platform: { namespace: PLATFORM_NAMESPACE, operator: { policy: POLICY } }, tenants: {} }, 'the e2e environment')
      .find((f) => f.name === 'platform.yaml')!.objects as Json[];
    // The defaults file the kit mounts: the environment's values and the policy.
    const defaultsCm = platform.find((o) => o.kind === 'ConfigMap' && (o.metadata as Json).name === `${OPERATOR_NAME}-defaults`)!;
    writeFileSync(path.join(dir, 'defaults.json'), (defaultsCm.data as Json)['defaults.json'] as string);
    s().create(type('', 'v1', 'namespaces'), undefined, { metadata: { name: PLATFORM_NAMESPACE } }, 'test');
    // As every cluster has it.
    s().create(type('rbac.authorization.k8s.io', 'v1', 'clusterroles'), undefined, { metadata: { name: 'cluster-admin' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }, 'test');
    for (const o of platform.filter((x) => ACCESS_KINDS.includes(x.kind as string))) {
      s().create(s().typeOfKind(o.apiVersion as string, o.kind as string)!, (o.metadata as Json).namespace as string | undefined, o, 'test');
    }
    const crds = type('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    s().create(crds, undefined, marketIndexerCrd(), 'test');
    // The CRDs of what a tenant may carry: the prometheus-operator's, Gateway API's, CloudNativePG's.
    for (const file of ['monitoring.coreos.com', 'gateway.networking.k8s.io', 'postgresql.cnpg.io']) for (const crd of parseManifests(readFileSync(path.join(ROOT, `cdk8s/crds/${file}.yaml`), 'utf8'))) s().create(crds, undefined, crd, 'test');
    statusServer = http.createServer((req, res) => {
      const tenant = (req.url ?? '').split('/')[1]!;
      const body = indexerStatus.get(tenant) ?? { slotLag: 3, lastProcessedSlot: '1000', writer: `indexer-${tenant}-0:7`, indexerRunning: true };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'healthy', synced: body.slotLag <= 100, ...body }));
    });
    await new Promise<void>((r) => statusServer.listen(0, '127.0.0.1', r));
    operatorPort = await startOperator().port;
    await waitFor('the operator to lead', async () => s().find(type('coordination.k8s.io', 'v1', 'leases'), 'market-indexer-system', LEASE_NAME));
  });

  afterAll(async () => {
    for (const o of operators) o.child.kill('SIGKILL');
    await Promise.all(operators.map((o) => o.exited));
    statusServer.close();
    await api.close();
  });

  const alphaSpec = {
    tenant: 'alpha',
    source: { type: 'simulator' },
    devStores: { enabled: true },
    api: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 6 }, ingress: { enabled: true, host: 'alpha.example.com', tlsSecretName: 'alpha-tls' }, httpRoute: { hostnames: ['alpha.example.com'], parentRefs: [{ name: 'public', namespace: 'gateway-system' }] } },
    quota: { requestsCpu: '8', limitsCpu: '32', limitsMemory: '32Gi', persistentVolumeClaims: 3 },
  };

  it('creates every object of the tenant, each owned by its MarketIndexer, and reports Ready once they roll out', async () => {
    const mi = createMi('alpha', alphaSpec);
    await waitFor('alpha applied', async () => condition('alpha', 'Degraded')?.status === 'False');
    // The rendered objects, and the operator's own binding there (owned by the resource too).
    const expected = [...renderTenant(mi, { environment: 'test', defaults: ENVIRONMENT_DEFAULTS as never }).objects.map(keyOf), `RoleBinding/mi-alpha/${TENANT_BINDING}`].sort();
    const live = ofTenant('mi-alpha');
    expect(live.map(keyOf).sort()).toEqual(expected);
    expect(expected.length).toBeGreaterThan(25);
    for (const o of live) {
      expect([keyOf(o), (o.metadata as Json).ownerReferences]).toEqual([keyOf(o), [expect.objectContaining({ kind: 'MarketIndexer', name: 'alpha', uid: mi.metadata.uid, controller: true })]]);
    }
    expect(getMi('alpha')!.metadata.finalizers).toEqual(['marketindexer.dev/cleanup']);
    expect(condition('alpha', 'Ready')).toMatchObject({ status: 'False', reason: 'NotAvailable' });

    rollOut('mi-alpha');
    const settled = async () => condition('alpha', 'Ready')?.status === 'True' && condition('alpha', 'Progressing')?.status === 'False' && condition('alpha', 'IndexerLagging')?.status === 'False';
    await waitFor('alpha Ready, with its indexer read', settled);
    const status = getMi('alpha')!.status!;
    expect(status).toMatchObject({
      observedGeneration: 1,
      namespace: 'mi-alpha',
      indexer: { lastProcessedSlot: '1000', slotLag: 3, writer: 'indexer-alpha-0:7' },
      // No HPA controller runs here to set the Deployment's replicas: the stand-in rolls out one.
      api: { readyReplicas: 1 },
    });
    expect(condition('alpha', 'IndexerLagging')).toMatchObject({ status: 'False', reason: 'WithinThreshold', observedGeneration: 1 });
  });

  it('holds no right outside the tenant namespaces it serves: a stolen token reads no other Secret and changes no other workload', async () => {
    s().create(type('', 'v1', 'secrets'), 'kube-system', { metadata: { name: 'cloud-credentials' }, stringData: { key: 'k' } }, 'test');
    expect((await asOperator('GET', '/api/v1/namespaces/kube-system/secrets/cloud-credentials')).status).toBe(403);
    expect((await asOperator('GET', '/api/v1/secrets')).status).toBe(403);
    // Workloads are read cluster-wide (one cache per kind, D-320), never written outside a tenant.
    expect((await asOperator('GET', '/apis/apps/v1/deployments')).status).toBe(200);
    expect((await asOperator('PATCH', '/apis/apps/v1/namespaces/kube-system/deployments/coredns', { metadata: { labels: { x: 'y' } } })).status).toBe(403);
    expect((await asOperator('PATCH', '/api/v1/namespaces/kube-system', { metadata: { labels: { x: 'y' } } })).status).toBe(403);
    expect((await asOperator('DELETE', '/api/v1/namespaces/default')).status).toBe(403);
    // Binding anything but the tenant ClusterRole is refused by RBAC's escalation check.
    const escalate = await asOperator('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings', {
      metadata: { name: 'mine' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: PLATFORM_NAMESPACE }],
    });
    expect([escalate.status, escalate.body.message]).toEqual([403, expect.stringContaining('not currently held')]);
    // The tenant ClusterRole itself, which RBAC lets it bind anywhere (`create` on rolebindings
    // names no namespace): refused outside the tenant namespaces by the kit's admission policy,
    // and inside them for any binding but its own (D-260).
    const tenantRoleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: tenantClusterRoleName(PLATFORM_NAMESPACE) };
    const self = [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: PLATFORM_NAMESPACE }];
    const elsewhere = await asOperator('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings', { metadata: { name: TENANT_BINDING }, roleRef: tenantRoleRef, subjects: self });
    expect([elsewhere.status, elsewhere.body.reason, elsewhere.body.message]).toEqual([403, 'Forbidden', expect.stringContaining('denied request: the operator binds roles only in the tenant namespaces it manages')]);
    const toSomeoneElse = await asOperator('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/mi-alpha/rolebindings', {
      metadata: { name: 'helper', ownerReferences: [{ apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name: 'alpha', uid: getMi('alpha')!.metadata.uid, controller: true }] },
      roleRef: tenantRoleRef, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'mi-alpha' }],
    });
    expect([toSomeoneElse.status, toSomeoneElse.body.message]).toEqual([403, expect.stringContaining("the operator's RoleBinding is named market-indexer-operator")]);
    expect((await asOperator('GET', '/api/v1/namespaces/kube-system/secrets/cloud-credentials')).status).toBe(403);
    // Inside the tenant it serves, what the tenant ClusterRole grants, bound there only.
    expect((await asOperator('GET', '/api/v1/namespaces/mi-alpha/secrets/market-indexer')).status).toBe(200);
    const bindings = s().allTypes().filter((t) => t.kind === 'RoleBinding' || t.kind === 'ClusterRoleBinding').flatMap((t) => s().list(t, undefined, []))
      .filter((b) => ((b.roleRef as Json).name as string) === tenantClusterRoleName(PLATFORM_NAMESPACE)).map((b) => `${b.kind} ${(b.metadata as Json).namespace}`);
    expect(bindings).toEqual(['RoleBinding mi-alpha']);
  });

  it('makes zero writes when nothing changed, through several resyncs', async () => {
    const reconciles = async () => metric(await metricsOf(operatorPort), 'service_operator_reconciles_total');
    // What the last rollout caused (its status write, its Events) is done once a resync has run.
    const settled = await reconciles();
    await waitFor('a resync', async () => (await reconciles()) > settled, 20_000);
    const mark = api.requests.length;
    const before = await reconciles();
    await waitFor('two more resyncs', async () => (await reconciles()) >= before + 2, 20_000);
    expect(writesSince(mark)).toEqual([]);
  });

  it('writes only the object a spec change concerns', async () => {
    const mark = api.requests.length;
    const generation = patchSpec('alpha', { api: { ...alphaSpec.api, autoscaling: { ...alphaSpec.api.autoscaling, maxReplicas: 8 } } }).metadata as Json;
    await waitFor('the change observed', async () => getMi('alpha')!.status?.observedGeneration === generation.generation);
    const writes = writesSince(mark).map((w) => `${w.verb} ${w.resource}/${w.name}`);
    expect(writes.filter((w) => !w.endsWith('marketindexers/status/alpha'))).toEqual(['patch horizontalpodautoscalers/market-indexer-api']);
    expect((s().find(type('autoscaling', 'v2', 'horizontalpodautoscalers'), 'mi-alpha', 'market-indexer-api')!.spec as Json).maxReplicas).toBe(8);
  });

  it('recreates a child deleted by hand', async () => {
    const cm = type('', 'v1', 'configmaps');
    const before = s().get(cm, 'mi-alpha', 'market-indexer-api');
    s().delete(cm, 'mi-alpha', 'market-indexer-api', 'someone');
    const back = await waitFor('the ConfigMap back', async () => s().find(cm, 'mi-alpha', 'market-indexer-api'));
    expect(back.data).toEqual(before.data);
    expect((back.metadata as Json).uid).not.toBe((before.metadata as Json).uid);
  });

  it('rolls the tenant on a new image tag: Progressing names the tags from and to until both Deployments roll out (issue 38)', async () => {
    const images = () => ['market-indexer-api', 'market-indexer-indexer'].map((n) => (s().find(type('apps', 'v1', 'deployments'), 'mi-alpha', n)!.spec as any).template.spec.containers[0].image as string);
    expect(getMi('alpha')!.status!.imageTag).toBe('1.0.0');
    const { generation } = patchSpec('alpha', { image: { tag: '1.1.0' } }).metadata as Json;
    await waitFor('the rollout shown', async () => condition('alpha', 'Progressing')?.status === 'True' && condition('alpha', 'Progressing')?.observedGeneration === generation);
    expect([condition('alpha', 'Progressing')!.message, images().map((i) => i.split(':').pop())]).toEqual([expect.stringMatching(/^rolling out image tag 1\.0\.0 → 1\.1\.0: API 0\/\d+ updated, indexer 0\/\d+ updated$/), ['1.1.0', '1.1.0']]);
    rollOut('mi-alpha');
    await waitFor('the rollout complete', async () => condition('alpha', 'Progressing')?.status === 'False' && getMi('alpha')!.status!.imageTag === '1.1.0');
    expect(condition('alpha', 'Progressing')).toMatchObject({ reason: 'RolloutComplete', message: 'every Deployment runs the latest spec (image tag 1.1.0)', observedGeneration: generation });
  });

  it('sets IndexerLagging from the indexer\'s /status, with an Event on each transition', async () => {
    indexerStatus.set('alpha', { slotLag: 500, lastProcessedSlot: '2000', writer: 'indexer-alpha-1:9', indexerRunning: true });
    await waitFor('lagging', async () => condition('alpha', 'IndexerLagging')?.status === 'True');
    expect(getMi('alpha')!.status!.indexer).toEqual({ lastProcessedSlot: '2000', slotLag: 500, writer: 'indexer-alpha-1:9', observedAt: expect.any(String) });
    indexerStatus.delete('alpha');
    await waitFor('caught up', async () => condition('alpha', 'IndexerLagging')?.status === 'False');
    const events = s().list(type('', 'v1', 'events'), PLATFORM_NAMESPACE, []).filter((e) => (e.involvedObject as Json).name === 'alpha');
    expect(events.map((e) => `${e.type} ${e.reason}`)).toEqual(expect.arrayContaining(['Warning SlotLagHigh', 'Normal WithinThreshold']));
  });

  it('prunes what it no longer renders, and only that', async () => {
    const mark = api.requests.length;
    patchSpec('alpha', { api: { ...alphaSpec.api, autoscaling: { enabled: false }, httpRoute: { ...alphaSpec.api.httpRoute, enabled: false } }, monitoring: { enabled: false } });
    const pruned = [
      [type('autoscaling', 'v2', 'horizontalpodautoscalers'), 'market-indexer-api'],
      [type('gateway.networking.k8s.io', 'v1', 'httproutes'), 'market-indexer-api'],
      [type('monitoring.coreos.com', 'v1', 'prometheusrules'), 'market-indexer'],
      [type('monitoring.coreos.com', 'v1', 'servicemonitors'), 'market-indexer-api'],
      [type('monitoring.coreos.com', 'v1', 'servicemonitors'), 'market-indexer-indexer'],
    ] as const;
    await waitFor('HPA, route and monitoring gone', async () => pruned.every(([t, n]) => !s().find(t, 'mi-alpha', n)));
    const deletes = writesSince(mark).filter((w) => w.verb === 'delete').map((w) => `${w.resource}/${w.name}`).sort();
    expect(deletes).toEqual(['horizontalpodautoscalers/market-indexer-api', 'httproutes/market-indexer-api', 'prometheusrules/market-indexer', 'servicemonitors/market-indexer-api', 'servicemonitors/market-indexer-indexer']);
    await waitFor('the API Deployment states replicas again', async () => (s().find(type('apps', 'v1', 'deployments'), 'mi-alpha', 'market-indexer-api')!.spec as Json).replicas === 2);
  });

  it('answers a missing Secret with Degraded and an Event, touching nothing but the namespace, and converges once it exists', async () => {
    createMi('beta', { tenant: 'beta', source: { type: 'rpc' } });
    await waitFor('beta degraded', async () => condition('beta', 'Degraded')?.reason === 'SecretMissing');
    expect(condition('beta', 'Degraded')!.message).toContain('market-indexer/DATABASE_URL, market-indexer/REDIS_URL, market-indexer/RPC_URL');
    expect(ofTenant('mi-beta').map(keyOf)).toEqual(['Namespace//mi-beta', `RoleBinding/mi-beta/${TENANT_BINDING}`]);
    // The Event is a write of its own after the status: wait for it rather than race it.
    await waitFor('a SecretMissing warning Event', async () =>
      s().list(type('', 'v1', 'events'), PLATFORM_NAMESPACE, []).some((e) => (e.involvedObject as Json).name === 'beta' && e.reason === 'SecretMissing' && e.type === 'Warning'),
    );
    apply('Secret', 'secrets', '', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'market-indexer', namespace: 'mi-beta' },
      stringData: { DATABASE_URL: 'postgres://b@db/b', REDIS_URL: 'redis://r', RPC_URL: 'https://rpc.example' },
    });
    await waitFor('beta converged', async () => condition('beta', 'Degraded')?.status === 'False', 40_000);
    expect(s().find(type('apps', 'v1', 'deployments'), 'mi-beta', 'market-indexer-indexer')).toBeDefined();
  });

  it('refuses a second MarketIndexer for a tenant, and a namespace nobody owns, touching neither', async () => {
    const mark = api.requests.length;
    createMi('alpha-again', { tenant: 'alpha', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('claim refused', async () => condition('alpha-again', 'Degraded')?.reason === 'TenantClaimed');
    expect(condition('alpha-again', 'Degraded')!.message).toContain('belongs to MarketIndexer alpha');
    s().create(type('', 'v1', 'namespaces'), undefined, { metadata: { name: 'mi-zeta' } }, 'someone');
    createMi('zeta', { tenant: 'zeta', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('zeta refused', async () => condition('zeta', 'Degraded')?.reason === 'TenantClaimed');
    expect(condition('zeta', 'Degraded')!.message).toContain('namespace mi-zeta exists and no MarketIndexer owns it');
    const touched = writesSince(mark).filter((w) => w.namespace === 'mi-alpha' || w.namespace === 'mi-zeta' || w.name === 'mi-zeta');
    expect(touched).toEqual([]);
  });

  it('answers a spec the kit cannot deploy with Degraded InvalidSpec, naming the field', async () => {
    createMi('iota', { tenant: 'iota', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 }, api: { ingress: { enabled: true } } });
    await waitFor('invalid', async () => condition('iota', 'Degraded')?.reason === 'InvalidSpec');
    expect(condition('iota', 'Degraded')!.message).toContain('api.ingress.host: required when api.ingress.enabled is true');
    expect(ofTenant('mi-iota')).toEqual([]);
  });

  it('refuses a spec outside the environment\'s policy with InvalidSpec naming the field, creating nothing; accepts one inside it', async () => {
    const base = { source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } };
    const refused: [string, Json, string][] = [
      ['pol-image', { image: { repository: 'attacker.example/exfil' } }, 'spec.image.repository: image repository "attacker.example/exfil" is not allowed here'],
      ['pol-devstore', { devStores: { enabled: true, postgresImage: 'attacker.example/pg:1' } }, 'spec.devStores.postgresImage: image repository "attacker.example/pg" is not allowed here'],
      ['pol-egress', { networkPolicy: { egress: { rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }], ports: [443] } } } }, 'spec.networkPolicy.egress.rpc.ipBlocks[0]: 0.0.0.0/0 is outside the egress blocks'],
      ['pol-except', { networkPolicy: { egress: { database: { ipBlocks: [{ cidr: '10.96.0.0/16' }], ports: [5432] } } } }, 'spec.networkPolicy.egress.database.ipBlocks[0]: 10.96.0.0/16 is outside'],
      ['pol-off', { networkPolicy: { enabled: false } }, 'spec.networkPolicy.enabled: a MarketIndexer may not turn its NetworkPolicies off'],
    ];
    for (const [name, spec] of refused) createMi(name, { tenant: name, ...base, ...spec });
    createMi('pol-ok', { tenant: 'pol-ok', ...base, image: { repository: 'registry.example/market-indexer-canary' }, networkPolicy: { egress: { database: { ipBlocks: [{ cidr: '10.20.0.0/16' }], ports: [5432] } } } });
    for (const [name, , message] of refused) {
      await waitFor(`${name} refused`, async () => condition(name, 'Degraded')?.reason === 'InvalidSpec');
      expect([name, condition(name, 'Degraded')!.message]).toEqual([name, expect.stringContaining(message)]);
      expect([name, ofTenant(`mi-${name}`)]).toEqual([name, []]);
    }
    await waitFor('pol-ok applied', async () => condition('pol-ok', 'Degraded')?.status === 'False');
    const api0 = s().find(type('apps', 'v1', 'deployments'), 'mi-pol-ok', 'market-indexer-api')!;
    expect(((api0.spec as any).template.spec.containers[0].image as string).startsWith('registry.example/market-indexer-canary:')).toBe(true);
  });

  it('on deletion with Retain, keeps the namespace and its Secrets (no longer owned) and removes the rest', async () => {
    const owner = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name: 'alpha', uid: getMi('alpha')!.metadata.uid };
    s().delete(MI(), undefined, 'alpha', 'test');
    await waitFor('alpha gone', async () => !getMi('alpha'));
    const left = ofTenant('mi-alpha');
    // Its binding there went too: the operator keeps no right in a namespace it no longer serves.
    expect(left.map(keyOf).sort()).toEqual(['Namespace//mi-alpha', 'Secret/mi-alpha/market-indexer', 'Secret/mi-alpha/market-indexer-dev-stores']);
    for (const o of left) expect((o.metadata as Json).ownerReferences ?? []).toEqual([]);
    // Nor labelled as the operator's: a stolen token cannot bind itself there again (D-276).
    expect(((s().find(type('', 'v1', 'namespaces'), undefined, 'mi-alpha')!.metadata as Json).labels as Json)['app.kubernetes.io/managed-by']).toBeUndefined();
    expect((await asOperator('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/mi-alpha/rolebindings', tenantBinding(PLATFORM_NAMESPACE, 'mi-alpha', {}, owner) as never)).body).toMatchObject({ code: 403, message: expect.stringContaining('denied request: the operator binds roles only in the tenant namespaces it manages') });
    // A Secret made there later is not the operator's to read, nor a new claimant's (D-202).
    s().create(type('', 'v1', 'secrets'), 'mi-alpha', { metadata: { name: 'made-later' }, stringData: { DATABASE_URL: 'postgres://x' } }, 'someone');
    expect((await asOperator('GET', '/api/v1/namespaces/mi-alpha/secrets/made-later')).status).toBe(403);
    createMi('alpha-later', { tenant: 'alpha', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('the retained namespace not adopted', async () => condition('alpha-later', 'Degraded')?.reason === 'TenantClaimed');
    expect(condition('alpha-later', 'Degraded')!.message).toContain('namespace mi-alpha exists and no MarketIndexer owns it');
    expect(s().find(type('rbac.authorization.k8s.io', 'v1', 'rolebindings'), 'mi-alpha', TENANT_BINDING)).toBeUndefined();
  });

  it('on deletion with Delete, removes the namespace and all in it', async () => {
    createMi('gamma', { tenant: 'gamma', deletionPolicy: 'Delete', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('gamma applied', async () => condition('gamma', 'Degraded')?.status === 'False');
    s().delete(MI(), undefined, 'gamma', 'test');
    await waitFor('gamma and its namespace gone', async () => !getMi('gamma') && ofTenant('mi-gamma').length === 0);
  });

  it('rides out an API server restart that forgets its watch history, and binds itself again where its binding was deleted', async () => {
    const bindings = type('rbac.authorization.k8s.io', 'v1', 'rolebindings');
    s().delete(bindings, 'mi-beta', TENANT_BINDING, 'someone');
    await api.restart({ compact: true });
    // Its lists in mi-beta are refused (403) until it makes its binding again.
    await waitFor('the binding back', async () => s().find(bindings, 'mi-beta', TENANT_BINDING), 60_000);
    createMi('delta', { tenant: 'delta', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('delta applied after the restart', async () => condition('delta', 'Degraded')?.status === 'False', 60_000);
    expect(ofTenant('mi-delta').length).toBeGreaterThan(20);
  });

  it('turning the dev stores off removes them, and lets their Secrets go instead of deleting them', async () => {
    const mark = api.requests.length;
    patchSpec('delta', { devStores: { enabled: false } });
    // Wait for every dev-store object, not the StatefulSets alone: the prune deletes them one by one.
    const devStoreObjects = [type('apps', 'v1', 'statefulsets'), type('', 'v1', 'services'), type('networking.k8s.io', 'v1', 'networkpolicies')].flatMap((t) => ['postgres', 'redis'].map((n) => [t, n] as const));
    await waitFor('dev stores gone', async () => devStoreObjects.every(([t, n]) => !s().find(t, 'mi-delta', n)));
    const deletes = writesSince(mark).filter((w) => w.verb === 'delete').map((w) => `${w.resource}/${w.name}`).sort();
    expect(deletes).toEqual(['networkpolicies/postgres', 'networkpolicies/redis', 'services/postgres', 'services/redis', 'statefulsets/postgres', 'statefulsets/redis']);
    await waitFor('Secrets let go', async () =>
      ['market-indexer', 'market-indexer-dev-stores'].every((n) => ((s().find(type('', 'v1', 'secrets'), 'mi-delta', n)?.metadata as Json | undefined)?.ownerReferences as unknown[] | undefined)?.length === 0),
    );
    // The pods keep working on the Secret they had: the tenant stays served.
    await waitFor('delta still applied', async () => condition('delta', 'Degraded')?.status === 'False');
  });

  it('applies a CloudNativePG Cluster for a tenant that asks for one, and never deletes it when the tenant stops asking', async () => {
    const clusters = type('postgresql.cnpg.io', 'v1', 'clusters');
    patchSpec('delta', { database: { cloudnativepg: { enabled: true, instances: 1 } }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('the Cluster applied', async () => s().find(clusters, 'mi-delta', 'market-indexer-db'));
    const mark = api.requests.length;
    patchSpec('delta', { database: { cloudnativepg: { enabled: false } } });
    await waitFor('delta applied without it', async () => condition('delta', 'Degraded')?.status === 'False' && getMi('delta')!.metadata.generation === getMi('delta')!.status?.observedGeneration);
    // The database stays: let go, not deleted (D-505).
    expect(s().find(clusters, 'mi-delta', 'market-indexer-db')).toBeDefined();
    expect(writesSince(mark).filter((w) => w.verb === 'delete' && w.resource === 'clusters')).toEqual([]);
  });

  it('runs one leader of two; the other takes over when the leader is killed', async () => {
    const standby = startOperator();
    const standbyPort = await standby.port;
    const leases = type('coordination.k8s.io', 'v1', 'leases');
    const holder = () => ((s().find(leases, 'market-indexer-system', LEASE_NAME)!.spec as Json).holderIdentity as string);
    const first = holder();
    // The standby campaigns for a while without winning.
    await waitFor('the standby to campaign', async () => api.requests.filter((r) => r.resource === 'leases' && r.verb === 'get').length > 3);
    expect(metric(await metricsOf(standbyPort), 'service_operator_is_leader')).toBe(0);
    expect(metric(await metricsOf(operatorPort), 'service_operator_is_leader')).toBe(1);
    expect(holder()).toBe(first);
    operators[0]!.child.kill('SIGKILL');
    await waitFor('the standby to lead', async () => holder() !== first && metric(await metricsOf(standbyPort), 'service_operator_is_leader') === 1, LEASE_SECONDS * 4000);
    expect((s().find(leases, 'market-indexer-system', LEASE_NAME)!.spec as Json).leaseTransitions).toBeGreaterThanOrEqual(1);
    createMi('epsilon', { tenant: 'epsilon', source: { type: 'simulator' }, devStores: { enabled: true }, quota: { persistentVolumeClaims: 3 } });
    await waitFor('epsilon applied by the new leader', async () => condition('epsilon', 'Degraded')?.status === 'False', 60_000);
    operatorPort = standbyPort;
  });

  it('converges 100 MarketIndexers created at once', async () => {
    const names = Array.from({ length: 100 }, (_, i) => `bulk-${i}`);
    const spec = { source: { type: 'simulator' }, devStores: { enabled: true }, monitoring: { enabled: false }, quota: { persistentVolumeClaims: 3 } };
    for (const n of names) createMi(n, { tenant: n, ...spec });
    const ready = (n: string) => condition(n, 'Ready')?.status === 'True';
    await waitFor(
      'every bulk tenant Ready',
      async () => {
        for (const n of names) if (!ready(n) && s().list(type('apps', 'v1', 'deployments'), `mi-${n}`, []).length === 2) rollOut(`mi-${n}`);
        return names.every(ready);
      },
      110_000,
    );
    for (const n of names) expect([n, condition(n, 'Degraded')?.status]).toEqual([n, 'False']);
  }, 120_000);

  it('made only the requests its permission table allows, none refused by the rendered RBAC, and used every entry of it', () => {
    const mine = api.requests.filter((r) => r.token === TOKEN);
    const target = (r: (typeof mine)[number]) => ({ namespace: r.namespace, name: r.name, platformNamespace: PLATFORM_NAMESPACE });
    const outside = mine.filter((r) => !permissionsFor(r.group, r.resource, r.verb, target(r)).length).map((r) => `${r.verb} ${r.resource} ${r.namespace ?? ''}/${r.name ?? ''}`);
    expect([...new Set(outside)]).toEqual([]);
    // Refused only where the test deleted its binding by hand, until it made it again.
    const refused = mine.filter((r) => r.status === 403 && r.namespace !== 'mi-beta').map((r) => `${r.verb} ${r.resource} ${r.namespace ?? ''}/${r.name ?? ''}`);
    expect(refused).toEqual([]);
    const used = new Set(mine.filter((r) => r.status < 400).flatMap((r) => permissionsFor(r.group, r.resource, r.verb, target(r)).map((p) => `${OPERATOR_PERMISSIONS.indexOf(p)}|${r.verb}`)));
    const unused = OPERATOR_PERMISSIONS.flatMap((p, i) => (p.implied ? [] : p.verbs.map((v) => `${i}|${v}`)))
      .filter((k) => !used.has(k))
      .map((k) => {
        const [i, v] = k.split('|');
        const p = OPERATOR_PERMISSIONS[Number(i)]!;
        return `${v} ${p.resource} (${p.scope})`;
      });
    expect(unused).toEqual([]);
    expect(mine.filter((r) => r.verb === 'patch' && r.resource !== 'marketindexers/status').length).toBeGreaterThan(0);
    expect(FIELD_MANAGER).toBe('market-indexer-operator');
  });
});
