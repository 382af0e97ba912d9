import type { Json } from './fields';
import { ApiError, type Store } from './store';

/** A request as the server records it (tests attribute them by bearer token). */
export interface RequestRecord {
  token: string | undefined;
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
  group: string;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
  status: number;
  /** The body's media type, for requests with one. */
  contentType?: string;
  /** Milliseconds from the request's arrival to its answer (a watch: none until it ends). */
  ms?: number;
}

/**
 * RBAC authorization as kube-apiserver's RBAC authorizer does it, for identities named by bearer
 * token (any other token is unrestricted, like a member of system:masters): the rules of the
 * ClusterRoles and Roles that the ClusterRoleBindings and RoleBindings held in the store bind to
 * the identity, evaluated per request (verb, API group, resource with subresource, namespace,
 * resourceNames); and the escalation checks on writing RBAC objects (pkg/registry/rbac): a Role
 * or ClusterRole only with rules the writer holds (or `escalate`), a binding only of a role whose
 * rules the writer holds where the binding applies, or with `bind` on that role.
 *
 * Not modelled: aggregated ClusterRoles, nonResourceURLs (discovery is open to all), impersonation.
 */
export interface Identity {
  user: string;
  groups: string[];
}

export const serviceAccountIdentity = (namespace: string, name: string): Identity => ({
  user: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
});

export interface Authorizer {
  /** The identity a bearer token names; undefined for a client RBAC does not restrict. */
  identify(token: string | undefined): Identity | undefined;
  /** Throws 403 Forbidden unless the request's identity may make it. */
  authorize(r: RequestRecord): void;
  /** The escalation checks on the object a write of a Role, ClusterRole or binding would store. */
  admit(r: RequestRecord, obj: Json): void;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}
interface Attributes {
  verb: string;
  group: string;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
}

const RBAC = 'rbac.authorization.k8s.io';

function ruleAllows(rule: Rule, a: Attributes): boolean {
  const has = (list: string[] | undefined, v: string) => (list ?? []).includes('*') || (list ?? []).includes(v);
  if (!has(rule.verbs, a.verb) || !has(rule.apiGroups, a.group)) return false;
  const [plural, sub] = a.resource.split('/');
  const resources = rule.resources ?? [];
  const resourceOk = resources.includes('*') || resources.includes(a.resource) || (sub !== undefined && resources.includes(`*/${sub}`)) || (sub === undefined && resources.includes(plural!));
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (a.name !== undefined && names.includes(a.name));
}

/** The namespace RBAC sees: a Namespace object's own name (a Role in a namespace reaches it). */
const namespaceOf = (r: Pick<RequestRecord, 'resource' | 'namespace' | 'name'>) => (r.resource.split('/')[0] === 'namespaces' ? r.name : r.namespace);

