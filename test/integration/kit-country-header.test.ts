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
    alpha.settings = { ...alpha.settings, ...POLICY };
    beta.settings = { ...beta.settings, ...POLICY };
    beta.api = { ...beta.api, ingress: { ...beta.api!.ingress, cdnSourceRanges: CDN } } as never;
    const fromCdk8s = countryAnnotations(synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]));
    const fromHelm = countryAnnotations(
      await helmTemplate([
        path.join(CHART, 'values-staging.yaml'),
        { tenants: { alpha: { settings: POLICY }, beta: { settings: POLICY, api: { ingress: { cdnSourceRanges: CDN } } } } },
      ]),
    );
    expect(fromCdk8s).toEqual({
      'mi-alpha': { allowlist: undefined, snippet: 'proxy_set_header CF-IPCountry "";' },
      'mi-beta': { allowlist: '203.0.113.0/24,2001:db8::/32', snippet: undefined },
    });
    expect(fromHelm).toEqual(fromCdk8s);

    // Without a country header nothing changes: the staging environment as committed.
    const plain = countryAnnotations(synthEnvironment(ENVIRONMENTS.staging!, 'test').flatMap((f) => f.objects as Manifest[]));
    expect(plain).toEqual({ 'mi-alpha': { allowlist: undefined, snippet: undefined }, 'mi-beta': { allowlist: undefined, snippet: undefined } });
    expect(countryAnnotations(await helmTemplate([path.join(CHART, 'values-staging.yaml')]))).toEqual(plain);
  });
});
