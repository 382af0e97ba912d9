import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { ApiObject, App, Chart, JsonPatch } from 'cdk8s';
import { parse as parseYaml } from 'yaml';
import { IMAGE } from '../../core/constants';
import { isSettingName, settingSpec } from '../../core/config/settings';
import { PLATFORM_DEFAULTS, TENANT_DEFAULTS } from '../../cdk8s/lib/defaults';
import { CHILD_KINDS } from '../../cdk8s/lib/kinds';
import { clusterRoleName, rulesOf, tenantClusterRoleName } from '../../cdk8s/lib/operator-permissions';
import { KitInputError } from '../../cdk8s/lib/resolve';
import { checksumOf } from '../../cdk8s/lib/settings-env';
import { headerProxies } from '../../server/http/jurisdiction';
import { MarketIndexerTenant } from '../../cdk8s/lib/tenant';
import { LOAD_TEST_SCRIPTS, type EnvironmentInput } from '../../cdk8s/lib/values';
import { K6_TREND_STATS } from '../../observability/grafana/k6';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { DASHBOARDS } from '../../observability/grafana/dashboards';
import { environmentArb, TRUST_POLICY as POLICY, TRUST_REFUSALS } from '../support/kit-arbitraries';
import { CHART, ENVIRONMENT_NAMES, keyOf, restrictedPodProblems, ROOT, schemaProblems, type Manifest } from '../support/kit';

type Container = {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  readinessProbe?: { httpGet?: { port: string | number } };
  livenessProbe?: { httpGet?: { port: string | number } };
  startupProbe?: { httpGet?: { port: string | number } };
};
type DeploymentLike = Manifest & {
  spec: {
    strategy?: { rollingUpdate?: { maxUnavailable?: number | string } };
    template: {
      spec: PodSpec & {
        terminationGracePeriodSeconds: number;
        topologySpreadConstraints?: { topologyKey: string }[];
        containers: (Container & { lifecycle?: { preStop?: { sleep?: { seconds: number } } } })[];
      };
    };
  };
};
type PodSpec = { containers: Container[]; initContainers?: Container[]; securityContext?: Record<string, unknown>; automountServiceAccountToken?: boolean };

const synth = (env: EnvironmentInput) => synthEnvironment(env, 'test environment');
const objectsOf = (env: EnvironmentInput) => synth(env).flatMap((f) => f.objects as Manifest[]);
const tenantObjectsOf = (env: EnvironmentInput) => synth(env).filter((f) => f.tenant).flatMap((f) => f.objects as Manifest[]);
const platformObjectsOf = (env: EnvironmentInput) => synth(env).find((f) => f.name === 'platform.yaml')!.objects as Manifest[];
const podSpecOf = (o: Manifest) => (o as { spec?: { template?: { spec?: PodSpec } } }).spec?.template?.spec;
const repository = TENANT_DEFAULTS.image.repository;
const isServiceImage = (c: Container) => c.image.startsWith(`${repository}:`);

