import path from 'node:path';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { INGRESS_ALLOWLIST_ANNOTATION, SNIPPET_ANNOTATION } from '../../cdk8s/lib/country-header';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';
import { CHART, helmTemplate, type Manifest } from '../support/kit';

const POLICY = { GEO_COUNTRY_HEADER: 'CF-IPCountry', GEO_BLOCKED_COUNTRIES: 'US' };
const CDN = ['203.0.113.0/24', '2001:db8::/32'];

/** The Ingresses' annotations that decide about the country header, by namespace and name. */
const countryAnnotations = (objects: Manifest[]) =>
  Object.fromEntries(
    objects
      .filter((o) => o.kind === 'Ingress')
      .map((o) => {
        const a = o.metadata.annotations ?? {};
        return [`${o.metadata.namespace}/${o.metadata.name}`, { allowlist: a[INGRESS_ALLOWLIST_ANNOTATION], snippets: Object.keys(a).filter((k) => SNIPPET_ANNOTATION.test(k)) }];
      }),
  );

/** What each tenant's HTTPRoute removes from requests, per rule, by namespace. */
const routeRemovals = (objects: Manifest[]) =>
  Object.fromEntries(
    objects
      .filter((o) => o.kind === 'HTTPRoute')
      .map((o) => {
        const rules = (o as unknown as { spec: { rules: { filters?: { type: string; requestHeaderModifier?: { remove?: string[] } }[] }[] } }).spec.rules;
        return [o.metadata.namespace, rules.map((r) => (r.filters ?? []).flatMap((f) => (f.type === 'RequestHeaderModifier' ? (f.requestHeaderModifier?.remove ?? []) : [])))];
      }),
  );

/**
 * The HTTPRoute (D-482): a RequestHeaderModifier filter, Gateway API core, removes the header on
 * every rule, unless the tenant states a CDN that sets it behind a Gateway that admits only the CDN.
 */
describe('the HTTPRoute and the country header clients send', () => {
  it('removes it on every rule without a CDN, passes it on behind a CDN-only Gateway, and leaves a tenant without a country header alone (cdk8s and Helm alike)', async () => {
    const cdn = { enabled: true, gatewayAdmitsOnlyCdn: true };
    const env = structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput;
    env.tenants.alpha!.settings = { ...env.tenants.alpha!.settings, ...POLICY };
    env.tenants.beta!.settings = { ...env.tenants.beta!.settings, ...POLICY };
    env.tenants.beta!.api = { ...env.tenants.beta!.api, httpRoute: { ...env.tenants.beta!.api!.httpRoute, cdn } } as never;
    const fromCdk8s = routeRemovals(synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]));
    const fromHelm = routeRemovals(
      await helmTemplate([path.join(CHART, 'values-staging.yaml'), { tenants: { alpha: { settings: POLICY }, beta: { settings: POLICY, api: { httpRoute: { cdn } } } } }]),
    );
    expect(fromCdk8s).toEqual({ 'mi-alpha': [['CF-IPCountry'], ['CF-IPCountry'], ['CF-IPCountry']], 'mi-beta': [[], [], []] });
    expect(fromHelm).toEqual(fromCdk8s);

    const plain = routeRemovals(synthEnvironment(ENVIRONMENTS.staging!, 'test').flatMap((f) => f.objects as Manifest[]));
    expect(plain).toEqual({ 'mi-alpha': [[], [], []], 'mi-beta': [[], [], []] });
    expect(routeRemovals(await helmTemplate([path.join(CHART, 'values-staging.yaml')]))).toEqual(plain);
  });
});

/**
 * Issue 41 item 9, on the Ingress that stays an option (D-484): it cannot remove the header
 * without a snippet, which the kit no longer renders, so it admits only the CDN stated (on both
 * of its Ingresses), and a tenant with a country header and no CDN is refused, by both doors.
 */
describe('the Ingress and the country header clients send', () => {
  it('admits only the CDN stated on both Ingresses, carries no snippet, and leaves a tenant without a country header alone (cdk8s and Helm alike)', async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput;
    const onIngress = (host: string, cdn: string[] = []) => ({ httpRoute: { enabled: false }, ingress: { enabled: true, host, trustedProxies: ['10.16.0.0/14'], cdnSourceRanges: cdn } });
    env.tenants.alpha!.api = { ...env.tenants.alpha!.api, ...onIngress('alpha.staging.markets.example') } as never;
    env.tenants.beta!.api = { ...env.tenants.beta!.api, ...onIngress('beta.staging.markets.example', CDN) } as never;
    env.tenants.beta!.settings = { ...env.tenants.beta!.settings, ...POLICY };
    const overlay = { tenants: { alpha: { api: env.tenants.alpha!.api }, beta: { settings: POLICY, api: env.tenants.beta!.api } } };
    const fromCdk8s = countryAnnotations(synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]));
    const fromHelm = countryAnnotations(await helmTemplate([path.join(CHART, 'values-staging.yaml'), overlay]));
    expect(fromCdk8s).toEqual({
      'mi-alpha/market-indexer-api': { allowlist: undefined, snippets: [] },
      'mi-alpha/market-indexer-api-ws': { allowlist: undefined, snippets: [] },
      'mi-beta/market-indexer-api': { allowlist: '203.0.113.0/24,2001:db8::/32', snippets: [] },
      'mi-beta/market-indexer-api-ws': { allowlist: '203.0.113.0/24,2001:db8::/32', snippets: [] },
    });
    expect(fromHelm).toEqual(fromCdk8s);
  });
});
