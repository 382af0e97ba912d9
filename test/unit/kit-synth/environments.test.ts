/**
 * The kit's synthesized environments and the rules every one keeps (validity, isolation,
 * restricted pods, settings from the catalog, rollouts, probes, the API's drain and trust), for
 * the shipped environments and any the arbitraries make; bad environments refused naming the
 * field; `npm run synth` as a command; the kit's defaults against the chart and the Dockerfile.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { IMAGE } from '../../../core/constants';
import { isSettingName, settingSpec } from '../../../core/config/settings';
import { PLATFORM_DEFAULTS, TENANT_DEFAULTS } from '../../../cdk8s/lib/defaults';
import { checksumOf } from '../../../cdk8s/lib/settings-env';
import { headerProxies } from '../../../server/http/jurisdiction';
import type { EnvironmentInput } from '../../../cdk8s/lib/values';
import { ENVIRONMENTS } from '../../../cdk8s/environments';
import { synthEnvironment } from '../../../cdk8s/synth';
import { environmentArb, TRUST_REFUSALS } from '../../support/kit-arbitraries';
import { CHART, ENVIRONMENT_NAMES, keyOf, restrictedPodProblems, ROOT, schemaProblems, type Manifest } from '../../support/kit';
import { objectsOf, platformObjectsOf, problemsOf, synth, tenantObjectsOf, type Container, type DeploymentLike, type PodSpec } from './support';

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
      // The route's host names are the API's PUBLIC_HOSTS, its Gateway's proxies its TRUST_PROXY (D-480).
      const route = own.find((o) => o.kind === 'HTTPRoute') as unknown as { spec: { hostnames: string[]; rules: { timeouts?: { request?: string } }[] } } | undefined;
      if (route && (apiSettings.TRUST_PROXY === undefined || !route.spec.hostnames.every((h) => apiSettings.PUBLIC_HOSTS?.split(',').includes(h)))) {
        v.push(`${tenant}: route without TRUST_PROXY and its hosts in PUBLIC_HOSTS`);
      }
      // Addresses, never a hop count or `true`: with those Express believes whoever connects (D-230).
      if (apiSettings.TRUST_PROXY !== undefined && /^(true|[0-9]*[1-9][0-9]*)$/.test(apiSettings.TRUST_PROXY)) v.push(`${tenant}: TRUST_PROXY ${apiSettings.TRUST_PROXY} names no address`);
      // A jurisdiction policy is rendered only where the API can believe a country (D-192).
      if (apiSettings.GEO_BLOCKED_COUNTRIES || apiSettings.ATTESTATION_REQUIRED_COUNTRIES) {
        const proxies = apiSettings.TRUST_PROXY && headerProxies(apiSettings.TRUST_PROXY);
        if (!proxies || !apiSettings.GEO_COUNTRY_HEADER) v.push(`${tenant}: a jurisdiction policy the API would refuse to start with`);
      }
      if (!ingress && !route && apiSettings.TRUST_PROXY !== undefined && env.tenants[tenant]?.settings?.TRUST_PROXY === undefined) v.push(`${tenant}: trusts a proxy without an edge`);
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


describe('cdk8s kit: bad environments', () => {
  const base = () => structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput & Record<string, unknown>;

  it.each([
    ['a misspelt field', (e: any) => (e.tenants.alpha.api.replica = 2), 'tenants.alpha.api.replica: unknown field'],
    ['a wrong type', (e: any) => (e.api = { replicas: 'two' }), 'api.replicas: must be integer'],
    ['a value out of range', (e: any) => (e.api = { replicas: 0 }), 'api.replicas: must be >= 1'],
    ['a bad enum', (e: any) => (e.tenants.beta.source.type = 'grpc'), 'tenants.beta.source.type: must be one of "rpc", "webhook", "simulator"'],
    ['a bad tenant id', (e: any) => (e.tenants.Bad_Tenant = {}), 'tenants.Bad_Tenant: not a tenant id (a lowercase DNS label of at most 40 characters)'],
    ['a secret in settings', (e: any) => (e.settings = { DATABASE_URL: 'postgres://u:p@db/x' }), 'settings.DATABASE_URL: unknown field'],
    ['a bad setting value', (e: any) => (e.settings = { LOG_LEVEL: 'loud' }), 'settings.LOG_LEVEL: must be one of'],
    ['an ingress without a host', (e: any) => (e.tenants.alpha.api.ingress = { enabled: true, trustedProxies: ['10.16.0.0/14'] }), 'api.ingress.host: required when api.ingress.enabled is true'],
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
