import path from 'node:path';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { requiredSettings, SOURCE_TYPES, type SourceType } from '../../core/config/settings';
import { loadConfig } from '../../core/config';
import { createJurisdictionPolicy, headerProxies } from '../../server/http/jurisdiction';
import { TRUST_POLICY } from '../support/kit-arbitraries';
import { CHART, ENVIRONMENT_NAMES, helmTemplate, parseManifests, type Manifest } from '../support/kit';

// The seam between the kit and the processes it deploys: whatever a process needs given (the
// catalog's requiredBy) must reach it in every rendered tenant, for every environment and
// source type, through both doors (cdk8s and Helm); and its egress must let it reach the RPC it
// is given. A deployed API without RPC_URL answered every /tx/* with 503 (issue 30).
jest.setTimeout(120_000);

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
}
type Pod = { initContainers?: Container[]; containers: Container[] };
type Policy = { spec: { podSelector: { matchLabels?: Record<string, string> }; egress?: { to?: Record<string, unknown>[]; ports?: { port: number | string }[] }[] } };

/** Every tenant of the environment on one source type, with what that source needs. */
function onSource(env: EnvironmentInput, source: SourceType): EnvironmentInput {
  const copy = structuredClone(env) as EnvironmentInput;
  for (const t of Object.values(copy.tenants)) {
    t.source = { ...t.source, type: source };
    if (source === 'webhook') {
      t.source.webhookSecretRef = { name: 'market-indexer', key: 'WEBHOOK_SECRET' };
      t.indexer = { ...t.indexer, replicas: 1 };
      t.networkPolicy = { ...t.networkPolicy, webhookSenders: [{ cidr: '203.0.113.0/24' }] };
    }
    // An RPC outside the namespace needs its address blocks (dev has none: its chain is in it).
    if (source !== 'simulator' && !copy.networkPolicy?.egress?.rpc?.ipBlocks?.length) {
      t.networkPolicy = { ...t.networkPolicy, egress: { ...t.networkPolicy?.egress, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } };
    }
    // The dev stores write their own Secret; an outside RPC's URL is in one the user creates.
    if (source !== 'simulator' && (t.devStores?.enabled ?? copy.devStores?.enabled)) {
      t.source.rpcUrlSecretRef = { name: 'rpc', key: 'RPC_URL' };
      if (t.source.webhookSecretRef) t.source.webhookSecretRef = { name: 'rpc', key: 'WEBHOOK_SECRET' };
    }
    // The chain keeps its genesis on a volume, beside a CloudNativePG Cluster's three (prod).
    if (source === 'simulator') t.quota = { ...t.quota, persistentVolumeClaims: 4 };
  }
  return copy;
}

/** The process a container of the kit runs, by its name (independent of how the kit decides). */
const PROCESS_BY_CONTAINER: Record<string, 'api' | 'indexer' | 'migrate' | 'chain'> = { api: 'api', migrate: 'migrate', indexer: 'indexer', chain: 'chain' };

function problems(rendered: Manifest[], source: SourceType): string[] {
  const out: string[] = [];
  // The `helm test` hook's objects are not the tenant (D-182).
  const objects = rendered.filter((o) => !o.metadata.annotations?.['helm.sh/hook']);
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, Object.keys((o as { data?: object }).data ?? {})]));
  const secrets = objects.filter((o) => o.kind === 'Secret');
  for (const o of objects) {
    const pod = (o as { spec?: { template?: { spec?: Pod } } }).spec?.template?.spec;
    if (!pod) continue;
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      const process = PROCESS_BY_CONTAINER[c.name];
      if (!process || !c.image.includes('market-indexer')) continue;
      const given = new Set([...(c.env ?? []).map((e) => e.name), ...(c.envFrom ?? []).flatMap((f) => configMaps.get(`${o.metadata.namespace}/${f.configMapRef?.name}`) ?? [])]);
      // A simulator tenant's indexer follows its chain over RPC.
      const indexerSource = source === 'webhook' ? 'webhook' : 'rpc';
      if (process === 'indexer' && c.args?.[c.args.indexOf('--source') + 1] !== indexerSource) out.push(`${o.metadata.namespace} indexer args ${c.args?.join(' ')}`);
      for (const name of requiredSettings(process, indexerSource)) {
        if (!given.has(name)) out.push(`${o.metadata.namespace} ${o.kind}/${o.metadata.name} ${c.name}: no ${name}`);
      }
      // With the dev stores the kit writes the Secret itself: it must hold what is referenced.
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        const own = ref && secrets.find((s) => s.metadata.namespace === o.metadata.namespace && s.metadata.name === ref.name);
        if (own && !Object.keys((own as { stringData?: object }).stringData ?? {}).includes(ref.key)) out.push(`${o.metadata.namespace} Secret ${ref.name} lacks ${ref.key}`);
      }
    }
  }
  // The API always reaches its RPC; the indexer unless it only takes webhooks.
  for (const component of ['api', 'indexer'] as const) {
    if (component === 'indexer' && source === 'webhook') continue;
    for (const policy of objects.filter((o) => o.kind === 'NetworkPolicy') as unknown as (Manifest & Policy)[]) {
      if (policy.spec.podSelector.matchLabels?.['app.kubernetes.io/component'] !== component) continue;
      const reachesRpc = (policy.spec.egress ?? []).some((rule) =>
        source === 'simulator'
          ? rule.to?.some((peer) => (peer as { podSelector?: { matchLabels?: Record<string, string> } }).podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'chain') &&
            rule.ports?.some((p) => p.port === 'rpc')
          : rule.to?.some((peer) => 'ipBlock' in peer) && rule.ports?.some((p) => p.port === 443),
      );
      if (!reachesRpc) out.push(`${policy.metadata.namespace} NetworkPolicy ${policy.metadata.name}: no egress to the RPC`);
    }
  }
  return out;
}

