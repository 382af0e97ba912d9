/**
 * The resource types the test API server serves: the built-in ones the deployment kit renders or
 * the operator uses, and custom ones registered by creating a CustomResourceDefinition.
 */
export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  /** Has a /status subresource: the main endpoint ignores `status`, /status changes only it. */
  status: boolean;
  shortNames?: string[];
  /** Printer columns of a CRD version (kubectl get). */
  columns?: { name: string; type: string; jsonPath: string }[];
  /** The CRD's schema, for custom resources. */
  schema?: Record<string, unknown>;
}

export const apiVersionOf = (t: Pick<ResourceType, 'group' | 'version'>) => (t.group ? `${t.group}/${t.version}` : t.version);

const core = (kind: string, plural: string, namespaced = true, status = false, shortNames?: string[]): ResourceType => ({
  group: '',
  version: 'v1',
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  status,
  shortNames,
});
const grouped = (group: string, version: string, kind: string, plural: string, namespaced = true, status = false, shortNames?: string[]): ResourceType => ({
  group,
  version,
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  status,
  shortNames,
});

export const BUILT_IN: ResourceType[] = [
  core('Namespace', 'namespaces', false, true, ['ns']),
  core('ConfigMap', 'configmaps', true, false, ['cm']),
  core('Secret', 'secrets'),
  core('Service', 'services', true, true, ['svc']),
  core('ServiceAccount', 'serviceaccounts', true, false, ['sa']),
  core('Event', 'events', true, false, ['ev']),
  core('ResourceQuota', 'resourcequotas', true, true, ['quota']),
  core('LimitRange', 'limitranges', true, false, ['limits']),
  core('PersistentVolumeClaim', 'persistentvolumeclaims', true, true, ['pvc']),
  grouped('apps', 'v1', 'Deployment', 'deployments', true, true, ['deploy']),
  grouped('apps', 'v1', 'StatefulSet', 'statefulsets', true, true, ['sts']),
  grouped('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, true, ['hpa']),
  grouped('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, true, ['pdb']),
  grouped('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, true, ['ing']),
  grouped('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, false, ['netpol']),
  grouped('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  grouped('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  grouped('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  grouped('rbac.authorization.k8s.io', 'v1', 'Role', 'roles'),
  grouped('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings'),
  grouped('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', false, true),
  grouped('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', false),
  grouped('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, true, ['crd', 'crds']),
];

/**
 * The resource type a CRD object defines: its storage version. The store keeps one version of
 * each resource, so a CRD's other served versions (Gateway API's v1beta1 beside v1) are not
 * served here: a client asking for one gets 404, never a version converted wrongly.
 */
export function typesOfCrd(crd: {
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string; singular?: string; shortNames?: string[] };
    versions: {
      name: string;
      served: boolean;
      storage?: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
      schema?: { openAPIV3Schema?: Record<string, unknown> };
    }[];
  };
}): ResourceType[] {
  const s = crd.spec;
  return s.versions
    .filter((v) => v.served && v.storage !== false)
    .map((v) => ({
      group: s.group,
      version: v.name,
      kind: s.names.kind,
      plural: s.names.plural,
      singular: s.names.singular ?? s.names.kind.toLowerCase(),
      namespaced: s.scope === 'Namespaced',
      status: v.subresources?.status !== undefined,
      shortNames: s.names.shortNames,
      columns: v.additionalPrinterColumns,
      schema: v.schema?.openAPIV3Schema,
    }));
}
