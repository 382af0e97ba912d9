import { GROUP, KIND, PLURAL, VERSION } from './crd';

/** A resource type the operator touches: where it lives in the API. */
export interface KindInfo {
  apiVersion: string;
  kind: string;
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

const k = (apiVersion: string, kind: string, plural: string, namespaced = true): KindInfo => {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return { apiVersion, kind, group: group!, version: version!, plural, namespaced };
};

export const MARKET_INDEXER = k(`${GROUP}/${VERSION}`, KIND, PLURAL, false);
export const LEASE = k('coordination.k8s.io/v1', 'Lease', 'leases');
export const EVENT = k('v1', 'Event', 'events');
export const SECRET = k('v1', 'Secret', 'secrets');
export const NAMESPACE = k('v1', 'Namespace', 'namespaces', false);
export const ROLE_BINDING = k('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings');
export const CLUSTER_ROLE = k('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false);
/** A tenant's CloudNativePG database (D-500): it holds data, so it is never deleted by the operator (D-505). */
export const CNPG_CLUSTER = k('postgresql.cnpg.io/v1', 'Cluster', 'clusters');

/** Every kind the kit renders for a tenant: the operator applies, watches and prunes these. A test
 * keeps this list equal to the kinds the tenant construct renders. */
export const CHILD_KINDS: KindInfo[] = [
  NAMESPACE,
  k('v1', 'ServiceAccount', 'serviceaccounts'),
  k('v1', 'ConfigMap', 'configmaps'),
  SECRET,
  k('v1', 'Service', 'services'),
  k('v1', 'ResourceQuota', 'resourcequotas'),
  k('v1', 'LimitRange', 'limitranges'),
  k('apps/v1', 'Deployment', 'deployments'),
  k('apps/v1', 'StatefulSet', 'statefulsets'),
  k('autoscaling/v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers'),
  k('policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets'),
  k('networking.k8s.io/v1', 'Ingress', 'ingresses'),
  k('gateway.networking.k8s.io/v1', 'HTTPRoute', 'httproutes'),
  k('networking.k8s.io/v1', 'NetworkPolicy', 'networkpolicies'),
  k('monitoring.coreos.com/v1', 'ServiceMonitor', 'servicemonitors'),
  k('monitoring.coreos.com/v1', 'PrometheusRule', 'prometheusrules'),
  CNPG_CLUSTER,
];

/** The kinds whose objects hold a tenant's data: kept when a MarketIndexer with `Retain` goes. */
export const DATA_KINDS = new Set(['Namespace', 'Secret', CNPG_CLUSTER.kind]);

export function kindOf(apiVersion: string, kind: string): KindInfo {
  const info = [MARKET_INDEXER, LEASE, EVENT, ROLE_BINDING, ...CHILD_KINDS].find((x) => x.apiVersion === apiVersion && x.kind === kind);
  if (!info) throw new Error(`the operator does not manage ${kind} (${apiVersion})`);
  return info;
}
