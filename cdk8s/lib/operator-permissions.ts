import { CHILD_KINDS, CLUSTER_ROLE, CNPG_CLUSTER, EVENT, LEASE, MARKET_INDEXER, NAMESPACE, ROLE_BINDING, SECRET, type KindInfo } from './kinds';
import { namespaceOf } from './names';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'bind';

/**
 * Where a permission holds (D-198):
 * - `cluster`: the operator's ClusterRole, bound cluster-wide; only what cannot be narrowed to a
 *   namespace (the MarketIndexers, creating a tenant's namespace, and the bootstrap of the
 *   tenant binding below);
 * - `tenant`: the tenant ClusterRole, never bound cluster-wide: the operator binds it in each
 *   tenant namespace (`mi-<tenant>`) it created, with a RoleBinding of its own, which Kubernetes
 *   lets it create because it holds `bind` on that one ClusterRole by name;
 * - `platform`: a Role in the operator's own namespace (its Lease, its Events).
 */
export type Scope = 'cluster' | 'tenant' | 'platform';

/** A `resourceNames` restriction, named symbolically: the names depend on the platform namespace. */
export type NameRef = 'tenantClusterRole' | 'tenantBinding';

export interface Permission {
  group: string;
  resource: string;
  verbs: Verb[];
  scope: Scope;
  resourceNames?: NameRef;
  /** Checked by the API server on the operator's behalf, never requested by it. */
  implied?: boolean;
}

export const OPERATOR_NAME = 'market-indexer-operator';
/** The operator's cluster-wide role: named after its namespace, so two environments in one cluster do not collide. */
export const clusterRoleName = (platformNamespace: string) => `${OPERATOR_NAME}:${platformNamespace}`;
/** What the operator may do inside a tenant namespace; bound there only, never cluster-wide. */
export const tenantClusterRoleName = (platformNamespace: string) => `${OPERATOR_NAME}-tenant:${platformNamespace}`;
/** The RoleBinding the operator makes in each tenant namespace it serves. */
export const TENANT_BINDING = OPERATOR_NAME;

/** A tenant namespace: the only namespaces the `tenant` scope reaches (names.ts `namespaceOf`). */
export const isTenantNamespace = (ns: string | undefined): ns is string => !!ns && ns.startsWith(namespaceOf(''));

export function resourceNamesOf(ref: NameRef, platformNamespace: string): string[] {
  switch (ref) {
    case 'tenantClusterRole':
      return [tenantClusterRoleName(platformNamespace)];
    case 'tenantBinding':
      return [TENANT_BINDING];
  }
}

const childVerbs = (k: KindInfo): Verb[] =>
  // Secrets are never deleted by the operator: one it no longer renders is let go (D-84); one a
  // tenant refers to is read to check its keys. They are listed per tenant namespace, never
  // watched cluster-wide (D-320); the other kinds are read through cluster-wide caches.
  // A CloudNativePG Cluster holds the tenant's database: applied, let go, never deleted (D-505).
  k === SECRET ? ['list', 'patch', 'get'] : k === CNPG_CLUSTER ? ['patch'] : ['patch', 'delete'];

/** The kinds the operator lists and watches cluster-wide, selected by its label (D-320): every namespaced child but Secrets. */
export const CLUSTER_WATCHED_KINDS = CHILD_KINDS.filter((k) => k.namespaced && k !== SECRET);

/**
 * Everything the operator may do, and all it does: its client refuses any other request
 * (operator/kube/client.ts, scope and names included), the kit renders its ClusterRoles and Role
 * from this list, and the operator suite runs it as its ServiceAccount against an API server that
 * enforces exactly the rendered RBAC, then checks that the requests it made used each entry.
 */
