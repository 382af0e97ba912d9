import type { MarketIndexer } from '../../cdk8s/lib/crd';
import { NAMESPACE } from '../../cdk8s/lib/kinds';
import type { ObjectCache } from '../informers';
import { isConflict, KubeError, type KubeClient, type KubeObject } from '../kube/client';
import type { Rendered } from '../render';
import { ownedBy, type Problem } from './outcome';

/** The tenant namespace, from the cache or (when someone else made it) from the API server. */
export async function liveNamespace(deps: { kube: Pick<KubeClient, 'get'>; namespaces: ObjectCache }, name: string): Promise<KubeObject | undefined> {
  return deps.namespaces.get(name) ?? (await deps.kube.get(NAMESPACE, undefined, name));
}

/**
 * The tenant's namespace belongs to one MarketIndexer: the first to create it (D-202). One that
 * exists and is not this resource's is a Problem naming its owner, or saying it has none.
 */
export function checkClaim(mi: MarketIndexer, namespace: string, live: KubeObject | undefined): Problem | undefined {
  if (!live || ownedBy(live, mi.metadata.uid!)) return undefined;
  const owner = live.metadata.ownerReferences?.find((r) => r.controller);
  return {
    reason: 'TenantClaimed',
    message: owner
      ? `tenant ${mi.spec.tenant} belongs to ${owner.kind} ${owner.name}: its namespace ${namespace} is owned there`
      : `namespace ${namespace} exists and no MarketIndexer owns it; delete it, or add this MarketIndexer as its controller owner`,
  };
}

/** The Namespace among the rendered objects (the kit renders exactly one). */
export const desiredNamespace = (rendered: Rendered): KubeObject => rendered.objects.find((o) => o.kind === 'Namespace')!;

/**
 * Claims the tenant: creates its namespace (a plain create, so two MarketIndexers for one tenant
 * race here and the loser's next reconcile finds the claim).
 */
export async function createNamespace(kube: Pick<KubeClient, 'create'>, rendered: Rendered): Promise<KubeObject> {
  try {
    return await kube.create(NAMESPACE, desiredNamespace(rendered));
  } catch (err) {
    if (isConflict(err)) throw new KubeError(409, 'AlreadyExists', `namespace ${rendered.namespace} was created meanwhile`);
    throw err;
  }
}
