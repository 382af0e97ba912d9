import path from 'node:path';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { INGRESS_ALLOWLIST_ANNOTATION, INGRESS_SNIPPET_ANNOTATION } from '../../cdk8s/lib/country-header';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';
import { CHART, helmTemplate, type Manifest } from '../support/kit';

const POLICY = { GEO_COUNTRY_HEADER: 'CF-IPCountry', GEO_BLOCKED_COUNTRIES: 'US' };
const CDN = ['203.0.113.0/24', '2001:db8::/32'];

/** The Ingresses' annotations that decide about the country header, by namespace. */
const countryAnnotations = (objects: Manifest[]) =>
  Object.fromEntries(
    objects
      .filter((o) => o.kind === 'Ingress')
      .map((o) => {
        const a = o.metadata.annotations ?? {};
        return [o.metadata.namespace, { allowlist: a[INGRESS_ALLOWLIST_ANNOTATION], snippet: a[INGRESS_SNIPPET_ANNOTATION] }];
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
 * Issue 41 item 9: ingress-nginx passes a client's own country header through and the API
 * believes the controller, so a client reaching the Ingress directly chose its country. With a
 * jurisdiction policy, the Ingress now drops the header, or admits only the CDN that sets it
 * (D-284): both doors, both cases.
 */
describe('the Ingress and the country header clients send', () => {
  it('drops it without a CDN, admits only the CDN stated, and leaves a tenant without a country header alone (cdk8s and Helm alike)', async () => {
    const env = structuredClone(ENVIRONMENTS.staging!) as EnvironmentInput;
    const alpha = env.tenants.alpha!;
    const beta = env.tenants.beta!;
    const onIngress = (host: string) => ({ httpRoute: { enabled: false }, ingress: { enabled: true, host, trustedProxies: ['10.16.0.0/14'] } });
    alpha.settings = { ...alpha.settings, ...POLICY };
    beta.settings = { ...beta.settings, ...POLICY };
    alpha.api = { ...alpha.api, ...onIngress('alpha.staging.markets.example') } as never;
    beta.api = { ...beta.api, ...onIngress('beta.staging.markets.example'), ingress: { ...onIngress('beta.staging.markets.example').ingress, cdnSourceRanges: CDN } } as never;
    const overlay = { tenants: { alpha: { settings: POLICY, api: alpha.api }, beta: { settings: POLICY, api: beta.api } } };
    const fromCdk8s = countryAnnotations(synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]));
    const fromHelm = countryAnnotations(
      await helmTemplate([
        path.join(CHART, 'values-staging.yaml'),
        overlay,
      ]),
    );
    expect(fromCdk8s).toEqual({
      'mi-alpha': { allowlist: undefined, snippet: 'proxy_set_header CF-IPCountry "";' },
      'mi-beta': { allowlist: '203.0.113.0/24,2001:db8::/32', snippet: undefined },
    });
    expect(fromHelm).toEqual(fromCdk8s);

    // Without a country header nothing changes.
    for (const t of [alpha, beta]) t.settings = {};
    const plain = countryAnnotations(synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]));
    expect(plain).toEqual({ 'mi-alpha': { allowlist: undefined, snippet: undefined }, 'mi-beta': { allowlist: undefined, snippet: undefined } });
    expect(countryAnnotations(await helmTemplate([path.join(CHART, 'values-staging.yaml'), { tenants: { alpha: { api: alpha.api }, beta: { api: beta.api } } }]))).toEqual(plain);
  });
});
