/**
 * The platform part of an environment: the operator (its permission table, its NetworkPolicy,
 * its replicas and defaults, the kinds it manages), the dashboards as ConfigMaps for Grafana,
 * and the k6 load test (platform.loadTest).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IMAGE } from '../../../core/constants';
import { PLATFORM_DEFAULTS } from '../../../cdk8s/lib/defaults';
import { CHILD_KINDS } from '../../../cdk8s/lib/kinds';
import { CLUSTER_WATCHED_KINDS, clusterRoleName, rulesOf, tenantClusterRoleName } from '../../../cdk8s/lib/operator-permissions';
import { LOAD_TEST_SCRIPTS, type EnvironmentInput } from '../../../cdk8s/lib/values';
import { K6_TREND_STATS } from '../../../observability/grafana/k6';
import { ENVIRONMENTS } from '../../../cdk8s/environments';
import { synthEnvironment } from '../../../cdk8s/synth';
import { DASHBOARDS } from '../../../observability/grafana/dashboards';
import { ENVIRONMENT_NAMES, keyOf, ROOT, schemaProblems, type Manifest } from '../../support/kit';
import { platformObjectsOf, tenantObjectsOf } from './support';

describe('cdk8s kit: the operator in the platform part', () => {
  const platform = platformObjectsOf(ENVIRONMENTS.prod!);
  const find = (kind: string) => platform.find((o) => o.kind === kind) as unknown as Manifest & Record<string, any>;

  it("grants exactly the operator's permission table, with no cluster-wide right on Secrets and no cluster-wide write on workloads (issue 31, finding 7; D-320)", () => {
    const ns = 'market-indexer-system';
    const roles = platform.filter((o) => o.kind === 'ClusterRole') as unknown as { metadata: { name: string }; rules: { resources: string[]; verbs: string[] }[] }[];
    const clusterRole = roles.find((r) => r.metadata.name === clusterRoleName(ns))!;
    expect(clusterRole.rules).toEqual(rulesOf('cluster', ns));
    expect(roles.find((r) => r.metadata.name === tenantClusterRoleName(ns))!.rules).toEqual(rulesOf('tenant', ns));
    expect(find('Role').rules).toEqual(rulesOf('platform', ns));
    expect(find('Role').metadata.namespace).toBe(ns);
    // Bound cluster-wide: only cluster-scoped kinds, and the one bootstrap verb on rolebindings.
    const bound = platform.filter((o) => o.kind === 'ClusterRoleBinding') as unknown as { roleRef: { name: string }; subjects: unknown[] }[];
    expect(bound.map((b) => b.roleRef.name)).toEqual([clusterRoleName(ns)]);
    expect(bound[0]!.subjects).toEqual([{ kind: 'ServiceAccount', name: 'market-indexer-operator', namespace: ns }]);
    const namespacedKinds = [...CHILD_KINDS.filter((k) => k.namespaced).map((k) => k.plural), 'events', 'leases', 'pods', 'roles'];
    const broad = clusterRole.rules.flatMap((r) => r.resources.filter((res) => namespacedKinds.includes(res) || res === '*').map((res) => `${res}: ${r.verbs.join(',')}`));
    // Cluster-wide on namespaced kinds: only the read-only caches (list, watch) of what a tenant renders, never Secrets (D-320).
    expect(broad).toEqual(CLUSTER_WATCHED_KINDS.map((k) => `${k.plural}: list,watch`));
    expect(broad.some((b) => b.startsWith('secrets'))).toBe(false);
    expect(clusterRole.rules.filter((r) => r.resources.includes('rolebindings'))).toEqual([{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] }]);
    expect(clusterRole.rules.filter((r) => r.resources.includes('namespaces')).flatMap((r) => r.verbs)).toEqual(['list', 'watch', 'get', 'create']);
  });

  it("fences the operator's pods: egress to the API server, DNS and the tenants' /status port only; ingress from the scraper", () => {
    const np = platform.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'market-indexer-operator') as unknown as { spec: Record<string, any> };
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('operator');
    expect(np.spec.egress).toEqual([
      { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ protocol: 'TCP', port: 443 }, { protocol: 'TCP', port: 6443 }] },
      expect.objectContaining({ to: [expect.objectContaining({ podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } })] }),
      {
        to: [{ namespaceSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'market-indexer-operator', 'marketindexer.dev/environment': 'prod' } }, podSelector: { matchLabels: { 'app.kubernetes.io/component': 'indexer' } } }],
        ports: [{ protocol: 'TCP', port: 3001 }],
      },
    ]);
    expect(np.spec.ingress).toHaveLength(1);
  });

  it('runs leader-elected replicas with the environment\'s values for every tenant, restricted like the rest', () => {
    const d = find('Deployment');
    expect(d.spec.replicas).toBe(2);
    const pod = d.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.containers[0].command).toEqual([...IMAGE.commands.operator]);
    expect(pod.containers[0].securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const defaultsCm = platform.find((o) => o.metadata.name === 'market-indexer-operator-defaults') as unknown as { data: Record<string, string> };
    const defaults = JSON.parse(defaultsCm.data['defaults.json']!);
    // The defaults are the kit's, with prod's values over them: a MarketIndexer states the rest.
    expect(defaults.api.autoscaling).toEqual({ enabled: true, minReplicas: 3, maxReplicas: 10, targetCPUUtilizationPercentage: 70 });
    expect(defaults.tenants).toBeUndefined();
    expect(find('CustomResourceDefinition').metadata.name).toBe('marketindexers.marketindexer.dev');
  });

  it('caps its heap at half its memory limit, so sizing it for more tenants raises the cap with it (D-420)', () => {
    const commandFor = (resources: object) => {
      const d = platformObjectsOf({ ...ENVIRONMENTS.prod!, platform: { operator: { resources } } }).find((o) => o.kind === 'Deployment') as unknown as Manifest & Record<string, any>;
      return d.spec.template.spec.containers[0].command as string[];
    };
    // The default limit (512Mi) is what the image's own command was sized for.
    expect(PLATFORM_DEFAULTS.operator.resources.limits.memory).toBe('512Mi');
    expect(commandFor({})).toEqual([...IMAGE.commands.operator]);
    expect(commandFor({ requests: { memory: '1Gi' }, limits: { memory: '1.5Gi' } })).toEqual(['node', '--max-old-space-size=768', 'dist/operator/main.js']);
    expect(commandFor({ limits: { memory: '2G' } })).toEqual(['node', '--max-old-space-size=953', 'dist/operator/main.js']);
  });

  it("holds on CloudNativePG Clusters only what applying and watching them takes: never delete, never read one it did not label (D-505)", () => {
    const on = (scope: 'cluster' | 'tenant') => rulesOf(scope, 'market-indexer-system').filter((r) => r.apiGroups.includes('postgresql.cnpg.io'));
    expect(on('cluster')).toEqual([{ apiGroups: ['postgresql.cnpg.io'], resources: ['clusters'], verbs: ['list', 'watch'] }]);
    expect(on('tenant')).toEqual([{ apiGroups: ['postgresql.cnpg.io'], resources: ['clusters'], verbs: ['patch'] }]);
  });

  it('lists among the kinds it manages every kind a tenant renders (CHILD_KINDS)', () => {
    const full = {
      environment: 'x',
      tenants: {
        t: {
          source: { type: 'rpc', rpcUrlSecretRef: { name: 'rpc', key: 'url' }, webhookSecretRef: { name: 'a', key: 'b' } },
          devStores: { enabled: true },
          api: {
            autoscaling: { enabled: true },
            ingress: { enabled: true, host: 't.example', trustedProxies: ['10.0.0.0/8'] },
            httpRoute: { parentRefs: [{ name: 'public' }], hostnames: ['t.example'], trustedProxies: ['10.0.0.0/8'] },
          },
          networkPolicy: { egress: { rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } },
          quota: { persistentVolumeClaims: 2 },
        },
        // A CloudNativePG database cannot sit beside the dev stores: a second tenant has it.
        db: { database: { cloudnativepg: { enabled: true } }, networkPolicy: { enabled: false } },
      },
    } as unknown as EnvironmentInput;
    const kinds = new Set(tenantObjectsOf(full).map((o) => `${o.apiVersion} ${o.kind}`));
    expect([...kinds].sort()).toEqual(CHILD_KINDS.map((k) => `${k.apiVersion} ${k.kind}`).sort());
  });
});

describe('cdk8s kit: dashboards', () => {
  it('ships each dashboard of observability/grafana as a ConfigMap for the Grafana sidecar, in the namespace asked for', () => {
    const maps = platformObjectsOf(ENVIRONMENTS.prod!).filter((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('market-indexer-dashboard-')) as (Manifest & { data: Record<string, string> })[];
    expect(maps.map((m) => m.metadata.name).sort()).toEqual(DASHBOARDS.map((d) => `market-indexer-dashboard-${d.slug}`).sort());
    for (const d of DASHBOARDS) {
      const m = maps.find((x) => x.metadata.name === `market-indexer-dashboard-${d.slug}`)!;
      expect(m.metadata.namespace).toBe('market-indexer-system');
      expect(m.metadata.labels).toMatchObject({ grafana_dashboard: '1', 'app.kubernetes.io/component': 'dashboards', 'marketindexer.dev/environment': 'prod' });
      // The committed JSON, byte for byte: what Grafana imports is what is reviewed.
      expect(m.data[`${d.slug}.json`]).toBe(readFileSync(path.join(ROOT, 'observability/grafana/dashboards', `${d.slug}.json`), 'utf8'));
      expect(JSON.parse(m.data[`${d.slug}.json`]!).uid).toMatch(/^market-indexer-/);
    }
    const moved = platformObjectsOf({ ...ENVIRONMENTS.prod!, platform: { dashboards: { namespace: 'monitoring', labels: { team: 'sre' }, annotations: { grafana_folder: 'Markets' } } } });
    for (const m of moved.filter((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('market-indexer-dashboard-'))) {
      expect(m.metadata.namespace).toBe('monitoring');
      expect(m.metadata.labels).toMatchObject({ grafana_dashboard: '1', team: 'sre' });
      expect(m.metadata.annotations).toEqual({ grafana_folder: 'Markets' });
    }
    expect(platformObjectsOf({ ...ENVIRONMENTS.prod!, platform: { dashboards: { enabled: false }, operator: { enabled: false } } }).map(keyOf)).toEqual(['Namespace -/market-indexer-system']);
  });
});

describe('cdk8s kit: load test (platform.loadTest)', () => {
  const withLoadTest = (loadTest: Record<string, unknown>) => platformObjectsOf({ ...ENVIRONMENTS.prod!, platform: { loadTest: { enabled: true, tenant: 'beta', ...loadTest } } });

  it('is off by default: no TestRun in any environment', () => {
    for (const env of ENVIRONMENT_NAMES) expect(synthEnvironment(ENVIRONMENTS[env]!, env).flatMap((f) => f.objects as Manifest[]).filter((o) => o.kind === 'TestRun')).toEqual([]);
  });

  it("runs the chosen script against the tenant's API Service, results to Prometheus, the bundles from the chart", () => {
    const objects = withLoadTest({ script: 'load', profile: 'stress', rate: 80, parallelism: 4 });
    const run = objects.find((o) => o.kind === 'TestRun') as Manifest & { spec: any };
    expect(run.metadata).toMatchObject({ name: 'market-indexer-load-test', namespace: 'mi-beta' });
    expect(run.spec.parallelism).toBe(4);
    expect(run.spec.script).toEqual({ configMap: { name: 'market-indexer-k6-scripts', file: 'load.js' } });
    expect(run.spec.arguments).toBe(
      '-e BASE_URL=http://market-indexer-api.mi-beta.svc:80 -e TENANT=beta -e RUN_ID=prod-beta-load -e PROFILE=stress -e RATE=80 --tag testid=prod-beta-load -o experimental-prometheus-rw',
    );
    expect(run.spec.runner.env).toEqual([
      { name: 'K6_PROMETHEUS_RW_SERVER_URL', value: PLATFORM_DEFAULTS.loadTest.prometheusRemoteWriteUrl },
      { name: 'K6_PROMETHEUS_RW_TREND_STATS', value: K6_TREND_STATS },
    ]);
    // The namespace enforces the restricted profile: every pod of the test meets it.
    for (const part of ['runner', 'initializer', 'starter']) {
      expect(run.spec[part].securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(run.spec[part].containerSecurityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    }
    expect(schemaProblems(run)).toEqual([]);
    const scripts = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'market-indexer-k6-scripts') as Manifest & { data: Record<string, string> };
    // Every script and the shared module they import (lib.js), as the chart carries them.
    expect(Object.keys(scripts.data).sort()).toEqual(['lib', ...LOAD_TEST_SCRIPTS].map((x) => `${x}.js`).sort());
    for (const f of Object.keys(scripts.data)) expect(scripts.data[f]).toBe(readFileSync(path.join(ROOT, 'charts/market-indexer/files/k6', f), 'utf8'));
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'market-indexer-load-test') as Manifest & { spec: any };
    expect(policy.spec.egress.at(-1)).toEqual({ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ protocol: 'TCP', port: 9090 }] });
  });

  it('without a remote-write URL, writes nowhere and opens no way to Prometheus', () => {
    const run = withLoadTest({ prometheusRemoteWriteUrl: '' }).find((o) => o.kind === 'TestRun') as Manifest & { spec: any };
    expect(run.spec.arguments).not.toContain('experimental-prometheus-rw');
    expect(run.spec.runner.env ?? []).toEqual([]);
  });

  it('refuses a tenant the environment lacks', () => {
    expect(() => withLoadTest({ tenant: 'nobody' })).toThrow(/platform.loadTest.tenant must name one of this environment's tenants \(alpha, beta, gamma\), got "nobody"/);
  });
});

