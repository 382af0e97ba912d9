import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TENANT_DEFAULTS } from '../../cdk8s/lib/defaults';
import { isPermitted, OPERATOR_NAME, rulesOf, TENANT_BINDING, tenantBinding, tenantClusterRoleName } from '../../cdk8s/lib/operator-permissions';
import { effectivePolicy, repositoryOf, specPolicyProblems, type SpecPolicy } from '../../operator/policy';
import { loadDefaults } from '../../operator/run';
import { createRbacAuthorizer, serviceAccountIdentity } from '../../local/kube-apiserver/rbac';
import type { RequestRecord } from '../../local/kube-apiserver/server';
import { ApiError, Store } from '../../local/kube-apiserver/store';

// Issue 31, finding 8: writing a MarketIndexer must not be a way to read its tenant's Secrets.
describe('operator: what a MarketIndexer may ask (D-200)', () => {
  const policy: SpecPolicy = effectivePolicy(
    { imageRepositories: ['registry.example:5000/team/market-indexer'], egressBlocks: [{ cidr: '10.0.0.0/8', except: ['10.96.0.0/12'] }, { cidr: 'fd00::/8' }] },
    { image: { repository: 'ghcr.io/acme/market-indexer' } },
  );

  it("allows the environment's own images, its dev store images and the listed repositories, with any tag or digest", () => {
    expect(policy.imageRepositories).toEqual(['ghcr.io/acme/market-indexer', repositoryOf(TENANT_DEFAULTS.devStores.postgresImage), repositoryOf(TENANT_DEFAULTS.devStores.redisImage), 'registry.example:5000/team/market-indexer']);
    expect(repositoryOf('registry.example:5000/team/market-indexer:1.2@sha256:abc')).toBe('registry.example:5000/team/market-indexer');
    expect(specPolicyProblems({ image: { repository: 'registry.example:5000/team/market-indexer', tag: '2.0' }, devStores: { postgresImage: 'postgres:16' } }, policy)).toEqual([]);
  });

  it('refuses an image from elsewhere, naming the field', () => {
    expect(specPolicyProblems({ image: { repository: 'attacker.example/exfil' } }, policy)).toEqual([
      'spec.image.repository: image repository "attacker.example/exfil" is not allowed here (allowed: ghcr.io/acme/market-indexer, postgres, redis, registry.example:5000/team/market-indexer)',
    ]);
    expect(specPolicyProblems({ devStores: { redisImage: 'attacker.example/redis:7' } }, policy)).toEqual([expect.stringMatching(/^spec\.devStores\.redisImage: image repository "attacker\.example\/redis"/)]);
    // A look-alike of an allowed repository is another repository.
    expect(specPolicyProblems({ image: { repository: 'ghcr.io/acme/market-indexer-evil' } }, policy)).toHaveLength(1);
  });

  it('allows egress blocks inside the allowed ones (leaving out what they leave out), refuses the rest naming each', () => {
    const egress = (ipBlocks: { cidr: string; except?: string[] }[]) => ({ networkPolicy: { egress: { database: { ipBlocks, ports: [5432] } } } });
    expect(specPolicyProblems(egress([{ cidr: '10.20.0.0/16' }, { cidr: '10.0.0.0/8', except: ['10.96.0.0/12'] }, { cidr: 'fd12:3456::/32' }]), policy)).toEqual([]);
    expect(specPolicyProblems(egress([{ cidr: '0.0.0.0/0' }]), policy)).toEqual([
      'spec.networkPolicy.egress.database.ipBlocks[0]: 0.0.0.0/0 is outside the egress blocks a MarketIndexer may open (allowed: 10.0.0.0/8 except 10.96.0.0/12, fd00::/8)',
    ]);
    // Reaching into what the allowed block leaves out, or wider than it, or another family.
    expect(specPolicyProblems(egress([{ cidr: '10.96.1.0/24' }, { cidr: '10.0.0.0/8' }, { cidr: '11.0.0.0/8' }, { cidr: '::/0' }]), policy).map((p) => p.split(':')[0])).toEqual([
      'spec.networkPolicy.egress.database.ipBlocks[0]',
      'spec.networkPolicy.egress.database.ipBlocks[1]',
      'spec.networkPolicy.egress.database.ipBlocks[2]',
      'spec.networkPolicy.egress.database.ipBlocks[3]',
    ]);
    // By default a spec opens no egress of its own.
    expect(specPolicyProblems(egress([{ cidr: '10.20.0.0/16' }]), effectivePolicy(undefined, {}))).toEqual([
      expect.stringContaining('(allowed: none: the environment states every egress block)'),
    ]);
  });

  it('refuses turning the NetworkPolicies off', () => {
    expect(specPolicyProblems({ networkPolicy: { enabled: false } }, policy)).toEqual(['spec.networkPolicy.enabled: a MarketIndexer may not turn its NetworkPolicies off']);
    expect(specPolicyProblems({ networkPolicy: { enabled: true } }, policy)).toEqual([]);
  });

  it('reads the policy from the defaults file beside the values, and names a bad one', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'defaults-'));
    const file = path.join(dir, 'defaults.json');
    writeFileSync(file, JSON.stringify({ image: { repository: 'ghcr.io/acme/mi' }, policy: { imageRepositories: ['a.example/b'], egressBlocks: [{ cidr: '10.0.0.0/8' }] } }));
    const d = loadDefaults(file);
    expect(d.values).toEqual({ image: { repository: 'ghcr.io/acme/mi' } });
    expect(d.policy).toEqual({ imageRepositories: ['ghcr.io/acme/mi', 'postgres', 'redis', 'a.example/b'], egressBlocks: [{ cidr: '10.0.0.0/8' }] });
    writeFileSync(file, JSON.stringify({ policy: { imageRepositories: ['a.example/b:1.0'], egress: [] } }));
    expect(() => loadDefaults(file)).toThrow(`${file}: policy.egress: unknown field; policy.imageRepositories.0: must match pattern`);
  });
});

