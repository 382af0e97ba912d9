/**
 * A re-index as the kit renders it (D-440): `indexer.build.enabled` adds one builder (the
 * indexer in INDEXER_MODE=build, of the release `imageTag` names) beside the live indexer, apart
 * from its Service and selector, with the network it needs; INDEXER_MODE is never tenant-wide.
 */
import type { EnvironmentInput } from '../../../cdk8s/lib/values';
import { ENVIRONMENTS } from '../../../cdk8s/environments';
import { synthEnvironment } from '../../../cdk8s/synth';
import { keyOf } from '../../support/kit';
import { problemsOf, tenantObjectsOf, type DeploymentLike } from './support';

const withBuild = (build: unknown, tenant = 'alpha') => {
  const env = structuredClone(ENVIRONMENTS.staging!) as any;
  env.tenants[tenant].indexer = { ...env.tenants[tenant].indexer, build };
  return env as EnvironmentInput;
};
const byKey = (env: EnvironmentInput) => Object.fromEntries(tenantObjectsOf(env).map((o) => [keyOf(o), o as any]));

describe('cdk8s kit: a re-index (indexer.build, D-440)', () => {
  it('renders no builder unless asked, and never an INDEXER_MODE in the live indexer', () => {
    const objects = byKey(ENVIRONMENTS.staging!);
    expect(Object.keys(objects).filter((k) => k.includes('indexer-build'))).toEqual([]);
    expect(objects['ConfigMap mi-alpha/market-indexer-indexer'].data.INDEXER_MODE).toBeUndefined();
  });

  it("adds the builder of the release asked for: INDEXER_MODE=build, one replica, out of the indexer's Service, with the indexer's network", () => {
    const before = byKey(ENVIRONMENTS.staging!);
    const after = byKey(withBuild({ enabled: true, imageTag: '0.3.0' }));
    const added = Object.keys(after).filter((k) => !(k in before)).sort();
    expect(added).toEqual(['ConfigMap mi-alpha/market-indexer-indexer-build', 'Deployment mi-alpha/market-indexer-indexer-build', 'NetworkPolicy mi-alpha/market-indexer-indexer-build']);
    // Nothing else changes: the live indexer, the API and beta are not rolled by asking for a re-index.
    for (const k of Object.keys(before).filter((x) => !x.startsWith('NetworkPolicy'))) expect([k, after[k]]).toEqual([k, before[k]]);

    const build = after['Deployment mi-alpha/market-indexer-indexer-build'] as DeploymentLike & { spec: { replicas: number; selector: { matchLabels: Record<string, string> } } };
    const live = after['Deployment mi-alpha/market-indexer-indexer'] as DeploymentLike & { spec: { selector: { matchLabels: Record<string, string> } } };
    expect(build.spec.replicas).toBe(1);
    const [c] = build.spec.template.spec.containers;
    expect(c!.image).toBe('ghcr.io/market-indexer/market-indexer:0.3.0');
    expect(live.spec.template.spec.containers[0]!.image).not.toBe(c!.image);
    expect(c!.envFrom).toEqual([{ configMapRef: { name: 'market-indexer-indexer-build' } }]);
    expect(c!.env).toEqual(live.spec.template.spec.containers[0]!.env);
    const data = after['ConfigMap mi-alpha/market-indexer-indexer-build'].data as Record<string, string>;
    expect(data).toEqual({ ...after['ConfigMap mi-alpha/market-indexer-indexer'].data, INDEXER_MODE: 'build' });
    // Selectors apart: neither Deployment adopts the other's pods, the indexer's Service reaches only the live one.
    expect(build.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('indexer-build');
    expect(after['Service mi-alpha/market-indexer-indexer'].spec.selector).toEqual(live.spec.selector.matchLabels);
    // Its network: the indexer's egress, the scraper's ingress, and it may reach the tenant's chain or stores.
    const policy = after['NetworkPolicy mi-alpha/market-indexer-indexer-build'].spec;
    expect(policy.egress).toEqual(after['NetworkPolicy mi-alpha/market-indexer-indexer'].spec.egress);
    expect(policy.ingress).toEqual([after['NetworkPolicy mi-alpha/market-indexer-indexer'].spec.ingress[0]]);
  });

  it("leaves the live writer a tenth of the tenant's RPC plan; an unpaced tenant's builder is unpaced too (D-444)", () => {
    const paced = withBuild({ enabled: true }) as any;
    paced.tenants.alpha.settings = { ...paced.tenants.alpha.settings, RPC_REQUESTS_PER_SECOND: 100 };
    const objects = byKey(paced);
    expect(objects['ConfigMap mi-alpha/market-indexer-indexer'].data.RPC_REQUESTS_PER_SECOND).toBe('100');
    expect(objects['ConfigMap mi-alpha/market-indexer-indexer-build'].data.RPC_REQUESTS_PER_SECOND).toBe('90');
    paced.tenants.alpha.settings.RPC_REQUESTS_PER_SECOND = 1;
    expect(byKey(paced)['ConfigMap mi-alpha/market-indexer-indexer-build'].data.RPC_REQUESTS_PER_SECOND).toBe('1');
    expect(byKey(withBuild({ enabled: true }))['ConfigMap mi-alpha/market-indexer-indexer-build'].data.RPC_REQUESTS_PER_SECOND).toBeUndefined();
  });

  it("builds the tenant's own release when no image tag is given", () => {
    const after = byKey(withBuild({ enabled: true }));
    expect((after['Deployment mi-alpha/market-indexer-indexer-build'] as DeploymentLike).spec.template.spec.containers[0]!.image).toBe(
      (after['Deployment mi-alpha/market-indexer-indexer'] as DeploymentLike).spec.template.spec.containers[0]!.image,
    );
  });

  it('refuses INDEXER_MODE among settings, a build on a webhook source and a bad tag, naming the field', () => {
    expect(problemsOf({ ...ENVIRONMENTS.staging!, settings: { INDEXER_MODE: 'build' } } as never)).toContain('settings.INDEXER_MODE: unknown field');
    expect(problemsOf(withBuild({ enabled: true, imageTag: 'not a tag' })).join('\n')).toMatch(/tenants\.alpha\.indexer\.build\.imageTag/);
    const webhook = withBuild({ enabled: true }, 'alpha') as any;
    webhook.tenants.alpha.source = { ...webhook.tenants.alpha.source, type: 'webhook', webhookSecretRef: { name: 'market-indexer', key: 'WEBHOOK_SECRET' } };
    webhook.tenants.alpha.indexer.replicas = 1;
    webhook.tenants.alpha.networkPolicy = { webhookSenders: [{ cidr: '192.0.2.0/24' }] };
    expect(problemsOf(webhook).join('\n')).toMatch(/indexer\.build\.enabled needs a source that backfills/);
  });
});
