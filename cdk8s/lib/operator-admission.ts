import { API_VERSION, KIND } from './crd';
import { NAMESPACE, ROLE_BINDING } from './kinds';
import { commonLabels, namespaceOf, POD_SECURITY_LABELS } from './names';
import { OPERATOR_NAME, TENANT_BINDING, tenantClusterRoleName } from './operator-permissions';

/**
 * What RBAC cannot narrow, admission policies do (ValidatingAdmissionPolicy,
 * admissionregistration.k8s.io/v1, GA since Kubernetes 1.30), each looking at the operator's
 * ServiceAccount's writes only:
 * - its RoleBindings (D-260): `create` on `rolebindings` names no namespace, so a stolen token
 *   could bind the tenant ClusterRole (Secrets, workloads) in `kube-system`. It may write only the
 *   one RoleBinding it makes: named `market-indexer-operator`, in a tenant namespace (`mi-*`,
 *   labelled as the operator's and controlled by a MarketIndexer, which owns the binding too), of
 *   the tenant ClusterRole, to itself alone.
 * - namespaces (D-275): `create` on `namespaces` is cluster-wide and `patch` reaches each tenant
 *   namespace, whose Pod Security label alone keeps privileged pods out. It may create only
 *   `mi-*` namespaces carrying the restricted profile, its own labels and a MarketIndexer as
 *   controller, and may change only its own labels on one, the restricted profile kept.
 *
 * One definition for both doors of the kit: cdk8s renders them for the environment's namespace,
 * the chart takes them from its facts with `NAMESPACE_PLACEHOLDER` replaced (charts' operator.yaml).
 */
export const NAMESPACE_PLACEHOLDER = '__PLATFORM_NAMESPACE__';

const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Set by the API server itself on every namespace (its name), before admission. */
const NAME_LABEL = 'kubernetes.io/metadata.name';

/** A policy's name and its binding's: cluster-scoped, so named after what it guards and the platform namespace. */
export const admissionPolicyName = (platformNamespace: string, resource = ROLE_BINDING.plural) => `${resource}.${OPERATOR_NAME}.${platformNamespace}`;

export interface AdmissionValidation {
  expression: string;
  message: string;
  reason: 'Forbidden';
}

/** A CEL string literal. */
const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const v = (expression: string, message: string): AdmissionValidation => ({ expression, message, reason: 'Forbidden' });
/** `label` of `o` (a CEL object) is there and is `value`. */
const labelIs = (o: string, label: string, value: string) =>
  `has(${o}.metadata.labels) && ${lit(label)} in ${o}.metadata.labels && ${o}.metadata.labels[${lit(label)}] == ${lit(value)}`;
/**
 * The controller ownerReferences of kind MarketIndexer of `o` (a CEL object), as `variable`, of
 * which one must meet `and`. CEL cannot look the MarketIndexer up: that it exists is the garbage
 * collector's part (an object whose owner is gone is deleted), and the operator's RBAC cannot
 * create one (D-276).
 */
const controlledByMarketIndexer = (o: string, variable: string, and = 'true') =>
  `has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(${variable}, ${variable}.apiVersion == ${lit(API_VERSION)} && ${variable}.kind == ${lit(KIND)} && has(${variable}.controller) && ${variable}.controller == true && ${and})`;

/** The labels the operator sets on a tenant namespace, and so may change: the kit's, Pod Security's. */
export const OPERATOR_NAMESPACE_LABELS: readonly string[] = [
  ...Object.keys(commonLabels({ tenant: 't', environment: 'e', instance: 'i', version: 'v', managedBy: 'm' })),
  ...Object.keys(POD_SECURITY_LABELS),
];