describe('operator RBAC: the permission table and the test API server\'s authorizer', () => {
  const ns = 'market-indexer-system';
  const at = (namespace: string | undefined, name?: string) => ({ namespace, name, platformNamespace: ns });

  it('allows tenant rights only in tenant namespaces, platform rights only in its own, bind and delete only by name', () => {
    expect(isPermitted('', 'secrets', 'get', at('mi-alpha', 'x'))).toBe(true);
    expect(isPermitted('', 'secrets', 'get', at('kube-system', 'x'))).toBe(false);
    // Read cluster-wide (one cache per kind, D-320), written only in tenant namespaces; Secrets only there.
    expect(isPermitted('apps', 'deployments', 'list', at(undefined))).toBe(true);
    expect(isPermitted('apps', 'deployments', 'patch', at('kube-system', 'x'))).toBe(false);
    expect(isPermitted('', 'secrets', 'list', at(undefined))).toBe(false);
    expect(isPermitted('', 'secrets', 'watch', at('mi-alpha'))).toBe(false);
    expect(isPermitted('', 'namespaces', 'patch', at(undefined, 'mi-alpha'))).toBe(true);
    expect(isPermitted('', 'namespaces', 'delete', at(undefined, 'kube-system'))).toBe(false);
    expect(isPermitted('', 'namespaces', 'create', at(undefined, 'anything'))).toBe(true);
    expect(isPermitted('coordination.k8s.io', 'leases', 'update', at(ns, 'l'))).toBe(true);
    expect(isPermitted('coordination.k8s.io', 'leases', 'update', at('mi-alpha', 'l'))).toBe(false);
    expect(isPermitted('rbac.authorization.k8s.io', 'rolebindings', 'delete', at('mi-alpha', TENANT_BINDING))).toBe(true);
    expect(isPermitted('rbac.authorization.k8s.io', 'rolebindings', 'delete', at('mi-alpha', 'other'))).toBe(false);
  });

  /** A store holding the rendered RBAC, as the e2e suite applies it, and a request maker. */
  function cluster() {
    const store = new Store();
    const t = (plural: string) => store.typeOf('rbac.authorization.k8s.io', 'v1', plural);
    const sa = { kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: ns };
    store.create(t('clusterroles'), undefined, { metadata: { name: `${OPERATOR_NAME}:${ns}` }, rules: rulesOf('cluster', ns) }, 'test');
    store.create(t('clusterroles'), undefined, { metadata: { name: tenantClusterRoleName(ns) }, rules: rulesOf('tenant', ns) }, 'test');
    store.create(t('clusterroles'), undefined, { metadata: { name: 'cluster-admin' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }, 'test');
    store.create(t('clusterrolebindings'), undefined, { metadata: { name: OPERATOR_NAME }, roleRef: { kind: 'ClusterRole', name: `${OPERATOR_NAME}:${ns}` }, subjects: [sa] }, 'test');
    store.create(store.typeOf('', 'v1', 'namespaces'), undefined, { metadata: { name: 'mi-alpha' } }, 'test');
    const rbac = createRbacAuthorizer(store, { op: serviceAccountIdentity(ns, OPERATOR_NAME) });
    const req = (verb: RequestRecord['verb'], group: string, resource: string, namespace?: string, name?: string): RequestRecord => ({ token: 'op', verb, group, resource, namespace, name, status: 0 });
    const refused = (f: () => void) => {
      try {
        f();
        return undefined;
      } catch (err) {
        return err instanceof ApiError ? `${err.code} ${err.message}` : String(err);
      }
    };
    return { store, t, rbac, req, refused };
  }

  it('evaluates the bindings it stores: nothing in a tenant namespace until the tenant binding is there', () => {
    const { store, t, rbac, req, refused } = cluster();
    expect(refused(() => rbac.authorize(req('get', '', 'secrets', 'mi-alpha', 'x')))).toBe(
      '403 secrets "x" is forbidden: User "system:serviceaccount:market-indexer-system:market-indexer-operator" cannot get resource "secrets" in API group "" in the namespace "mi-alpha"',
    );
    expect(refused(() => rbac.authorize(req('patch', '', 'namespaces', undefined, 'mi-alpha')))).toMatch(/^403/);
    const binding = tenantBinding(ns, 'mi-alpha', {}, { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name: 'alpha', uid: 'u' });
    expect(refused(() => rbac.authorize(req('create', 'rbac.authorization.k8s.io', 'rolebindings', 'mi-alpha')))).toBeUndefined();
    // The escalation check passes by `bind` on the tenant ClusterRole, and on nothing else.
    expect(refused(() => rbac.admit(req('create', 'rbac.authorization.k8s.io', 'rolebindings', 'mi-alpha'), binding as never))).toBeUndefined();
    const admin = { ...binding, metadata: { ...binding.metadata, name: 'x' }, roleRef: { ...binding.roleRef, name: 'cluster-admin' } };
    expect(refused(() => rbac.admit(req('create', 'rbac.authorization.k8s.io', 'rolebindings', 'mi-alpha'), admin as never))).toMatch(/^403 .*attempting to grant RBAC permissions not currently held/);
    store.create(t('rolebindings'), 'mi-alpha', binding as never, 'op');
    expect(refused(() => rbac.authorize(req('get', '', 'secrets', 'mi-alpha', 'x')))).toBeUndefined();
    expect(refused(() => rbac.authorize(req('patch', '', 'namespaces', undefined, 'mi-alpha')))).toBeUndefined();
    expect(refused(() => rbac.authorize(req('get', '', 'secrets', 'kube-system', 'x')))).toMatch(/^403/);
    expect(refused(() => rbac.authorize(req('list', '', 'secrets', undefined)))).toMatch(/at the cluster scope$/);
    expect(refused(() => rbac.authorize(req('delete', 'rbac.authorization.k8s.io', 'rolebindings', 'mi-alpha', 'other')))).toMatch(/^403/);
    // A Role it writes may hold only what it holds there (no `escalate`).
    const role = (rules: unknown[]) => ({ metadata: { name: 'r', namespace: 'mi-alpha' }, rules });
    expect(refused(() => rbac.admit(req('create', 'rbac.authorization.k8s.io', 'roles', 'mi-alpha'), role([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]) as never))).toBeUndefined();
    expect(refused(() => rbac.admit(req('create', 'rbac.authorization.k8s.io', 'roles', 'mi-alpha'), role([{ apiGroups: [''], resources: ['secrets'], verbs: ['delete'] }]) as never))).toMatch(/Resources:\["secrets"\], Verbs:\["delete"\]/);
    // Any other client is unrestricted.
    expect(refused(() => rbac.authorize({ ...req('delete', '', 'namespaces', undefined, 'kube-system'), token: 'test' }))).toBeUndefined();
  });
});