export function createRbacAuthorizer(store: Store, tokens: Record<string, Identity>): Authorizer {
  const type = (plural: string) => store.typeOf(RBAC, 'v1', plural);

  const subjectMatches = (who: Identity, s: Json) => {
    switch (s.kind) {
      case 'ServiceAccount':
        return who.user === `system:serviceaccount:${s.namespace}:${s.name}`;
      case 'User':
        return who.user === s.name;
      case 'Group':
        return who.groups.includes(s.name as string);
      default:
        return false;
    }
  };

  const rulesOfRole = (ref: Json, namespace: string | undefined): Rule[] => {
    const role = ref.kind === 'ClusterRole' ? store.find(type('clusterroles'), undefined, ref.name as string) : namespace ? store.find(type('roles'), namespace, ref.name as string) : undefined;
    return ((role?.rules as Rule[] | undefined) ?? []);
  };

  /** The rules that hold for an identity in a namespace (undefined: cluster-wide ones only). */
  function rulesFor(who: Identity, namespace: string | undefined): Rule[] {
    const bound = (b: Json) => ((b.subjects as Json[] | undefined) ?? []).some((s) => subjectMatches(who, s));
    const rules: Rule[] = [];
    for (const b of store.list(type('clusterrolebindings'), undefined, [])) if (bound(b)) rules.push(...rulesOfRole(b.roleRef as Json, undefined));
    if (namespace) for (const b of store.list(type('rolebindings'), namespace, [])) if (bound(b)) rules.push(...rulesOfRole(b.roleRef as Json, namespace));
    return rules;
  }

  const allowed = (who: Identity, a: Attributes) => rulesFor(who, a.namespace).some((r) => ruleAllows(r, a));

  /** The parts of `wanted` that the holder's rules do not cover (RBAC's Covers). */
  function uncovered(held: Rule[], wanted: Rule[]): string[] {
    const missing: string[] = [];
    for (const w of wanted) {
      for (const group of w.apiGroups ?? []) {
        for (const resource of w.resources ?? []) {
          for (const verb of w.verbs ?? []) {
            for (const name of w.resourceNames?.length ? w.resourceNames : [undefined]) {
              const covered = held.some((h) => {
                const lit = (list: string[] | undefined, v: string) => (list ?? []).includes('*') || (list ?? []).includes(v);
                if (!lit(h.verbs, verb) || !lit(h.apiGroups, group) || !lit(h.resources, resource)) return false;
                const names = h.resourceNames ?? [];
                return names.length === 0 || (name !== undefined && names.includes(name));
              });
              if (!covered) missing.push(`{APIGroups:["${group}"], Resources:["${resource}"]${name ? `, ResourceNames:["${name}"]` : ''}, Verbs:["${verb}"]}`);
            }
          }
        }
      }
    }
    return missing;
  }

  const describe = (who: Identity) => `user "${who.user}" (groups=${JSON.stringify(who.groups)})`;

  return {
    identify: (token) => (token === undefined ? undefined : tokens[token]),
    authorize(r) {
      const who = r.token === undefined ? undefined : tokens[r.token];
      if (!who) return;
      const a = { verb: r.verb, group: r.group, resource: r.resource, namespace: namespaceOf(r), name: r.name };
      if (allowed(who, a)) return;
      const [plural] = r.resource.split('/');
      const what = `${plural}${r.group ? `.${r.group}` : ''}${r.name ? ` "${r.name}"` : ''}`;
      const where = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
      throw new ApiError(403, 'Forbidden', `${what} is forbidden: User "${who.user}" cannot ${r.verb} resource "${r.resource}" in API group "${r.group}" ${where}`, {
        name: r.name,
        group: r.group,
        kind: plural,
      });
    },
    admit(r, obj) {
      const who = r.token === undefined ? undefined : tokens[r.token];
      if (!who || r.group !== RBAC) return;
      const meta = obj.metadata as Json;
      const name = meta.name as string;
      const namespace = meta.namespace as string | undefined;
      const plural = r.resource.split('/')[0]!;
      const refuse = (detail: string) => {
        throw new ApiError(403, 'Forbidden', `${plural}.${RBAC} "${name}" is forbidden: ${describe(who)} is attempting to grant RBAC permissions not currently held:\n${detail}`, { name, group: RBAC, kind: plural });
      };
      if (plural === 'roles' || plural === 'clusterroles') {
        if (allowed(who, { verb: 'escalate', group: RBAC, resource: plural, namespace, name })) return;
        const missing = uncovered(rulesFor(who, namespace), (obj.rules as Rule[] | undefined) ?? []);
        if (missing.length) refuse(missing.join('\n'));
        return;
      }
      if (plural === 'rolebindings' || plural === 'clusterrolebindings') {
        const ref = obj.roleRef as Json;
        const refPlural = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
        if (allowed(who, { verb: 'bind', group: RBAC, resource: refPlural, namespace, name: ref.name as string })) return;
        // The role's rules are needed to compare: a role that does not exist is NotFound.
        const role = refPlural === 'clusterroles' ? store.find(type('clusterroles'), undefined, ref.name as string) : namespace ? store.find(type('roles'), namespace, ref.name as string) : undefined;
        if (!role) throw new ApiError(404, 'NotFound', `${refPlural}.${RBAC} "${ref.name}" not found`, { name: ref.name, group: RBAC, kind: refPlural });
        const missing = uncovered(rulesFor(who, namespace), rulesOfRole(ref, namespace));
        if (missing.length) refuse(missing.join('\n'));
      }
    },
  };
}