/** Every rule the kit promises, checked on a rendered environment; returns what is broken. */
function ruleViolations(env: EnvironmentInput, objects: Manifest[]): string[] {
  const v: string[] = [];
  const tenants = Object.keys(env.tenants);
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));

  for (const o of objects) {
    v.push(...schemaProblems(o));
    const tenant = o.metadata.labels?.['marketindexer.dev/tenant'];
    if (!tenant || !tenants.includes(tenant)) v.push(`${keyOf(o)}: tenant label ${tenant}`);
    // Isolation: every object of a tenant lives in that tenant's namespace (or is it).
    const ns = o.kind === 'Namespace' ? o.metadata.name : o.metadata.namespace;
    if (ns !== `mi-${tenant}`) v.push(`${keyOf(o)}: outside its tenant's namespace`);

    const pod = podSpecOf(o);
    if (pod) {
      v.push(...restrictedPodProblems(keyOf(o), pod));
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        if (!isServiceImage(c)) continue;
        for (const e of c.env ?? []) {
          if (!isSettingName(e.name)) v.push(`${keyOf(o)}/${c.name}: ${e.name} is not a setting`);
          else if (settingSpec(e.name).secret && (e.value !== undefined || !e.valueFrom?.secretKeyRef)) v.push(`${keyOf(o)}/${c.name}: literal ${e.name}`);
        }
        for (const from of c.envFrom ?? []) {
          const cm = configMaps.get(`${o.metadata.namespace}/${from.configMapRef?.name}`);
          if (!cm) v.push(`${keyOf(o)}/${c.name}: missing ConfigMap`);
          for (const key of Object.keys((cm?.data as Record<string, string>) ?? {})) {
            if (!isSettingName(key) || settingSpec(key).secret) v.push(`${keyOf(o)}: ConfigMap key ${key}`);
          }
        }
      }
      for (const c of pod.containers.filter(isServiceImage)) {
        const declared = new Set((c.ports ?? []).flatMap((p) => [p.name, p.containerPort]));
        for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
          const port = c[probe]?.httpGet?.port;
          if (port === undefined || !declared.has(port)) v.push(`${keyOf(o)}/${c.name}: ${probe} not on a declared port`);
        }
      }
      const annotations = (o as unknown as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }).spec.template.metadata.annotations;
      const cmName = pod.containers.find(isServiceImage)?.envFrom?.[0]?.configMapRef?.name;
      if (cmName) {
        const data = configMaps.get(`${o.metadata.namespace}/${cmName}`)?.data as Record<string, string>;
        if (annotations?.['checksum/settings'] !== checksumOf(data)) v.push(`${keyOf(o)}: checksum is not that of ${cmName}`);
      }
    }
  }

  for (const tenant of tenants) {
    const own = objects.filter((o) => o.metadata.labels?.['marketindexer.dev/tenant'] === tenant);
    for (const d of own.filter((o) => o.kind === 'Deployment') as unknown as DeploymentLike[]) {
      const where = `${tenant} ${d.metadata.name}`;
      // Rollouts never drop below the desired count, and replicas spread over zones and nodes.
      if (String(d.spec.strategy?.rollingUpdate?.maxUnavailable) !== '0') v.push(`${where}: may go below the desired count`);
      const keys = (d.spec.template.spec.topologySpreadConstraints ?? []).map((t) => t.topologyKey).sort();
      if (keys.join() !== 'kubernetes.io/hostname,topology.kubernetes.io/zone') v.push(`${where}: spread ${keys.join()}`);
    }
    const apiDeployment = own.find((o) => o.kind === 'Deployment' && o.metadata.name === 'market-indexer-api') as unknown as DeploymentLike | undefined;
    const apiSettings = own.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'market-indexer-api')?.data as Record<string, string> | undefined;
    if (apiDeployment && apiSettings) {
      // Kubernetes waits longer than the API's own drain (SHUTDOWN_GRACE_MS) plus the preStop pause.
      const drainMs = Number(apiSettings.SHUTDOWN_GRACE_MS ?? settingSpec('SHUTDOWN_GRACE_MS').default);
      const pod = apiDeployment.spec.template.spec;
      const preStop = pod.containers[0]!.lifecycle?.preStop?.sleep?.seconds ?? 0;
      if (!(pod.terminationGracePeriodSeconds * 1000 > drainMs + preStop * 1000)) v.push(`${tenant}: termination grace ${pod.terminationGracePeriodSeconds}s vs drain ${drainMs}ms`);
      const ingress = own.find((o) => o.kind === 'Ingress') as unknown as { spec: { rules: { host: string }[] } } | undefined;
      if (ingress && (apiSettings.TRUST_PROXY === undefined || !apiSettings.PUBLIC_HOSTS?.split(',').includes(ingress.spec.rules[0]!.host))) {
        v.push(`${tenant}: ingress without TRUST_PROXY and its host in PUBLIC_HOSTS`);
      }
      // Addresses, never a hop count or `true`: with those Express believes whoever connects (D-230).
      if (apiSettings.TRUST_PROXY !== undefined && /^(true|[0-9]*[1-9][0-9]*)$/.test(apiSettings.TRUST_PROXY)) v.push(`${tenant}: TRUST_PROXY ${apiSettings.TRUST_PROXY} names no address`);
      // A jurisdiction policy is rendered only where the API can believe a country (D-192).
      if (apiSettings.GEO_BLOCKED_COUNTRIES || apiSettings.ATTESTATION_REQUIRED_COUNTRIES) {
        const proxies = apiSettings.TRUST_PROXY && headerProxies(apiSettings.TRUST_PROXY);
        if (!proxies || !apiSettings.GEO_COUNTRY_HEADER) v.push(`${tenant}: a jurisdiction policy the API would refuse to start with`);
      }
      if (!ingress && apiSettings.TRUST_PROXY !== undefined && env.tenants[tenant]?.settings?.TRUST_PROXY === undefined) v.push(`${tenant}: trusts a proxy without an ingress`);
    }
    const api = own.find((o) => o.kind === 'Deployment' && o.metadata.name === 'market-indexer-api') as { spec: { replicas?: number } } | undefined;
    const hpa = own.some((o) => o.kind === 'HorizontalPodAutoscaler');
    if (!api) v.push(`${tenant}: no API Deployment`);
    else if (hpa === (api.spec.replicas !== undefined)) v.push(`${tenant}: HPA ${hpa} with replicas ${api.spec.replicas}`);
    const policies = own.filter((o) => o.kind === 'NetworkPolicy');
    const deny = policies.find((o) => o.metadata.name === 'default-deny') as { spec: { podSelector: object; policyTypes: string[] } } | undefined;
    if (policies.length && (!deny || Object.keys(deny.spec.podSelector).length || deny.spec.policyTypes.join() !== 'Ingress,Egress')) {
      v.push(`${tenant}: network policies without a default deny`);
    }
    if (!own.some((o) => o.kind === 'Namespace')) v.push(`${tenant}: no namespace`);
  }
  return v;
}

