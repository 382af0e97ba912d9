import { kindOf, NAMESPACE } from '../../cdk8s/lib/kinds';
import { parseQuantity } from '../../cdk8s/lib/quantity';
import type { Caches } from '../informers';
import type { KubeClient, KubeObject } from '../kube/client';
import { APPLIED_HASH, type Rendered } from '../render';
import { desiredNamespace } from './claim';
import { FIELD_MANAGER } from './outcome';

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/**
 * Whether the live object already holds everything the operator renders: every field it sets has
 * the value it sets (fields the API server defaults are the server's business; quantities compare
 * by amount, since the server writes "0.5" back as "500m").
 */
export function holds(live: unknown, desired: unknown): boolean {
  if (isMap(desired)) return isMap(live) && Object.entries(desired).every(([k, v]) => holds(live[k], v));
  if (Array.isArray(desired)) return Array.isArray(live) && live.length === desired.length && desired.every((v, i) => holds(live[i], v));
  if (typeof desired === 'string' && typeof live === 'string' && desired !== live && QUANTITY.test(desired) && QUANTITY.test(live)) {
    return parseQuantity(desired) === parseQuantity(live);
  }
  return live === desired;
}

/** An object is sent only when it is missing, going, rendered differently (its hash), or changed by someone. */
export const needsApply = (desired: KubeObject, live: KubeObject | undefined) =>
  !live ||
  live.metadata.deletionTimestamp !== undefined ||
  live.metadata.annotations?.[APPLIED_HASH] !== desired.metadata.annotations?.[APPLIED_HASH] ||
  !holds(live, desired);

/** Server-side apply of the tenant's namespace, when `live` does not hold it. */
export async function applyNamespace(kube: Pick<KubeClient, 'apply'>, rendered: Rendered, live: KubeObject): Promise<void> {
  const desired = desiredNamespace(rendered);
  if (needsApply(desired, live)) await kube.apply(NAMESPACE, desired, FIELD_MANAGER);
}

/**
 * Server-side apply (one field manager) of every other rendered object that differs from what
 * the namespace's caches hold. Returns the kinds the cluster does not serve (a missing CRD),
 * whose objects were not applied.
 */
export async function applyObjects(deps: { kube: Pick<KubeClient, 'apply'>; caches: Pick<Caches, 'child'> }, rendered: Rendered): Promise<string[]> {
  const unserved: string[] = [];
  for (const desired of rendered.objects) {
    if (desired.kind === 'Namespace') continue;
    const info = kindOf(desired.apiVersion, desired.kind);
    const cache = deps.caches.child(desired.kind, rendered.namespace);
    if (!cache) {
      unserved.push(desired.kind);
      continue;
    }
    if (needsApply(desired, cache.get(desired.metadata.name, desired.metadata.namespace))) await deps.kube.apply(info, desired, FIELD_MANAGER);
  }
  return unserved;
}
