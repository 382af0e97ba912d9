import { ROLE_BINDING } from './kinds';
import { namespaceOf } from './names';
import { OPERATOR_NAME, TENANT_BINDING, tenantClusterRoleName } from './operator-permissions';

/**
 * What RBAC cannot narrow, an admission policy does (D-260): `create` on `rolebindings` names no
 * namespace, so a stolen operator token could bind the tenant ClusterRole (Secrets, workloads)
 * in `kube-system` or any other namespace and reach it from there. This ValidatingAdmissionPolicy
 * (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) lets the operator's
 * ServiceAccount write only the one RoleBinding it makes: named `market-indexer-operator`, in a
 * tenant namespace (`mi-*`, carrying the operator's managed-by label), of the tenant
 * ClusterRole, to itself alone. Anyone else's RoleBindings it does not look at.
 *
 * One definition for both doors of the kit: cdk8s renders it for the environment's namespace,
 * the chart takes it from its facts with `NAMESPACE_PLACEHOLDER` replaced (charts' operator.yaml).
 */
export const NAMESPACE_PLACEHOLDER = '__PLATFORM_NAMESPACE__';

const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

/** The policy's name and its binding's: cluster-scoped, so named after the platform namespace. */
export const admissionPolicyName = (platformNamespace: string) => `rolebindings.${OPERATOR_NAME}.${platformNamespace}`;

export interface AdmissionValidation {
  expression: string;
  message: string;
  reason: 'Forbidden';
}

/** The checks on the operator's RoleBindings, each with the message a refused write gets. */
export function operatorBindingValidations(platformNamespace: string): AdmissionValidation[] {
  const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const tenantRole = tenantClusterRoleName(platformNamespace);
  const v = (expression: string, message: string): AdmissionValidation => ({ expression, message, reason: 'Forbidden' });
  return [
    v(
      `namespaceObject.metadata.name.startsWith(${lit(namespaceOf(''))}) && has(namespaceObject.metadata.labels) && ${lit(MANAGED_BY_LABEL)} in namespaceObject.metadata.labels && namespaceObject.metadata.labels[${lit(MANAGED_BY_LABEL)}] == ${lit(OPERATOR_NAME)}`,
      `the operator binds roles only in the tenant namespaces it manages (${namespaceOf('')}*, labelled ${MANAGED_BY_LABEL}=${OPERATOR_NAME})`,
    ),
    v(`object.metadata.name == ${lit(TENANT_BINDING)}`, `the operator's RoleBinding is named ${TENANT_BINDING}`),
    v(
      `object.roleRef.apiGroup == ${lit(ROLE_BINDING.group)} && object.roleRef.kind == 'ClusterRole' && object.roleRef.name == ${lit(tenantRole)}`,
      `the operator binds only the ClusterRole ${tenantRole}`,
    ),
    v(
      `has(object.subjects) && size(object.subjects) == 1 && object.subjects.all(s, s.kind == 'ServiceAccount' && s.name == ${lit(OPERATOR_NAME)} && has(s.namespace) && s.namespace == ${lit(platformNamespace)})`,
      `the operator binds only its own ServiceAccount (${platformNamespace}/${OPERATOR_NAME})`,
    ),
  ];
}

/** The ValidatingAdmissionPolicy and its binding, for the platform namespace given. */
export function operatorAdmissionObjects(platformNamespace: string, labels: Record<string, string>): [Record<string, unknown>, Record<string, unknown>] {
  const name = admissionPolicyName(platformNamespace);
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels },
    spec: {
      // An error evaluating it refuses the write, as a check that did not pass does.
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [ROLE_BINDING.group], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [ROLE_BINDING.plural] }],
      },
      // Only the operator's own writes; anyone else's RoleBindings are not this policy's concern.
      matchConditions: [{ name: 'operator-service-account', expression: `request.userInfo.username == 'system:serviceaccount:${platformNamespace}:${OPERATOR_NAME}'` }],
      validations: operatorBindingValidations(platformNamespace),
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
  return [policy, binding];
}
