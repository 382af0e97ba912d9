/**
 * What a tenant's processes are given: settings (which pods a changed setting rolls, and the
 * refusal of a variable outside the catalog or a secret as a literal), the interface variant
 * (D-159), and whom the API believes (TRUST_PROXY from the ingress controller's addresses and
 * the jurisdiction policy that depends on it, D-230).
 */
import { ApiObject, App, Chart, JsonPatch } from 'cdk8s';
import { TENANT_DEFAULTS } from '../../../cdk8s/lib/defaults';
import { headerProxies } from '../../../server/http/jurisdiction';
import { MarketIndexerTenant } from '../../../cdk8s/lib/tenant';
import type { EnvironmentInput } from '../../../cdk8s/lib/values';
import { ENVIRONMENTS } from '../../../cdk8s/environments';
import { synthEnvironment } from '../../../cdk8s/synth';
import { TRUST_POLICY as POLICY } from '../../support/kit-arbitraries';
import { keyOf } from '../../support/kit';
import { synth, tenantObjectsOf, type DeploymentLike, problemsOf } from './support';

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
    expect(problemsOf(withVariant('v2'))).toContain('tenants.beta.variant: must be one of "v1", "legacy"');
    expect(problemsOf({ ...ENVIRONMENTS.staging!, variant: 'LEGACY' } as never)).toContain('variant: must be one of "v1", "legacy"');
    expect(problemsOf({ ...ENVIRONMENTS.staging!, settings: { API_VARIANT: 'legacy' } } as never)).toContain('settings.API_VARIANT: unknown field');
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

  it("renders the edge's proxies' addresses as TRUST_PROXY and its hosts as PUBLIC_HOSTS, and none without an edge", () => {
    expect(apiSettingsOf(ENVIRONMENTS.staging!, 'alpha').TRUST_PROXY).toBe('10.16.0.0/14');
    expect(apiSettingsOf(ENVIRONMENTS.prod!, 'gamma').TRUST_PROXY).toBe('10.24.0.0/14');
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants.alpha.api.httpRoute.trustedProxies = ['10.16.0.0/14', 'fd00:10::/64', '192.0.2.7'];
    env.tenants.alpha.api.httpRoute.hostnames = ['alpha.staging.markets.example', 'alpha.example.org'];
    env.tenants.beta.api.httpRoute.enabled = false;
    expect(apiSettingsOf(env, 'alpha')).toMatchObject({ TRUST_PROXY: '10.16.0.0/14,fd00:10::/64,192.0.2.7', PUBLIC_HOSTS: 'alpha.staging.markets.example,alpha.example.org' });
    expect(apiSettingsOf(env, 'beta').TRUST_PROXY).toBeUndefined();
    expect(apiSettingsOf(env, 'beta').PUBLIC_HOSTS).toBeUndefined();
    // Both edges during a move from the Ingress: both hosts, both proxies, each once.
    env.tenants.alpha.api.ingress = { enabled: true, host: 'alpha.staging.markets.example', trustedProxies: ['10.16.0.0/14', '10.99.0.0/16'] };
    expect(apiSettingsOf(env, 'alpha')).toMatchObject({
      TRUST_PROXY: '10.16.0.0/14,fd00:10::/64,192.0.2.7,10.99.0.0/16',
      PUBLIC_HOSTS: 'alpha.staging.markets.example,alpha.example.org',
    });
    env.tenants.alpha.api.ingress = { enabled: false };
    // A tenant's own TRUST_PROXY (addresses) wins, as every setting does, and then no list is needed.
    env.tenants.alpha.api.httpRoute.trustedProxies = [];
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
    env.api.httpRoute.trustedProxies = ['envoy-gateway'];
    expect(() => synth(env)).toThrow(/api\.httpRoute\.trustedProxies\.0: must match pattern/);
  });
});

describe('cdk8s kit: the CORS allow-list (D-521)', () => {
  const settingsOf = (env: EnvironmentInput, name: string) =>
    (tenantObjectsOf(env).find((o) => keyOf(o) === name) as unknown as { data: Record<string, string> }).data;

  it('renders api.corsAllowedOrigins as the API\'s CORS_ALLOWED_ORIGINS, and nothing when empty or for the indexer', () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants.alpha.api.corsAllowedOrigins = ['https://app.example', 'http://localhost:5173'];
    expect(settingsOf(env, 'ConfigMap mi-alpha/market-indexer-api').CORS_ALLOWED_ORIGINS).toBe('https://app.example,http://localhost:5173');
    expect(settingsOf(env, 'ConfigMap mi-alpha/market-indexer-indexer').CORS_ALLOWED_ORIGINS).toBeUndefined();
    expect(settingsOf(env, 'ConfigMap mi-beta/market-indexer-api').CORS_ALLOWED_ORIGINS).toBeUndefined();
    env.tenants.alpha.api.corsAllowedOrigins = ['https://app.example/path'];
    expect(() => synth(env)).toThrow(/api\.corsAllowedOrigins\.0: must match pattern/);
  });
});