export const OPERATOR_PERMISSIONS: Permission[] = [
  { group: MARKET_INDEXER.group, resource: MARKET_INDEXER.plural, verbs: ['list', 'watch', 'patch'], scope: 'cluster' },
  { group: MARKET_INDEXER.group, resource: `${MARKET_INDEXER.plural}/status`, verbs: ['patch'], scope: 'cluster' },
  // Children carry ownerReferences with blockOwnerDeletion, which needs update on this.
  { group: MARKET_INDEXER.group, resource: `${MARKET_INDEXER.plural}/finalizers`, verbs: ['update'], scope: 'cluster', implied: true },
  // A tenant's namespace is created with a plain POST (two MarketIndexers claiming one tenant race
  // there, and the loser gets 409), and read when someone else made it.
  { group: NAMESPACE.group, resource: NAMESPACE.plural, verbs: ['list', 'watch', 'get', 'create'], scope: 'cluster' },
  // The bootstrap of a tenant namespace: the RoleBinding of the tenant ClusterRole. RBAC cannot
  // narrow `create` to names or namespaces; `bind` is narrowed to the tenant ClusterRole, so this
  // can grant nothing else (docs/operator.md, RBAC).
  { group: ROLE_BINDING.group, resource: ROLE_BINDING.plural, verbs: ['create'], scope: 'cluster' },
  // One cache per kind whatever the number of tenants (D-320): read-only, cluster-wide; what it
  // writes there still goes through the tenant binding below.
  ...CLUSTER_WATCHED_KINDS.map((k): Permission => ({ group: k.group, resource: k.plural, verbs: ['list', 'watch'], scope: 'cluster' })),
  { group: CLUSTER_ROLE.group, resource: CLUSTER_ROLE.plural, verbs: ['bind'], scope: 'cluster', resourceNames: 'tenantClusterRole', implied: true },
  // Inside a tenant namespace. A RoleBinding's rules on `namespaces` reach the namespace it lives in.
  { group: NAMESPACE.group, resource: NAMESPACE.plural, verbs: ['patch', 'delete'], scope: 'tenant' },
  ...CHILD_KINDS.filter((k) => k !== NAMESPACE).map((k): Permission => ({ group: k.group, resource: k.plural, verbs: childVerbs(k), scope: 'tenant' })),
  // A retained namespace is let go with the operator's own binding.
  { group: ROLE_BINDING.group, resource: ROLE_BINDING.plural, verbs: ['delete'], scope: 'tenant', resourceNames: 'tenantBinding' },
  // Its own namespace: leader election and the MarketIndexers' Events.
  { group: LEASE.group, resource: LEASE.plural, verbs: ['get', 'create', 'update'], scope: 'platform' },
  { group: EVENT.group, resource: EVENT.plural, verbs: ['create'], scope: 'platform' },
];

/** Where a request goes: the namespace (for a Namespace object, its own name) and the object's name. */
export interface Target {
  namespace?: string;
  name?: string;
  platformNamespace: string;
}

function inScope(p: Permission, t: Target, resource: string): boolean {
  const ns = resource === NAMESPACE.plural ? t.name : t.namespace;
  switch (p.scope) {
    case 'cluster':
      return true;
    case 'tenant':
      return isTenantNamespace(ns);
    case 'platform':
      return ns === t.platformNamespace;
  }
}

/** The entries of the table that allow a request (none: the operator may not make it). */
export function permissionsFor(group: string, resource: string, verb: Verb, target: Target): Permission[] {
  return OPERATOR_PERMISSIONS.filter(
    (p) =>
      p.group === group &&
      p.resource === resource &&
      p.verbs.includes(verb) &&
      inScope(p, target, resource) &&
      (!p.resourceNames || (target.name !== undefined && resourceNamesOf(p.resourceNames, target.platformNamespace).includes(target.name))),
  );
}

export const isPermitted = (group: string, resource: string, verb: Verb, target: Target): boolean => permissionsFor(group, resource, verb, target).length > 0;

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** The RBAC rules of one scope, in table order. */
export function rulesOf(scope: Scope, platformNamespace: string): PolicyRule[] {
  return OPERATOR_PERMISSIONS.filter((p) => p.scope === scope).map((p) => ({
    apiGroups: [p.group],
    resources: [p.resource],
    verbs: [...p.verbs],
    ...(p.resourceNames ? { resourceNames: resourceNamesOf(p.resourceNames, platformNamespace) } : {}),
  }));
}

/** The RoleBinding the operator creates in a tenant namespace, owned by its MarketIndexer. */
export function tenantBinding(
  platformNamespace: string,
  tenantNamespace: string,
  labels: Record<string, string>,
  owner: { apiVersion: string; kind: string; name: string; uid: string },
) {
  return {
    apiVersion: `${ROLE_BINDING.group}/${ROLE_BINDING.version}`,
    kind: ROLE_BINDING.kind,
    metadata: {
      name: TENANT_BINDING,
      namespace: tenantNamespace,
      labels,
      ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }],
    },
    roleRef: { apiGroup: CLUSTER_ROLE.group, kind: CLUSTER_ROLE.kind, name: tenantClusterRoleName(platformNamespace) },
    subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: platformNamespace }],
  };
}
