import { CHILD_KINDS, EVENT, LEASE, MARKET_INDEXER, NAMESPACE, SECRET, type KindInfo } from './kinds';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export interface Permission {
  group: string;
  resource: string;
  verbs: Verb[];
  /** Granted in the operator's own namespace only (a Role), not cluster-wide. */
  namespaced?: boolean;
  /** Checked by the API server on the operator's behalf, never requested by it. */
  implied?: boolean;
}

const childVerbs = (k: KindInfo): Verb[] => {
  // Secrets are never deleted by the operator: one it no longer renders is let go (D-84).
  const verbs: Verb[] = k === SECRET ? ['list', 'watch', 'patch'] : ['list', 'watch', 'patch', 'delete'];
  // The namespace is created with a plain POST first (two MarketIndexers claiming one tenant
  // race there, and the loser gets 409), and read when someone else made it; a Secret is read
  // to check the keys a tenant refers to.
  if (k === NAMESPACE) verbs.push('create', 'get');
  if (k === SECRET) verbs.push('get');
  return verbs;
};

/**
 * Everything the operator may do, and all it does: its client refuses any other request
 * (operator/kube/client.ts), the kit renders its ClusterRole and Role from this list (here, beside
 * the kinds the kit renders), and the operator suite checks that the requests it saw used each
 * entry and nothing else.
 */
export const OPERATOR_PERMISSIONS: Permission[] = [
  { group: MARKET_INDEXER.group, resource: MARKET_INDEXER.plural, verbs: ['list', 'watch', 'patch'] },
  { group: MARKET_INDEXER.group, resource: `${MARKET_INDEXER.plural}/status`, verbs: ['patch'] },
  // Children carry ownerReferences with blockOwnerDeletion, which needs update on this.
  { group: MARKET_INDEXER.group, resource: `${MARKET_INDEXER.plural}/finalizers`, verbs: ['update'], implied: true },
  ...CHILD_KINDS.map((k) => ({ group: k.group, resource: k.plural, verbs: childVerbs(k) })),
  { group: EVENT.group, resource: EVENT.plural, verbs: ['create'] },
  { group: LEASE.group, resource: LEASE.plural, verbs: ['get', 'create', 'update'], namespaced: true },
];

export function isPermitted(group: string, resource: string, verb: Verb): boolean {
  return OPERATOR_PERMISSIONS.some((p) => p.group === group && p.resource === resource && p.verbs.includes(verb));
}