describe('cdk8s kit: synthesized environments', () => {
  it.each(ENVIRONMENT_NAMES)('%s: every object is valid Kubernetes 1.33 and keeps every rule of the kit', (name) => {
    const env = ENVIRONMENTS[name]!;
    const objects = tenantObjectsOf(env);
    expect(objects.length).toBeGreaterThan(15 * Object.keys(env.tenants).length);
    expect(ruleViolations(env, objects)).toEqual([]);
    const platform = platformObjectsOf(env);
    expect(platform.map(keyOf)).toContain('Namespace -/market-indexer-system');
    for (const o of platform) {
      expect(schemaProblems(o)).toEqual([]);
      // The CRD is the generated file as it is; everything else carries the environment.
      if (o.kind !== 'CustomResourceDefinition') expect([keyOf(o), o.metadata.labels?.['marketindexer.dev/environment']]).toEqual([keyOf(o), env.environment]);
      expect(o.metadata.labels?.['marketindexer.dev/tenant']).toBeUndefined();
    }
  });

  it('dev has one tenant, staging and prod at least two, each in a file of its own', () => {
    expect(synth(ENVIRONMENTS.dev!).map((f) => f.name)).toEqual(['platform.yaml', 'demo.yaml']);
    for (const name of ['staging', 'prod']) {
      const files = synth(ENVIRONMENTS[name]!).filter((f) => f.tenant);
      expect(files.length).toBeGreaterThanOrEqual(2);
      for (const f of files) expect(new Set(f.objects.map((o) => (o as Manifest).metadata.labels?.['marketindexer.dev/tenant']))).toEqual(new Set([f.tenant]));
    }
  });

  it('puts Secrets with data only in dev, where it runs its own stores', () => {
    expect(objectsOf(ENVIRONMENTS.dev!).filter((o) => o.kind === 'Secret').length).toBeGreaterThan(0);
    for (const name of ['staging', 'prod']) expect(objectsOf(ENVIRONMENTS[name]!).filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it('keeps every rule for any environment (property)', () => {
    fc.assert(
      fc.property(environmentArb, (env) => {
        expect(ruleViolations(env, tenantObjectsOf(env))).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });

  it('the schema check is not vacuous: it refuses replicas "two", a bad port and a missing selector', () => {
    const deployment = objectsOf(ENVIRONMENTS.prod!).find((o) => o.kind === 'Deployment')!;
    const broken = (f: (d: { spec: Record<string, unknown> & { template: { spec: PodSpec } } }) => void) => {
      const d = structuredClone(deployment) as unknown as { spec: Record<string, unknown> & { template: { spec: PodSpec } } };
      f(d);
      return schemaProblems(d as unknown as Manifest).join('\n');
    };
    expect(broken((d) => (d.spec.replicas = 'two'))).toContain('spec/replicas must be integer');
    expect(broken((d) => ((d.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'http'))).toContain('containerPort must be integer');
    expect(broken((d) => delete d.spec.selector)).toContain('must have required property selector');
    const monitor = objectsOf(ENVIRONMENTS.prod!).find((o) => o.kind === 'ServiceMonitor')!;
    const m = structuredClone(monitor) as unknown as { spec: { endpoints: { interval: string }[] } };
    m.spec.endpoints[0]!.interval = 'soon';
    expect(schemaProblems(m as unknown as Manifest).join('\n')).toMatch(/interval/);
  });
});

describe('cdk8s kit: the operator in the platform part', () => {
  const platform = platformObjectsOf(ENVIRONMENTS.prod!);
  const find = (kind: string) => platform.find((o) => o.kind === kind) as unknown as Manifest & Record<string, any>;

  it("grants exactly the operator's permission table, with no cluster-wide right on Secrets or workloads (issue 31, finding 7)", () => {
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
    expect(broad).toEqual([]);
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

  it('lists among the kinds it manages every kind a tenant renders (CHILD_KINDS)', () => {
    const full = {
      environment: 'x',
      tenants: {
        t: {
          source: { type: 'rpc', rpcUrlSecretRef: { name: 'rpc', key: 'url' }, webhookSecretRef: { name: 'a', key: 'b' } },
          devStores: { enabled: true },
          api: { autoscaling: { enabled: true }, ingress: { enabled: true, host: 't.example', trustedProxies: ['10.0.0.0/8'] } },
          networkPolicy: { egress: { rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } },
          quota: { persistentVolumeClaims: 2 },
        },
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

describe('cdk8s kit: settings', () => {
  const deploymentChecksums = (env: EnvironmentInput) =>
    Object.fromEntries(
      tenantObjectsOf(env)
        .filter((o) => o.kind === 'Deployment')
        .map((o) => [keyOf(o), (o as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template.metadata.annotations['checksum/settings']]),
    );

  it("rolls exactly the pods of the process a changed setting is read by", () => {
    const base = ENVIRONMENTS.staging!;
    const before = deploymentChecksums(base);
    const withApi = deploymentChecksums({ ...base, settings: { ...base.settings, RATE_LIMIT_WINDOW_MS: 30_000 } });
    const withIndexer = deploymentChecksums({ ...base, settings: { ...base.settings, INDEXER_CACHE_ROWS: 5_000 } });
    const withBoth = deploymentChecksums({ ...base, settings: { ...base.settings, LOG_LEVEL: 'warn' } });
    for (const [key, sum] of Object.entries(before)) {
      const isApi = key.includes('market-indexer-api');
      expect(withApi[key] !== sum).toBe(isApi);
      expect(withIndexer[key] !== sum).toBe(!isApi);
      // beta sets LOG_LEVEL itself, so only alpha's pods change.
      expect(withBoth[key] !== sum).toBe(key.includes('mi-alpha/'));
    }
  });

  it('refuses a container variable outside the catalog, and a secret setting given as a literal, naming them', () => {
    const render = (patch: (o: ApiObject) => void) => {
      const app = new App();
      const chart = new Chart(app, 't');
      const tenant = new MarketIndexerTenant(chart, 'tenant', { tenant: 'alpha', environment: 'test', ...ENVIRONMENTS.staging!.tenants.alpha, ...stagingLayer() });
      patch(tenant.node.findAll().find((c): c is ApiObject => c instanceof ApiObject && c.kind === 'Deployment' && c.name === 'market-indexer-api')!);
      return () => app.synthYaml();
    };
    expect(render((o) => o.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/0/env/-', { name: 'FEATURE_FLAG_X', value: '1' })))).toThrow(
      /container "api" of Deployment mi-alpha\/market-indexer-api sets FEATURE_FLAG_X, which is not a setting of core\/config\/settings.ts/,
    );
    expect(render((o) => o.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/0/env/-', { name: 'REDIS_URL', value: 'redis://x' })))).toThrow(
      /sets the secret setting REDIS_URL from a literal value; use a secretKeyRef/,
    );
    expect(render(() => {})).not.toThrow();
  });
});

describe('cdk8s kit: the interface variant (D-159)', () => {
  const configMapsOf = (env: EnvironmentInput) =>
    Object.fromEntries(
      tenantObjectsOf(env)
        .filter((o) => o.kind === 'ConfigMap' && /market-indexer-(api|indexer)$/.test(o.metadata.name))
        .map((o) => [keyOf(o), (o as unknown as { data: Record<string, string> }).data]),
    );
  const withVariant = (variant: unknown, tenant = 'beta') => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants[tenant].variant = variant;
    return env as EnvironmentInput;
  };

  it("gives a legacy tenant's API pods API_VARIANT=legacy, and only its API's", () => {
    const objects = tenantObjectsOf(withVariant('legacy'));
    const maps = configMapsOf(withVariant('legacy'));
    expect(maps['ConfigMap mi-beta/market-indexer-api']!.API_VARIANT).toBe('legacy');
    expect(maps['ConfigMap mi-alpha/market-indexer-api']!.API_VARIANT).toBe('v1');
    expect(maps['ConfigMap mi-beta/market-indexer-indexer']!.API_VARIANT).toBeUndefined();
    // The API container reads exactly that ConfigMap, and nothing in its env overrides it.
    const api = objects.find((o) => keyOf(o) === 'Deployment mi-beta/market-indexer-api') as DeploymentLike;
    const container = api.spec.template.spec.containers.find((c) => c.name === 'api')!;
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'market-indexer-api' } }]);
    expect((container.env ?? []).map((e) => e.name)).not.toContain('API_VARIANT');
  });

  it('keeps v1 the default, and rolls only the API pods of the tenant that switches', () => {
    const base = ENVIRONMENTS.staging!;
    expect(TENANT_DEFAULTS.variant).toBe('v1');
    for (const [key, data] of Object.entries(configMapsOf(base))) expect([key, data.API_VARIANT]).toEqual([key, key.endsWith('-api') ? 'v1' : undefined]);
    const sums = (env: EnvironmentInput) =>
      Object.fromEntries(
        tenantObjectsOf(env)
          .filter((o) => o.kind === 'Deployment')
          .map((o) => [keyOf(o), (o as any).spec.template.metadata.annotations['checksum/settings'] as string]),
      );
    const before = sums(base);
    const after = sums(withVariant('legacy'));
    for (const [key, sum] of Object.entries(before)) expect([key, after[key] !== sum]).toEqual([key, key === 'Deployment mi-beta/market-indexer-api']);
  });

  it('refuses an unknown variant, and API_VARIANT among settings (the variant field sets it), naming the field', () => {
    const problems = (env: EnvironmentInput) => {
      try {
        synthEnvironment(env, 'env.yaml');
      } catch (err) {
        expect(err).toBeInstanceOf(KitInputError);
        return (err as KitInputError).problems;
      }
      throw new Error('accepted');
    };
    expect(problems(withVariant('v2'))).toContain('tenants.beta.variant: must be one of "v1", "legacy"');
    expect(problems({ ...ENVIRONMENTS.staging!, variant: 'LEGACY' } as never)).toContain('variant: must be one of "v1", "legacy"');
    expect(problems({ ...ENVIRONMENTS.staging!, settings: { API_VARIANT: 'legacy' } } as never)).toContain('settings.API_VARIANT: unknown field');
    // The construct's props are checked the same way (the operator renders through them).
    const app = new App();
    expect(() => new MarketIndexerTenant(new Chart(app, 't'), 'tenant', { tenant: 'alpha', environment: 'test', variant: 'v2' as never })).toThrow(
      /variant: must be one of "v1", "legacy"/,
    );
  });
});

/** The staging environment's common layer, as MarketIndexerTenant props. */
function stagingLayer() {
  const { environment: _e, tenants: _t, ...layer } = ENVIRONMENTS.staging!;
  return { baseLayers: [layer] };
}

describe('cdk8s kit: whom the API believes (TRUST_PROXY, D-230)', () => {
  const apiSettingsOf = (env: EnvironmentInput, tenant: string) =>
    (tenantObjectsOf(env).find((o) => keyOf(o) === `ConfigMap mi-${tenant}/market-indexer-api`) as unknown as { data: Record<string, string> }).data;

  it("renders the ingress controller's addresses as TRUST_PROXY, and none without an ingress", () => {
    expect(apiSettingsOf(ENVIRONMENTS.staging!, 'alpha').TRUST_PROXY).toBe('10.16.0.0/14');
    expect(apiSettingsOf(ENVIRONMENTS.prod!, 'gamma').TRUST_PROXY).toBe('10.24.0.0/14');
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants.alpha.api.ingress.trustedProxies = ['10.16.0.0/14', 'fd00:10::/64', '192.0.2.7'];
    env.tenants.beta.api.ingress.enabled = false;
    expect(apiSettingsOf(env, 'alpha').TRUST_PROXY).toBe('10.16.0.0/14,fd00:10::/64,192.0.2.7');
    expect(apiSettingsOf(env, 'beta').TRUST_PROXY).toBeUndefined();
    // A tenant's own TRUST_PROXY (addresses) wins, as every setting does, and then no list is needed.
    env.tenants.alpha.api.ingress.trustedProxies = [];
    env.tenants.alpha.settings = { TRUST_PROXY: '10.0.0.0/8' };
    expect(apiSettingsOf(env, 'alpha').TRUST_PROXY).toBe('10.0.0.0/8');
  });

  it('renders a jurisdiction policy where the API can believe the country header: from the listed proxies only', () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants.alpha.settings = POLICY;
    const data = apiSettingsOf(env, 'alpha');
    expect(data).toMatchObject({ ...POLICY, TRUST_PROXY: '10.16.0.0/14' });
    const believed = headerProxies(data.TRUST_PROXY!)!;
    expect([believed('10.17.3.4'), believed('10.20.0.1'), believed('203.0.113.9')]).toEqual([true, false, false]);
  });

  it("refuses an address that is not one, in the schema's words", () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.api.ingress.trustedProxies = ['ingress-nginx'];
    expect(() => synth(env)).toThrow(/api\.ingress\.trustedProxies\.0: must match pattern/);
  });
});

describe('cdk8s kit: bad environments', () => {
  const problemsOf = (input: unknown): string[] => {
    try {
      synthEnvironment(input, 'env.yaml');
    } catch (err) {
      expect(err).toBeInstanceOf(KitInputError);
      return (err as KitInputError).problems;
    }
    throw new Error('accepted');
  };
  const base = () => structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput & Record<string, unknown>;

  it.each([
    ['a misspelt field', (e: any) => (e.tenants.alpha.api.replica = 2), 'tenants.alpha.api.replica: unknown field'],
    ['a wrong type', (e: any) => (e.api = { replicas: 'two' }), 'api.replicas: must be integer'],
    ['a value out of range', (e: any) => (e.api = { replicas: 0 }), 'api.replicas: must be >= 1'],
    ['a bad enum', (e: any) => (e.tenants.beta.source.type = 'grpc'), 'tenants.beta.source.type: must be one of "rpc", "webhook", "simulator"'],
    ['a bad tenant id', (e: any) => (e.tenants.Bad_Tenant = {}), 'tenants.Bad_Tenant: not a tenant id (a lowercase DNS label of at most 40 characters)'],
    ['a secret in settings', (e: any) => (e.settings = { DATABASE_URL: 'postgres://u:p@db/x' }), 'settings.DATABASE_URL: unknown field'],
    ['a bad setting value', (e: any) => (e.settings = { LOG_LEVEL: 'loud' }), 'settings.LOG_LEVEL: must be one of'],
    ['an ingress without a host', (e: any) => (e.tenants.alpha.api.ingress.host = ''), 'api.ingress.host: required when api.ingress.enabled is true'],
    ['autoscaling bounds upside down', (e: any) => (e.api = { autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 3 } }), 'api.autoscaling.minReplicas must not exceed api.autoscaling.maxReplicas'],
    ['no way to the database', (e: any) => (e.networkPolicy.egress.database.ipBlocks = []), 'networkPolicy.egress.database.ipBlocks: required'],
    ['a webhook source with a standby', (e: any) => (e.tenants.beta.source = { type: 'webhook', webhookSecretRef: { name: 's', key: 'k' } }, e.tenants.beta.indexer.replicas = 2), 'indexer.replicas must be 1 when source.type is webhook'],
    ['requests above limits', (e: any) => (e.api = { resources: { requests: { cpu: '2' } } }), 'api.resources.requests.cpu must not exceed api.resources.limits.cpu'],
    ['a quota too small for a rollout', (e: any) => (e.quota = { pods: 5 }), 'quota.pods (5) is below the 6 the tenant needs'],
    ...TRUST_REFUSALS,
  ])('names the field of %s', (_what, mutate, message) => {
    const e = base();
    mutate(e);
    expect(problemsOf(e).join('\n')).toContain(message);
  });

  it('reports every problem at once', () => {
    const e = base() as any;
    e.api = { replicas: 'two' };
    e.tenants.alpha.api.replica = 2;
    expect(problemsOf(e)).toEqual(expect.arrayContaining(['api.replicas: must be integer', 'tenants.alpha.api.replica: unknown field']));
  });
});

describe('npm run synth', () => {
  const synthCli = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'cdk8s/main.ts', ...args], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH } });

  it('writes one file per tenant and clears what a removed tenant left', () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'synth-'));
    writeFileSync(path.join(out, 'removed-tenant.yaml'), 'stale');
    const res = synthCli(['--env', 'prod', '--out', out]);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['alpha.yaml', 'beta.yaml', 'gamma.yaml', 'platform.yaml']);
    expect(readFileSync(path.join(out, 'beta.yaml'), 'utf8')).toBe(synth(ENVIRONMENTS.prod!).find((f) => f.tenant === 'beta')!.yaml);
  });

  it('answers a bad environment file with one line per problem and no stack trace', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'synth-'));
    const file = path.join(dir, 'broken.yaml');
    writeFileSync(file, 'environment: qa\napi: {replicas: two}\ntenants: {alpha: {sourse: {}}}\n');
    const res = synthCli(['--env-file', file, '--out', dir]);
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim().split('\n')).toEqual([`${file}:`, '  api.replicas: must be integer', '  tenants.alpha.sourse: unknown field']);
  });

  it('refuses an unknown environment and bad options with usage', () => {
    const res = synthCli(['--env', 'qa']);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('unknown environment "qa": dev, staging, prod');
    expect(synthCli(['--bogus']).stderr).toContain('usage: npm run synth');
  });
});

describe('kit defaults', () => {
  it("are the Helm chart's values.yaml, field for field", () => {
    const values = parseYaml(readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const { environment, tenants, platform, ...defaults } = values;
    expect(defaults).toEqual(TENANT_DEFAULTS);
    expect(platform).toEqual(PLATFORM_DEFAULTS);
    expect(environment).toBe('default');
    expect(tenants).toEqual({});
  });

  it("agree with the Dockerfile's user and command", () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(new RegExp(`^USER ${IMAGE.uid}:${IMAGE.gid}$`, 'm'));
    expect(dockerfile).toContain(`CMD ${JSON.stringify(IMAGE.commands.api).replace(/,/g, ', ')}`);
    expect(dockerfile).toMatch(new RegExp(`^WORKDIR ${IMAGE.workingDir}$`, 'm'));
    // The image builds what `npm run build` compiles: every source folder is copied in.
    const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    for (const dir of build.include.filter((d) => !d.endsWith('.ts'))) expect([dir, dockerfile.includes(`COPY ${dir} ./${dir}`)]).toEqual([dir, true]);
  });
});