/** The checks on the operator's RoleBindings, each with the message a refused write gets. */
export function operatorBindingValidations(platformNamespace: string): AdmissionValidation[] {
  const tenantRole = tenantClusterRoleName(platformNamespace);
  return [
    v(
      `namespaceObject.metadata.name.startsWith(${lit(namespaceOf(''))}) && ${labelIs('namespaceObject', MANAGED_BY_LABEL, OPERATOR_NAME)}`,
      `the operator binds roles only in the tenant namespaces it manages (${namespaceOf('')}*, labelled ${MANAGED_BY_LABEL}=${OPERATOR_NAME})`,
    ),
    // The label alone is no proof (a namespace someone else made, or one the operator let go,
    // may carry it): the namespace's controller is a MarketIndexer, which owns the binding too,
    // so the binding goes with it.
    v(
      controlledByMarketIndexer('namespaceObject', 'n', controlledByMarketIndexer('object', 'b', 'b.uid == n.uid')),
      `the operator binds roles only in a namespace a ${KIND} controls (a controller ownerReference, ${API_VERSION}), its RoleBinding owned by that ${KIND}`,
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

/** The checks on the namespaces the operator creates and changes, each with the message a refused write gets. */
export function operatorNamespaceValidations(): AdmissionValidation[] {
  const own = `[${OPERATOR_NAMESPACE_LABELS.map(lit).join(', ')}]`;
  const psa = Object.entries(POD_SECURITY_LABELS);
  const psaText = psa.map(([k, val]) => `${k}=${val}`).join(', ');
  // Every label of `a` is the operator's, or is in `b` with the same value.
  const keptFrom = (a: string, b: string) =>
    `!has(${a}.metadata.labels) || ${a}.metadata.labels.all(k, k in ${own} || (has(${b}.metadata.labels) && k in ${b}.metadata.labels && ${b}.metadata.labels[k] == ${a}.metadata.labels[k]))`;
  return [
    v(`object.metadata.name.startsWith(${lit(namespaceOf(''))})`, `the operator creates and changes only tenant namespaces (${namespaceOf('')}*)`),
    v(
      psa.map(([k, val]) => `(${labelIs('object', k, val)})`).join(' && '),
      `a tenant namespace enforces the restricted Pod Security Standard (labelled ${psaText})`,
    ),
    // Labels select namespaces elsewhere (NetworkPolicies, monitoring): a new one carries only the operator's.
    v(
      `request.operation != 'CREATE' || (${labelIs('object', MANAGED_BY_LABEL, OPERATOR_NAME)} && object.metadata.labels.all(k, k in ${own} || (k == ${lit(NAME_LABEL)} && object.metadata.labels[k] == object.metadata.name)))`,
      `the operator creates a namespace with its own labels only (${MANAGED_BY_LABEL}=${OPERATOR_NAME}, the kit's and Pod Security's)`,
    ),
    v(
      `request.operation != 'CREATE' || (${controlledByMarketIndexer('object', 'r')})`,
      `the operator creates a namespace only for a ${KIND}, its controller (a controller ownerReference, ${API_VERSION})`,
    ),
    v(
      `request.operation != 'UPDATE' || ((${keptFrom('oldObject', 'object')}) && (${keptFrom('object', 'oldObject')}))`,
      `the operator changes only its own labels on a namespace (the kit's and Pod Security's); others' it leaves as they are`,
    ),
  ];
}

/** One policy and its binding, for the operator's writes of `resource` in `group`. */
function policyObjects(platformNamespace: string, labels: Record<string, string>, group: string, resource: string, validations: AdmissionValidation[]) {
  const name = admissionPolicyName(platformNamespace, resource);
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels },
    spec: {
      // An error evaluating it refuses the write, as a check that did not pass does.
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [group], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [resource] }],
      },
      // Only the operator's own writes; anyone else's are not this policy's concern.
      matchConditions: [{ name: 'operator-service-account', expression: `request.userInfo.username == 'system:serviceaccount:${platformNamespace}:${OPERATOR_NAME}'` }],
      validations,
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

/** The ValidatingAdmissionPolicies and their bindings, for the platform namespace given: RoleBindings', then namespaces'. */
export function operatorAdmissionObjects(platformNamespace: string, labels: Record<string, string>): Record<string, unknown>[] {
  return [
    ...policyObjects(platformNamespace, labels, ROLE_BINDING.group, ROLE_BINDING.plural, operatorBindingValidations(platformNamespace)),
    ...policyObjects(platformNamespace, labels, NAMESPACE.group, NAMESPACE.plural, operatorNamespaceValidations()),
  ];
}
