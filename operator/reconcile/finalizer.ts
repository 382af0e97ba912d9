import type { MarketIndexer } from '../../cdk8s/lib/crd';
import { MARKET_INDEXER, NAMESPACE } from '../../cdk8s/lib/kinds';
import { namespaceOf } from '../../cdk8s/lib/names';
import type { Logger } from '../../core/telemetry/logger';
import type { TenantAccess } from '../access';
import type { Caches } from '../informers';
import type { KubeClient, KubeObject } from '../kube/client';
import { liveNamespace } from './claim';
import { FINALIZER, ownedBy, type Outcome } from './outcome';
import { ownedObjects, removeOwned } from './prune';

const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

/** The resource with the operator's finalizer, added (one merge patch) when it lacks it. */
export async function addFinalizer(kube: Pick<KubeClient, 'mergePatch'>, mi: MarketIndexer): Promise<MarketIndexer> {
  const finalizers = mi.metadata.finalizers ?? [];
  if (finalizers.includes(FINALIZER)) return mi;
  return (await kube.mergePatch(MARKET_INDEXER, undefined, mi.metadata.name, {
    metadata: { finalizers: [...finalizers, FINALIZER], resourceVersion: mi.metadata.resourceVersion },
  })) as unknown as MarketIndexer;
}

/**
 * Lets a retained namespace go: no longer owned by this MarketIndexer nor labelled as the
 * operator's, so that neither the operator's caches nor its admission policy take it for a tenant
 * namespace any more (D-276): a stolen token cannot bind itself there again.
 */
export async function releaseNamespace(kube: Pick<KubeClient, 'mergePatch'>, ns: KubeObject, uid: string): Promise<void> {
  await kube.mergePatch(NAMESPACE, undefined, ns.metadata.name, {
    metadata: {
      ownerReferences: (ns.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid),
      labels: { [MANAGED_BY_LABEL]: null },
      resourceVersion: ns.metadata.resourceVersion,
    },
  });
}

/**
 * A deleted MarketIndexer: its deletion policy, then its finalizer removed. `Delete` deletes the
 * namespace it owns; `Retain` keeps the namespace and its Secrets (and the volumes in it), no
 * longer owned nor labelled as the operator's, deletes the rest it owns there, and gives the operator's rights there up (D-202).
 */
export async function finalize(
  deps: { kube: Pick<KubeClient, 'get' | 'mergePatch' | 'delete'>; caches: Pick<Caches, 'namespaces' | 'child'>; access: Omit<TenantAccess, 'forget'>; logger: Logger },
  mi: MarketIndexer,
): Promise<Outcome> {
  const { kube, caches, access } = deps;
  const finalizers = mi.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return { result: 'gone' };
  const uid = mi.metadata.uid!;
  const namespace = namespaceOf(mi.spec.tenant);
  const ns = await liveNamespace({ kube, namespaces: caches.namespaces }, namespace);
  const owned = !!ns && ownedBy(ns, uid) && !ns.metadata.deletionTimestamp;
  if (owned) await access.ensure(mi, namespace, ns.metadata.labels);
  if (mi.spec.deletionPolicy === 'Delete') {
    if (owned) await kube.delete(NAMESPACE, undefined, namespace, { uid: ns.metadata.uid });
    await access.drop(namespace);
  } else {
    if (owned) {
      // The namespace first (let go, like every kind that holds data), then what is in it.
      await releaseNamespace(kube, ns, uid);
      for (const { info, o } of ownedObjects(caches, namespace, uid)) await removeOwned(kube, info, o, uid);
    }
    // Not (or no longer) its own: a binding it left there is owned by this MarketIndexer, so
    // the garbage collector removes it with the resource.
    if (owned) await access.release(namespace);
    else await access.drop(namespace);
  }
  await kube.mergePatch(MARKET_INDEXER, undefined, mi.metadata.name, {
    metadata: { finalizers: finalizers.filter((f) => f !== FINALIZER), resourceVersion: mi.metadata.resourceVersion },
  });
  deps.logger.info({ marketIndexer: mi.metadata.name, deletionPolicy: mi.spec.deletionPolicy }, 'MarketIndexer finalized');
  return { result: 'finalized' };
}
