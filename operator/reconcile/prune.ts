import type { MarketIndexer } from '../../cdk8s/lib/crd';
import { CHILD_KINDS, DATA_KINDS, kindOf, type KindInfo } from '../../cdk8s/lib/kinds';
import type { Caches } from '../informers';
import type { KubeClient, KubeObject } from '../kube/client';
import type { Rendered } from '../render';
import { ownedBy } from './outcome';

type Writes = Pick<KubeClient, 'mergePatch' | 'delete'>;

/**
 * Removes an object this MarketIndexer owns: deleted, unless it holds data (a Secret, the
 * namespace), which is let go instead (its ownerReference dropped; D-84).
 */
export async function removeOwned(kube: Writes, info: KindInfo, o: KubeObject, uid: string): Promise<void> {
  if (DATA_KINDS.has(info.kind)) {
    await kube.mergePatch(kindOf(o.apiVersion, o.kind), o.metadata.namespace, o.metadata.name, {
      metadata: { ownerReferences: (o.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid), resourceVersion: o.metadata.resourceVersion },
    });
  } else {
    await kube.delete(info, o.metadata.namespace, o.metadata.name, { uid: o.metadata.uid });
  }
}

/**
 * The live objects of `namespace` (from the caches, kind by kind as it goes) this MarketIndexer
 * controls and that are not being deleted.
 */
export function* ownedObjects(caches: Pick<Caches, 'child'>, namespace: string, uid: string): Generator<{ info: KindInfo; o: KubeObject }> {
  for (const info of CHILD_KINDS) {
    if (!info.namespaced) continue;
    for (const o of caches.child(info.kind, namespace)?.list(namespace) ?? []) {
      if (ownedBy(o, uid) && !o.metadata.deletionTimestamp) yield { info, o };
    }
  }
}

const keyOf = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * What this MarketIndexer owns and no longer renders goes (never what it does not own); a Secret
 * it no longer renders is let go instead: it may hold what someone put there.
 */
export async function prune(deps: { kube: Writes; caches: Pick<Caches, 'child'> }, mi: MarketIndexer, rendered: Rendered): Promise<void> {
  const wanted = new Set(rendered.objects.map(keyOf));
  for (const { info, o } of ownedObjects(deps.caches, rendered.namespace, mi.metadata.uid!)) {
    if (!wanted.has(keyOf(o))) await removeOwned(deps.kube, info, o, mi.metadata.uid!);
  }
}
