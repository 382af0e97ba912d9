import type { MarketIndexer } from '../cdk8s/lib/crd';
import { ROLE_BINDING } from '../cdk8s/lib/kinds';
import { TENANT_BINDING, tenantBinding } from '../cdk8s/lib/operator-permissions';
import type { Caches } from './informers';
import { isConflict, isForbidden, KubeError, type KubeClient, type KubeObject } from './kube/client';

/** How long a reconcile waits for a tenant namespace's caches to list before retrying. */
const NAMESPACE_SYNC_MS = 15_000;

export interface TenantAccess {
  /**
   * The operator's rights inside a tenant namespace it owns: the RoleBinding of the tenant
   * ClusterRole (created once per process; 409 means it is there), then the namespace's caches.
   * The binding is owned by the MarketIndexer, so it goes with it.
   */
  ensure(mi: MarketIndexer, namespace: string, labels: Record<string, string> | undefined): Promise<void>;
  /** Gives the operator's rights in a namespace up: its caches there, then its binding. */
  release(namespace: string): Promise<void>;
  /** Stops watching a namespace that is not (or no longer) its own. */
  drop(namespace: string): Promise<void>;
  /** Its binding there may be gone (a request was refused): the next `ensure` makes it again. */
  forget(namespace: string): void;
  /**
   * A namespace the resource already owns, first seen by this process (after a restart): its
   * binding was made by an earlier one, so it is taken as there, once, without a create the API
   * server would answer 409 (a restart at 1,000 tenants writes nothing). If it is gone after
   * all, the namespace's first refused request `forget`s it and the next `ensure` makes it.
   */
  adopt(namespace: string): void;
}

/** D-198: everything inside a tenant namespace goes through the binding made here. */
export function createTenantAccess(deps: { kube: KubeClient; caches: Caches; platformNamespace: string }): TenantAccess {
  const { kube, caches } = deps;
  const bound = new Set<string>();
  /** Namespaces this process has bound, adopted or forgotten: only the others can be adopted. */
  const seen = new Set<string>();
  return {
    async ensure(mi, namespace, labels) {
      seen.add(namespace);
      if (!bound.has(namespace)) {
        const owner = { apiVersion: mi.apiVersion, kind: mi.kind, name: mi.metadata.name, uid: mi.metadata.uid! };
        try {
          await kube.create(ROLE_BINDING, tenantBinding(deps.platformNamespace, namespace, labels ?? {}, owner) as unknown as KubeObject);
        } catch (err) {
          if (!isConflict(err)) throw err;
        }
        bound.add(namespace);
      }
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), NAMESPACE_SYNC_MS)));
      const synced = await Promise.race([caches.watchNamespace(namespace).then(() => 'synced' as const), late]);
      clearTimeout(timer);
      if (synced === 'late') throw new KubeError(0, 'NotSynced', `the caches of namespace ${namespace} have not listed yet`);
    },
    async release(namespace) {
      await caches.unwatchNamespace(namespace);
      try {
        await kube.delete(ROLE_BINDING, namespace, TENANT_BINDING);
      } catch (err) {
        // Forbidden: the binding is already gone, and with it the right to delete it.
        if (!isForbidden(err)) throw err;
      }
      bound.delete(namespace);
    },
    async drop(namespace) {
      await caches.unwatchNamespace(namespace);
      bound.delete(namespace);
    },
    forget(namespace) {
      seen.add(namespace);
      bound.delete(namespace);
    },
    adopt(namespace) {
      if (seen.has(namespace)) return;
      seen.add(namespace);
      bound.add(namespace);
    },
  };
}
