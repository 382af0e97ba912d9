import { operatorAdmissionObjects } from '../../cdk8s/lib/operator-admission';
import { OPERATOR_NAME, tenantBinding, tenantClusterRoleName } from '../../cdk8s/lib/operator-permissions';
import { createPolicyAdmission, UNRESTRICTED } from '../../local/kube-apiserver/admission-policies';
import { serviceAccountIdentity } from '../../local/kube-apiserver/rbac';
import type { RequestRecord } from '../../local/kube-apiserver/server';
import { ApiError, Store } from '../../local/kube-apiserver/store';

// D-260: what RBAC cannot narrow (`create` on rolebindings names no namespace), the kit's
// ValidatingAdmissionPolicy does; the test API server evaluates it with a CEL interpreter.
describe("operator: the admission policy on the operator's RoleBindings (D-260)", () => {
  const ns = 'market-indexer-system';
  const operator = serviceAccountIdentity(ns, OPERATOR_NAME);
  const owner = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name: 'alpha', uid: 'u' };

  function cluster() {
    const store = new Store();
    const t = (group: string, plural: string) => store.typeOf(group, 'v1', plural);
    const [policy, binding] = operatorAdmissionObjects(ns, {});
    store.create(t('admissionregistration.k8s.io', 'validatingadmissionpolicies'), undefined, policy as never, 'kit');
    store.create(t('admissionregistration.k8s.io', 'validatingadmissionpolicybindings'), undefined, binding as never, 'kit');
    const labels = { 'app.kubernetes.io/managed-by': OPERATOR_NAME };
    store.create(t('', 'namespaces'), undefined, { metadata: { name: 'mi-alpha', labels } }, 'op');
    // Created by someone else with a tenant's name, not labelled as the operator's.
    store.create(t('', 'namespaces'), undefined, { metadata: { name: 'mi-stray' } }, 'someone');
    const admission = createPolicyAdmission(store);
    const req = (namespace: string): RequestRecord => ({ token: 'op', verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespace, name: undefined, status: 0 });
    /** The status and message a write gets, or undefined when admitted. */
    const refused = (namespace: string, obj: unknown, who = operator) => {
      try {
        admission.admit(req(namespace), who, obj as never, undefined);
        return undefined;
      } catch (err) {
        if (err instanceof ApiError) return `${err.code} ${err.message}`;
        throw err;
      }
    };
    return { store, t, admission, refused };
  }
  const own = (namespace: string) => JSON.parse(JSON.stringify(tenantBinding(ns, namespace, {}, owner))) as Record<string, unknown> & { metadata: Record<string, unknown>; subjects: unknown[] };

  it("admits the operator's own binding in a tenant namespace it manages", () => {
    const { refused } = cluster();
    expect(refused('mi-alpha', own('mi-alpha'))).toBeUndefined();
  });

  it('refuses it anywhere else, and any other binding of the operator in its tenant namespaces, saying why', () => {
    const { refused } = cluster();
    const policyName = `rolebindings.${OPERATOR_NAME}.${ns}`;
    expect(refused('kube-system', own('kube-system'))).toBe(
      `403 rolebindings.rbac.authorization.k8s.io "${OPERATOR_NAME}" is forbidden: ValidatingAdmissionPolicy '${policyName}' with binding '${policyName}' denied request: the operator binds roles only in the tenant namespaces it manages (mi-*, labelled app.kubernetes.io/managed-by=${OPERATOR_NAME})`,
    );
    expect(refused('mi-stray', own('mi-stray'))).toMatch(/only in the tenant namespaces it manages/);
    expect(refused('mi-alpha', { ...own('mi-alpha'), metadata: { name: 'other', namespace: 'mi-alpha' } })).toMatch(/is named market-indexer-operator$/);
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
    const [policy] = operatorAdmissionObjects('other', {});
    const spec = policy.spec as { validations: { expression: string }[] };
    spec.validations[1]!.expression = 'object.metadata.name ==';
    const record: RequestRecord = { token: undefined, verb: 'create', group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicies', namespace: undefined, name: undefined, status: 0 };
    expect(() => admission.admit(record, UNRESTRICTED, policy as never, undefined)).toThrow(/is invalid: spec\.validations\[1\]\.expression: Invalid value: "object\.metadata\.name ==": compilation failed/);
    expect(store.list(t('admissionregistration.k8s.io', 'validatingadmissionpolicies'), undefined, [])).toHaveLength(1);
  });
});
