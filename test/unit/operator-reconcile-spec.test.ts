// The reconcile's first steps on plain objects: the spec against the policy, the render, the
// claim on the tenant's namespace (operator/reconcile/spec.ts, claim.ts).
import { App, Chart } from 'cdk8s';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { NAMESPACE } from '../../cdk8s/lib/kinds';
import { MarketIndexerTenant } from '../../cdk8s/lib/tenant';
import type { TenantInput } from '../../cdk8s/lib/values';
import { MANAGED_BY } from '../../operator/informers';
import { APPLIED_HASH, renderTenant } from '../../operator/render';
import { tenantArb } from '../support/kit-arbitraries';
import { KitInputError } from '../../cdk8s/lib/resolve';
import { KubeError } from '../../operator/kube/client';
import { effectivePolicy } from '../../operator/policy';
import { checkClaim, createNamespace, desiredNamespace, liveNamespace } from '../../operator/reconcile/claim';
import { checkPolicy, render } from '../../operator/reconcile/spec';
import { fakeCache, fakeKube, marketIndexer, object, ownerRef } from '../support/operator-fakes';

const OPTS = { environment: 'dev', defaults: { quota: { persistentVolumeClaims: 3 } }, platformNamespace: 'market-indexer-system' };

describe('reconcile step: check the spec against the policy', () => {
  const policy = effectivePolicy({ imageRepositories: ['registry.example/canary'] }, {});

  it('passes a spec inside the policy', () => {
    expect(checkPolicy(marketIndexer('demo', { image: { repository: 'registry.example/canary', tag: '2' } }), policy)).toBeUndefined();
  });

  it('refuses one outside it as InvalidSpec, every problem named in one message', () => {
    const mi = marketIndexer('demo', { image: { repository: 'attacker.example/exfil' }, networkPolicy: { enabled: false } });
    expect(checkPolicy(mi, policy)).toEqual({
      reason: 'InvalidSpec',
      message: expect.stringMatching(/^spec\.image\.repository: image repository "attacker\.example\/exfil" is not allowed here .*; spec\.networkPolicy\.enabled: /),
    });
  });
});

describe('reconcile step: render', () => {
  // The operator takes the chart's objects as JSON, not through the YAML a manifest file is: the
  // same objects the kit writes for that tenant, whatever the spec.
  it('renders what the kit writes as YAML for the same tenant, plus its owner and applied hash', () => {
    fc.assert(
      fc.property(tenantArb('demo'), (spec) => {
        const mi = marketIndexer('demo', spec as Record<string, unknown>);
        const app = new App();
        const chart = new Chart(app, 'tenant', { disableResourceNameHashes: true });
        const { tenant: _t, deletionPolicy: _d, ...rest } = mi.spec;
        new MarketIndexerTenant(chart, 'tenant', { ...(rest as TenantInput), tenant: 'demo', environment: OPTS.environment, managedBy: MANAGED_BY, platformNamespace: OPTS.platformNamespace, baseLayers: [OPTS.defaults] });
        const fromYaml = parseAllDocuments(app.synthYaml()).map((d) => d.toJSON() as Record<string, unknown>);
        const objects = renderTenant(mi, OPTS).objects.map((o) => {
          const { ownerReferences, annotations, ...metadata } = o.metadata;
          expect(ownerReferences).toEqual([expect.objectContaining({ uid: mi.metadata.uid, controller: true })]);
          const { [APPLIED_HASH]: hash, ...others } = annotations ?? {};
          expect(hash).toMatch(/^[0-9a-f]{32}$/);
          return { ...o, metadata: Object.keys(others).length ? { ...metadata, annotations: others } : metadata };
        });
        expect(objects).toEqual(fromYaml);
      }),
      { numRuns: 15 },
    );
  });

  it("renders the tenant's objects, each owned by the MarketIndexer", () => {
    const out = render(marketIndexer('demo'), OPTS);
    if (!('rendered' in out)) throw new Error(`refused: ${out.problem.message}`);
    expect(out.rendered.namespace).toBe('mi-demo');
    expect(desiredNamespace(out.rendered).metadata.name).toBe('mi-demo');
    for (const o of out.rendered.objects) expect(o.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: 'mi-uid', controller: true })]);
  });

  it("turns the kit's refusal into InvalidSpec naming the field", () => {
    expect(render(marketIndexer('demo', { api: { ingress: { enabled: true, trustedProxies: ['10.0.0.0/8'] } } }), OPTS)).toEqual({
      problem: { reason: 'InvalidSpec', message: 'api.ingress.host: required when api.ingress.enabled is true' },
    });
  });

  it("turns a construct's failed validation into InvalidSpec, one problem per line, and lets any other error through", () => {
    const failing = (err: Error) => () => {
      throw err;
    };
    expect(render(marketIndexer('demo'), OPTS, failing(new Error('Validation failed with the following errors:\n  [tenant] one\n  [tenant] two')))).toEqual({
      // (each line keeps the indentation cdk8s gives it: the join is as it was before the steps)
      problem: { reason: 'InvalidSpec', message: expect.stringMatching(/^\[tenant\] one;\s+\[tenant\] two$/) },
    });
    expect(render(marketIndexer('demo'), OPTS, failing(new KitInputError('spec', ['a: wrong', 'b: wrong'])))).toEqual({ problem: { reason: 'InvalidSpec', message: 'a: wrong; b: wrong' } });
    expect(() => render(marketIndexer('demo'), OPTS, failing(new TypeError('a bug')))).toThrow('a bug');
  });
});

