import { ENVIRONMENTS } from '../../../cdk8s/environments';
import { EDGE_RULES } from '../../../cdk8s/lib/edge';
import type { EnvironmentInput } from '../../../cdk8s/lib/values';
import { keyOf, schemaProblems, type Manifest } from '../../support/kit';
import { tenantObjectsOf } from './support';

type Route = Manifest & {
  spec: {
    parentRefs: { name: string; namespace?: string; sectionName?: string }[];
    hostnames: string[];
    rules: { matches: { path: { type: string; value: string } }[]; backendRefs: { name: string; port: number }[]; timeouts: { request: string; backendRequest?: string } }[];
  };
};
const routesOf = (env: EnvironmentInput) => tenantObjectsOf(env).filter((o) => o.kind === 'HTTPRoute') as Route[];
/** Gateway API durations (GEP-2257) in milliseconds. */
const ms = (d: string) => [...d.matchAll(/([0-9]+)(h|ms|m|s)/g)].reduce((sum, [, n, u]) => sum + Number(n) * { h: 3_600_000, m: 60_000, s: 1000, ms: 1 }[u as 'h']!, 0);

/** The tenant's edge: an HTTPRoute on the platform's Gateway (D-480, D-481). */
describe('cdk8s kit: the HTTPRoute', () => {
  it.each(['dev', 'staging', 'prod'])('renders one for every tenant with a host name in %s, valid against the Gateway API v1.6.1 CRD', (name) => {
    const env = ENVIRONMENTS[name]!;
    const routes = routesOf(env);
    expect(routes.map((r) => r.metadata.namespace).sort()).toEqual(Object.keys(env.tenants).map((t) => `mi-${t}`).sort());
    for (const r of routes) {
      expect(schemaProblems(r)).toEqual([]);
      expect(r.apiVersion).toBe('gateway.networking.k8s.io/v1');
      expect(r.spec.parentRefs.length).toBeGreaterThan(0);
      expect(r.spec.rules.every((rule) => rule.backendRefs.every((b) => b.name === 'market-indexer-api' && b.port === 80))).toBe(true);
    }
  });

  it('gives each kind of traffic its timeouts: /ws none, /tx 10 s, a REST read 5 s a backend and 10 s in all', () => {
    const [route] = routesOf(ENVIRONMENTS.staging!).filter((r) => r.metadata.namespace === 'mi-alpha');
    const byPath = Object.fromEntries(route!.spec.rules.flatMap((r) => r.matches.map((m) => [`${m.path.type} ${m.path.value}`, r.timeouts])));
    expect(byPath).toEqual({
      'Exact /ws': { request: '0s' },
      'PathPrefix /api/v1/tx/': { request: '10s', backendRequest: '10s' },
      'PathPrefix /tx/': { request: '10s', backendRequest: '10s' },
      'PathPrefix /': { request: '10s', backendRequest: '5s' },
    });
    // The CRD's CEL rule (not checked by the JSON schema): a backend's timeout within the request's, "0s" being none.
    for (const r of EDGE_RULES) if (r.timeouts.backendRequest && ms(r.timeouts.request) > 0) expect(ms(r.timeouts.backendRequest)).toBeLessThanOrEqual(ms(r.timeouts.request));
    // No REST rule waits anywhere near the hour the Ingress used to hold a reader for (issue 49).
    expect(Math.max(...EDGE_RULES.filter((r) => r.name !== 'ws').map((r) => ms(r.timeouts.request)))).toBeLessThanOrEqual(10_000);
  });

  it('renders none without a host name or when turned off, and admits only the edge it has to the API', () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as any;
    env.tenants.beta.api.httpRoute = { enabled: false };
    const objects = tenantObjectsOf(env);
    expect(objects.filter((o) => o.kind === 'HTTPRoute').map(keyOf)).toEqual(['HTTPRoute mi-alpha/market-indexer-api']);
    const apiPolicy = (ns: string) =>
      (objects.find((o) => keyOf(o) === `NetworkPolicy ${ns}/market-indexer-api`) as unknown as { spec: { ingress: { from: { namespaceSelector?: { matchLabels: Record<string, string> } }[] }[] } }).spec.ingress;
    const namespaces = (ns: string) => apiPolicy(ns).flatMap((r) => r.from.map((f) => f.namespaceSelector?.matchLabels['kubernetes.io/metadata.name']));
    expect(namespaces('mi-alpha')).toEqual(['envoy-gateway-system', 'monitoring']);
    expect(namespaces('mi-beta')).toEqual(['monitoring']);
    env.networkPolicy.gatewayNamespace = 'nginx-gateway';
    env.tenants.beta.api.ingress = { enabled: true, host: 'beta.staging.markets.example', trustedProxies: ['10.16.0.0/14'] };
    const again = tenantObjectsOf(env);
    const ns = (t: string) =>
      (again.find((o) => keyOf(o) === `NetworkPolicy ${t}/market-indexer-api`) as unknown as { spec: { ingress: { from: { namespaceSelector: { matchLabels: Record<string, string> } }[] }[] } }).spec.ingress.flatMap((r) =>
        r.from.map((f) => f.namespaceSelector.matchLabels['kubernetes.io/metadata.name']),
      );
    expect(ns('mi-alpha')).toEqual(['nginx-gateway', 'monitoring']);
    expect(ns('mi-beta')).toEqual(['ingress-nginx', 'monitoring']);
  });

  it('renders no snippet annotation and no hour-long REST timeout in any environment, on the route or on the Ingress option (issue 49)', () => {
    const onIngress = (env: EnvironmentInput): EnvironmentInput => ({
      ...env,
      tenants: Object.fromEntries(
        Object.entries(env.tenants).map(([t, v]) => [t, { ...v, api: { ...v.api, ingress: { enabled: true, host: `${t}.ingress.example`, trustedProxies: ['10.0.0.0/8'] } } }]),
      ),
    });
    const envs = Object.values(ENVIRONMENTS).flatMap((env) => [env, onIngress(env)]);
    const objects = envs.flatMap((env) => tenantObjectsOf(env));
    const ingresses = objects.filter((o) => o.kind === 'Ingress');
    // Not vacuous: every tenant of every environment has both Ingresses in the second half.
    expect(ingresses.length).toBe(2 * Object.values(ENVIRONMENTS).reduce((n, e) => n + Object.keys(e.tenants).length, 0));
    const annotations = objects.flatMap((o) => Object.entries(o.metadata.annotations ?? {}).map(([k, v]) => [keyOf(o), k, v] as const));
    expect(annotations.filter(([, k]) => /snippet/i.test(k))).toEqual([]);
    const timeouts = ingresses.map((o) => [o.metadata.name, Number(o.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout'])] as const);
    expect(new Set(timeouts.map(([name, s]) => `${name} ${s}`))).toEqual(new Set(['market-indexer-api 10', 'market-indexer-api-ws 45']));
    expect(annotations.filter(([, , v]) => v === '3600')).toEqual([]);
    // The REST Ingress takes /, the /ws one only /ws.
    const paths = (o: Manifest) => (o as unknown as { spec: { rules: { http: { paths: { path: string; pathType: string }[] } }[] } }).spec.rules[0]!.http.paths.map((p) => `${p.pathType} ${p.path}`);
    expect(new Set(ingresses.map((o) => `${o.metadata.name}: ${paths(o).join(', ')}`))).toEqual(new Set(['market-indexer-api: Prefix /', 'market-indexer-api-ws: Exact /ws']));
  });
});