describe('the kit gives every process what it needs, for every environment and source type', () => {
  for (const envName of ENVIRONMENT_NAMES) {
    for (const source of SOURCE_TYPES) {
      it(`${envName}, source ${source}: cdk8s and Helm render every required setting and the RPC egress`, async () => {
        const env = onSource(ENVIRONMENTS[envName]!, source);
        const cdk8s = synthEnvironment(env, envName).flatMap((f) => parseManifests(f.yaml));
        expect(cdk8s.some((o) => o.kind === 'Deployment')).toBe(true);
        expect(problems(cdk8s, source)).toEqual([]);
        const overlay = { tenants: Object.fromEntries(Object.entries(env.tenants).map(([t, v]) => [t, { source: v.source, indexer: v.indexer, networkPolicy: v.networkPolicy, quota: v.quota }])) };
        const helm = await helmTemplate([path.join(CHART, `values-${envName}.yaml`), overlay]);
        expect(problems(helm, source)).toEqual([]);
        // A simulator tenant has its chain; no other does.
        expect(cdk8s.filter((o) => o.kind === 'StatefulSet' && o.metadata.name === 'market-indexer-chain').length).toBe(source === 'simulator' ? Object.keys(env.tenants).length : 0);
      });
    }
  }
});

// Issue 31 finding 6: the API refuses to start a jurisdiction policy unless TRUST_PROXY lists
// the proxies by address (D-192); the kit renders the ingress controller's addresses (D-230).
describe("a tenant's jurisdiction policy as the kit renders it passes the API's own start-up check", () => {
  const apiSettings = (objects: Manifest[], tenant: string) =>
    (objects.find((o) => o.kind === 'ConfigMap' && o.metadata.namespace === `mi-${tenant}` && o.metadata.name === 'market-indexer-api') as unknown as { data: Record<string, string> }).data;
  /** What the API does with its settings when it starts: its configuration, then the policy (server/http/jurisdiction.ts). */
  const startPolicy = (data: Record<string, string>) => {
    const config = loadConfig({ ...data, DATABASE_URL: 'postgres://u@db/x', REDIS_URL: 'redis://r:6379', RPC_URL: 'https://rpc.example' });
    createJurisdictionPolicy({ geo: config.geo, trustProxy: config.trustProxy, hasAttestation: async () => false });
    return headerProxies(config.trustProxy)!;
  };

  it('staging with a policy on alpha: cdk8s and Helm render settings the API starts with, believing only the controller\'s subnet', async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput;
    env.tenants.alpha!.settings = { ...TRUST_POLICY, ATTESTATION_REQUIRED_COUNTRIES: 'XA' };
    const cdk8s = synthEnvironment(env, 'staging').flatMap((f) => parseManifests(f.yaml));
    const helm = await helmTemplate([path.join(CHART, 'values-staging.yaml'), { tenants: { alpha: { settings: env.tenants.alpha!.settings } } }]);
    for (const objects of [cdk8s, helm]) {
      const believed = startPolicy(apiSettings(objects, 'alpha'));
      expect([believed('10.16.0.5'), believed('10.19.255.1'), believed('10.21.0.9'), believed('198.51.100.4')]).toEqual([true, true, false, false]);
    }
    // Not vacuous: the hop count the kit rendered before (api.ingress.trustedHops: 1) is refused at start.
    expect(() => startPolicy({ ...apiSettings(cdk8s, 'alpha'), TRUST_PROXY: '1' })).toThrow(/TRUST_PROXY=1 names none/);
  });
});