describe('reconcile step: claim the tenant', () => {
  const mi = marketIndexer('demo');

  it('reads the namespace from the cache, and from the API server only when the cache lacks it', async () => {
    const cached = object('v1', 'Namespace', undefined, 'mi-demo', { owner: ownerRef() });
    const kube = fakeKube([object('v1', 'Namespace', undefined, 'mi-other')]);
    expect(await liveNamespace({ kube, namespaces: fakeCache([cached]) }, 'mi-demo')).toBe(cached);
    expect(kube.calls).toEqual([]);
    expect((await liveNamespace({ kube, namespaces: fakeCache([]) }, 'mi-other'))?.metadata.name).toBe('mi-other');
    expect(await liveNamespace({ kube, namespaces: fakeCache([]) }, 'mi-none')).toBeUndefined();
    expect(kube.calls.map((c) => `${c.verb} ${c.name}`)).toEqual(['get mi-other', 'get mi-none']);
  });

  it('is free when the namespace does not exist or is this resource\'s own', () => {
    expect(checkClaim(mi, 'mi-demo', undefined)).toBeUndefined();
    expect(checkClaim(mi, 'mi-demo', object('v1', 'Namespace', undefined, 'mi-demo', { owner: ownerRef() }))).toBeUndefined();
  });

  it('is TenantClaimed naming the owner when another MarketIndexer controls the namespace', () => {
    const theirs = object('v1', 'Namespace', undefined, 'mi-demo', { owner: ownerRef('other-uid', 'first') });
    expect(checkClaim(mi, 'mi-demo', theirs)).toEqual({ reason: 'TenantClaimed', message: 'tenant demo belongs to MarketIndexer first: its namespace mi-demo is owned there' });
  });

  it('is TenantClaimed when nobody controls it (made by hand, or retained): never adopted', () => {
    const retained = object('v1', 'Namespace', undefined, 'mi-demo', { ownerReferences: [{ ...ownerRef(), controller: false }] });
    for (const ns of [object('v1', 'Namespace', undefined, 'mi-demo'), retained]) {
      expect(checkClaim(mi, 'mi-demo', ns)).toEqual({
        reason: 'TenantClaimed',
        message: 'namespace mi-demo exists and no MarketIndexer owns it; delete it, or add this MarketIndexer as its controller owner',
      });
    }
  });

  it('claims by creating the namespace; losing the race is a 409 saying so', async () => {
    const out = render(mi, OPTS);
    if (!('rendered' in out)) throw new Error('refused');
    const kube = fakeKube();
    const ns = await createNamespace(kube, out.rendered);
    expect(ns.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: 'mi-uid' })]);
    expect(kube.find(NAMESPACE.kind, undefined, 'mi-demo')).toBeDefined();
    const err = await createNamespace(kube, out.rendered).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(err).toMatchObject({ status: 409, reason: 'AlreadyExists', message: 'namespace mi-demo was created meanwhile' });
    const refused = fakeKube([], { refuse: () => new KubeError(403, 'Forbidden', 'no') });
    await expect(createNamespace(refused, out.rendered)).rejects.toMatchObject({ status: 403 });
  });
});
