import { operatorAdmissionObjects } from '../../cdk8s/lib/operator-admission';
import { OPERATOR_NAME, tenantBinding, tenantClusterRoleName } from '../../cdk8s/lib/operator-permissions';
import { createPolicyAdmission, UNRESTRICTED } from '../../local/kube-apiserver/admission-policies';
import { serviceAccountIdentity } from '../../local/kube-apiserver/rbac';
import type { RequestRecord } from '../../local/kube-apiserver/server';
import { ApiError, Store } from '../../local/kube-apiserver/store';
import { renderTenant } from '../../operator/render';

// D-260, D-275, D-276: what RBAC cannot narrow (`create` on rolebindings and namespaces names no
// namespace), the kit's ValidatingAdmissionPolicies do; the test API server evaluates them with a
// CEL interpreter. The same through the real kubectl: test/integration/operator-admission-kubectl.test.ts.
const ns = 'market-indexer-system';
const operator = serviceAccountIdentity(ns, OPERATOR_NAME);
const owner = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name: 'alpha', uid: 'u' };
const MANAGED = { 'app.kubernetes.io/managed-by': OPERATOR_NAME };
type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

function cluster() {
  const store = new Store();
  const t = (group: string, plural: string) => store.typeOf(group, 'v1', plural);
  for (const o of operatorAdmissionObjects(ns, {})) {
    store.create(t('admissionregistration.k8s.io', o.kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings'), undefined, o as never, 'kit');
  }
  const namespaces = t('', 'namespaces');
  store.create(namespaces, undefined, { metadata: { name: 'mi-alpha', labels: MANAGED, ownerReferences: [{ ...owner, controller: true }] } }, 'op');
  // Created by someone else with a tenant's name, not labelled as the operator's.
  store.create(namespaces, undefined, { metadata: { name: 'mi-stray' } }, 'someone');
  // Labelled as the operator's, and no MarketIndexer controls it: made by someone else, or let go
  // by an operator that did not drop its label (before D-276).
  store.create(namespaces, undefined, { metadata: { name: 'mi-evil', labels: MANAGED } }, 'someone');
  const admission = createPolicyAdmission(store);
  const req = (resource: string, namespace: string | undefined, name?: string): RequestRecord => ({
    token: 'op',
    verb: 'create',
    group: resource === 'rolebindings' ? 'rbac.authorization.k8s.io' : '',
    resource,
    namespace,
    name,
    status: 0,
  });
  /** The status and message a write gets, or undefined when admitted. */
  const outcome = (f: () => void) => {
    try {
      f();
      return undefined;
    } catch (err) {
      if (err instanceof ApiError) return `${err.code} ${err.message}`;
      throw err;
    }
  };
  const refused = (namespace: string, obj: unknown, who = operator) => outcome(() => admission.admit(req('rolebindings', namespace), who, obj as never, undefined));
  /** A namespace written (`old`: the live one, for an update), as the server previews it. */
  const refusedNamespace = (obj: Obj, old?: Obj, who = operator) =>
    outcome(() => admission.admit(req('namespaces', undefined, obj.metadata.name as string), who, obj as never, old as never));
  return { store, t, admission, refused, refusedNamespace };
}
const own = (namespace: string, by = owner) => JSON.parse(JSON.stringify(tenantBinding(ns, namespace, {}, by))) as Obj & { subjects: unknown[] };

describe("operator: the admission policy on the operator's RoleBindings (D-260, D-276)", () => {
  it("admits the operator's own binding in a tenant namespace it manages", () => {
    const { refused } = cluster();
    expect(refused('mi-alpha', own('mi-alpha'))).toBeUndefined();
  });

  it('refuses it anywhere else, and any other binding of the operator in its tenant namespaces, saying why', () => {
    const { refused } = cluster();
    const policyName = `rolebindings.${OPERATOR_NAME}.${ns}`;
    expect(refused('mi-evil', own('mi-evil'))).toBe(
      `403 rolebindings.rbac.authorization.k8s.io "${OPERATOR_NAME}" is forbidden: ValidatingAdmissionPolicy '${policyName}' with binding '${policyName}' denied request: the operator binds roles only in a namespace a MarketIndexer controls (a controller ownerReference, marketindexer.dev/v1alpha1), its RoleBinding owned by that MarketIndexer`,
    );
    // Owned by another MarketIndexer than the namespace's: it would outlive the namespace's owner.
    expect(refused('mi-alpha', own('mi-alpha', { ...owner, name: 'beta', uid: 'other' }))).toMatch(/its RoleBinding owned by that MarketIndexer$/);
    expect(refused('mi-alpha', { ...own('mi-alpha'), metadata: { name: 'market-indexer-operator', namespace: 'mi-alpha' } })).toMatch(/its RoleBinding owned by that MarketIndexer$/);
    expect(refused('kube-system', own('kube-system'))).toBe(
      `403 rolebindings.rbac.authorization.k8s.io "${OPERATOR_NAME}" is forbidden: ValidatingAdmissionPolicy '${policyName}' with binding '${policyName}' denied request: the operator binds roles only in the tenant namespaces it manages (mi-*, labelled app.kubernetes.io/managed-by=${OPERATOR_NAME})`,
    );
    expect(refused('mi-stray', own('mi-stray'))).toMatch(/only in the tenant namespaces it manages/);
    expect(refused('mi-alpha', { ...own('mi-alpha'), metadata: { ...own('mi-alpha').metadata, name: 'other' } })).toMatch(/is named market-indexer-operator$/);
    expect(refused('mi-alpha', { ...own('mi-alpha'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' } })).toMatch(
      new RegExp(`binds only the ClusterRole ${tenantClusterRoleName(ns)}$`),
    );
    const b = own('mi-alpha');
    expect(refused('mi-alpha', { ...b, subjects: [...b.subjects, { kind: 'ServiceAccount', name: 'default', namespace: 'mi-alpha' }] })).toMatch(/only its own ServiceAccount/);
    expect(refused('mi-alpha', { ...b, subjects: [{ kind: 'User', name: `system:serviceaccount:${ns}:${OPERATOR_NAME}` }] })).toMatch(/only its own ServiceAccount/);
    expect(refused('mi-alpha', { ...b, subjects: undefined })).toMatch(/only its own ServiceAccount/);
  });

  it("leaves everyone else's RoleBindings alone", () => {
    const { refused } = cluster();
    expect(refused('kube-system', own('kube-system'), UNRESTRICTED)).toBeUndefined();
    expect(refused('kube-system', own('kube-system'), serviceAccountIdentity('kube-system', 'deployer'))).toBeUndefined();
  });

  it('refuses a policy whose CEL does not compile, naming the expression, as the real server does', () => {
    const { store, t, admission } = cluster();
    const [policy] = operatorAdmissionObjects('other', {}) as [Obj];
    const spec = policy.spec as { validations: { expression: string }[] };
    spec.validations[1]!.expression = 'object.metadata.name ==';
    const record: RequestRecord = { token: undefined, verb: 'create', group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicies', namespace: undefined, name: undefined, status: 0 };
    expect(() => admission.admit(record, UNRESTRICTED, policy as never, undefined)).toThrow(/is invalid: spec\.validations\[1\]\.expression: Invalid value: "object\.metadata\.name ==": compilation failed/);
    expect(store.list(t('admissionregistration.k8s.io', 'validatingadmissionpolicies'), undefined, [])).toHaveLength(2);
  });
});

describe("operator: the admission policy on the operator's namespaces (D-275)", () => {
  const policyName = `namespaces.${OPERATOR_NAME}.${ns}`;
  const denied = (message: string, name: string) =>
    `403 namespaces "${name}" is forbidden: ValidatingAdmissionPolicy '${policyName}' with binding '${policyName}' denied request: ${message}`;
  /** The tenant namespace as the operator renders it, with the label the server sets on every namespace. */
  const rendered = (tenant = 'alpha'): Obj => {
    const mi = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: tenant, uid: 'u' }, spec: { tenant, source: { type: 'simulator' }, devStores: { enabled: true } } };
    const o = renderTenant(mi as never, { environment: 'test', defaults: { image: { tag: '1.0.0' }, quota: { persistentVolumeClaims: 3 } } as never }).objects.find((x) => x.kind === 'Namespace')!;
    const m = o.metadata as Obj['metadata'];
    return { ...o, metadata: { ...m, labels: { ...(m.labels as object), 'kubernetes.io/metadata.name': m.name } } } as Obj;
  };
  const withLabels = (o: Obj, labels: Record<string, string | null>): Obj => {
    const next = JSON.parse(JSON.stringify(o)) as Obj;
    const l = (next.metadata.labels ?? {}) as Record<string, string>;
    for (const [k, val] of Object.entries(labels)) {
      if (val === null) delete l[k];
      else l[k] = val;
    }
    next.metadata.labels = l;
    return next;
  };

  it("admits the tenant namespace the operator renders, on create and on its own changes", () => {
    const { refusedNamespace } = cluster();
    const ns0 = rendered();
    expect(refusedNamespace(ns0)).toBeUndefined();
    expect(refusedNamespace(withLabels(ns0, { 'app.kubernetes.io/version': '2.0.0' }), ns0)).toBeUndefined();
    // Letting a retained namespace go: its ownerReference and managed-by label dropped (D-276).
    const released = withLabels({ ...ns0, metadata: { ...ns0.metadata, ownerReferences: [] } }, { 'app.kubernetes.io/managed-by': null });
    expect(refusedNamespace(released, ns0)).toBeUndefined();
    // Someone else's labels, kept as they are, are no concern of its.
    const annotated = withLabels(ns0, { team: 'payments', 'pod-security.kubernetes.io/warn': 'restricted' });
    expect(refusedNamespace(withLabels(annotated, { 'app.kubernetes.io/version': '2.0.0' }), annotated)).toBeUndefined();
  });

  it('refuses a namespace a stolen token would make: another name, a weaker profile, foreign labels, no MarketIndexer', () => {
    const { refusedNamespace } = cluster();
    const evil = rendered('evil');
    expect(refusedNamespace({ ...evil, metadata: { ...evil.metadata, name: 'evil' } })).toBe(denied('the operator creates and changes only tenant namespaces (mi-*)', 'evil'));
    const psa = denied('a tenant namespace enforces the restricted Pod Security Standard (labelled pod-security.kubernetes.io/enforce=restricted, pod-security.kubernetes.io/enforce-version=latest)', 'mi-evil');
    expect(refusedNamespace({ metadata: { name: 'mi-evil' } })).toBe(psa);
    expect(refusedNamespace(withLabels(evil, { 'pod-security.kubernetes.io/enforce': 'privileged' }))).toBe(psa);
    expect(refusedNamespace(withLabels(evil, { 'pod-security.kubernetes.io/enforce': null }))).toBe(psa);
    expect(refusedNamespace(withLabels(evil, { 'pod-security.kubernetes.io/enforce-version': 'v1.20' }))).toBe(psa);
    // A label other namespaces' policies may select on (an ingress controller's, a monitoring stack's).
    expect(refusedNamespace(withLabels(evil, { 'app.kubernetes.io/name': 'ingress-nginx', team: 'ingress' }))).toBe(
      denied('the operator creates a namespace with its own labels only (app.kubernetes.io/managed-by=market-indexer-operator, the kit\'s and Pod Security\'s)', 'mi-evil'),
    );
    expect(refusedNamespace(withLabels(evil, { 'kubernetes.io/metadata.name': 'kube-system' }))).toMatch(/with its own labels only/);
    expect(refusedNamespace(withLabels(evil, { 'app.kubernetes.io/managed-by': 'helm' }))).toMatch(/with its own labels only/);
    expect(refusedNamespace({ ...evil, metadata: { ...evil.metadata, ownerReferences: undefined } })).toBe(
      denied('the operator creates a namespace only for a MarketIndexer, its controller (a controller ownerReference, marketindexer.dev/v1alpha1)', 'mi-evil'),
    );
    const notController = { ...evil, metadata: { ...evil.metadata, ownerReferences: [{ ...owner, controller: false }] } };
    expect(refusedNamespace(notController)).toMatch(/only for a MarketIndexer, its controller/);
  });

  it("refuses a change of a tenant namespace's profile, or of labels that are not the operator's", () => {
    const { refusedNamespace } = cluster();
    const ns0 = withLabels(rendered(), { team: 'payments' });
    const psa = /denied request: a tenant namespace enforces the restricted Pod Security Standard/;
    expect(refusedNamespace(withLabels(ns0, { 'pod-security.kubernetes.io/enforce': 'privileged' }), ns0)).toMatch(psa);
    expect(refusedNamespace(withLabels(ns0, { 'pod-security.kubernetes.io/enforce': null, 'pod-security.kubernetes.io/enforce-version': null }), ns0)).toMatch(psa);
    const others = denied("the operator changes only its own labels on a namespace (the kit's and Pod Security's); others' it leaves as they are", 'mi-alpha');
    expect(refusedNamespace(withLabels(ns0, { team: 'ingress' }), ns0)).toBe(others);
    expect(refusedNamespace(withLabels(ns0, { team: null }), ns0)).toBe(others);
    expect(refusedNamespace(withLabels(ns0, { 'pod-security.kubernetes.io/warn': 'privileged' }), ns0)).toBe(others);
  });

  it("leaves everyone else's namespaces writes alone", () => {
    const { refusedNamespace } = cluster();
    const ns0 = rendered();
    expect(refusedNamespace(withLabels(ns0, { 'pod-security.kubernetes.io/enforce': 'privileged' }), ns0, UNRESTRICTED)).toBeUndefined();
    expect(refusedNamespace({ metadata: { name: 'payments' } }, undefined, serviceAccountIdentity('kube-system', 'deployer'))).toBeUndefined();
  });
});
