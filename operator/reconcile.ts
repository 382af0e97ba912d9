import { KitInputError } from '../cdk8s/lib/resolve';
import type { Condition, MarketIndexer, MarketIndexerStatus } from '../cdk8s/lib/crd';
import { parseQuantity } from '../cdk8s/lib/quantity';
import { NAMES, namespaceOf } from '../cdk8s/lib/names';
import type { TenantInput } from '../cdk8s/lib/values';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';
import { nextConditions, transitions, type ConditionInput } from './conditions';
import type { Caches } from './informers';
import { isConflict, isForbidden, KubeError, type KubeClient, type KubeObject } from './kube/client';
import { createTenantAccess } from './access';
import { CHILD_KINDS, DATA_KINDS, EVENT, kindOf, MARKET_INDEXER, NAMESPACE, SECRET } from '../cdk8s/lib/kinds';
import { specPolicyProblems, type SpecPolicy } from './policy';
import { APPLIED_HASH, renderTenant, type Rendered } from './render';

export const FINALIZER = 'marketindexer.dev/cleanup';
export const FIELD_MANAGER = 'market-indexer-operator';

/** What the operator last read from a tenant indexer's `/status`. */
export interface IndexerObservation {
  slotLag: number;
  lastProcessedSlot: string;
  writer: string | null;
  indexerRunning: boolean;
}

export type Outcome =
  | { result: 'converged' | 'progressing' | 'gone' | 'finalized' }
  | { result: 'degraded'; reason: string; retryAfterMs: number };

export interface Reconciler {
  reconcile(name: string): Promise<Outcome>;
  /** The operator's binding in a namespace is gone (its requests there were refused): make it again. */
  forgetAccess(namespace: string): void;
}

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

const needsApply = (desired: KubeObject, live: KubeObject | undefined) =>
  !live ||
  live.metadata.deletionTimestamp !== undefined ||
  live.metadata.annotations?.[APPLIED_HASH] !== desired.metadata.annotations?.[APPLIED_HASH] ||
  !holds(live, desired);

const ownedBy = (o: KubeObject, uid: string) => o.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller);

/**
 * Level-triggered reconcile of one MarketIndexer: render the tenant with the kit's construct,
 * apply (server-side, one field manager) only the objects that differ from what the caches hold,
 * delete what it owns and no longer renders, and write the status only when it changed. A
 * MarketIndexer that cannot be served (an invalid spec, a missing Secret, a tenant another one
 * claims) is `Degraded` with a reason and an Event, and nothing else is touched.
 */
export function createReconciler(deps: {
  kube: KubeClient;
  caches: Caches;
  logger: Logger;
  metrics: Metrics;
  environment: string;
  defaults: TenantInput;
  policy: SpecPolicy;
  platformNamespace: string;
  lagThreshold: number;
  observation(mi: MarketIndexer): IndexerObservation | undefined;
  now?: () => string;
}): Reconciler {
  const { kube, caches, logger } = deps;
  const now = deps.now ?? (() => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'));

  async function event(mi: MarketIndexer, c: Condition): Promise<void> {
    const warning = (c.type === 'Ready' && c.status !== 'True') || (c.type !== 'Ready' && c.type !== 'Progressing' && c.status === 'True');
    const ts = now();
    const name = `${mi.metadata.name}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 6)}`;
    // Events of a cluster-scoped object go to the operator's own namespace, the only one where it
    // may create them (client-go's recorder would use `default`); `kubectl describe` finds them (D-199).
    await kube
      .create(EVENT, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace: deps.platformNamespace },
        involvedObject: { apiVersion: mi.apiVersion, kind: mi.kind, name: mi.metadata.name, uid: mi.metadata.uid },
        reason: c.reason,
        message: `${c.type}=${c.status}: ${c.message}`,
        type: warning ? 'Warning' : 'Normal',
        firstTimestamp: ts,
        lastTimestamp: ts,
        count: 1,
        source: { component: FIELD_MANAGER },
        reportingComponent: FIELD_MANAGER,
      })
      .catch((err: Error) => logger.warn({ err: err.message, marketIndexer: mi.metadata.name }, 'event not recorded'));
  }

  /**
   * The status each resource was last given, until the cache shows that write: a reconcile that
   * runs before the watch delivers it compares with what was written, not with the older status
   * the cache still holds (which would write it again, and repeat its Events). Bounded in time,
   * in case the cache never shows that version (someone wrote right after).
   */
  const written = new Map<string, { status: MarketIndexerStatus; resourceVersion: string | undefined; at: number }>();
  const MEMO_MS = 30_000;

  async function writeStatus(mi: MarketIndexer, next: MarketIndexerStatus): Promise<void> {
    const memo = written.get(mi.metadata.name);
    const fresh = memo && Date.now() - memo.at < MEMO_MS && memo.resourceVersion !== mi.metadata.resourceVersion;
    if (memo && !fresh) written.delete(mi.metadata.name);
    const current = (fresh ? memo.status : mi.status) ?? {};
    if (JSON.stringify(canonical(current)) === JSON.stringify(canonical(next))) return;
    // A merge patch of the whole status; null removes what is no longer known.
    const indexer = next.indexer ?? {};
    const out = await kube.mergePatch(MARKET_INDEXER, undefined, mi.metadata.name, {
      status: {
        ...next,
        indexer: { lastProcessedSlot: indexer.lastProcessedSlot ?? null, slotLag: indexer.slotLag ?? null, writer: indexer.writer ?? null },
      },
    }, 'status');
    written.set(mi.metadata.name, { status: next, resourceVersion: out.metadata.resourceVersion, at: Date.now() });
    for (const c of transitions(current.conditions, next.conditions ?? [])) await event(mi, c);
  }

  function status(mi: MarketIndexer, namespace: string, conditions: ConditionInput[], apiReady: number | undefined): MarketIndexerStatus {
    const o = deps.observation(mi);
    const generation = mi.metadata.generation ?? 1;
    return {
      observedGeneration: generation,
      namespace,
      conditions: nextConditions(mi.status?.conditions, conditions, generation, now()),
      indexer: o ? { lastProcessedSlot: o.lastProcessedSlot, slotLag: o.slotLag, ...(o.writer ? { writer: o.writer } : {}) } : {},
      api: { readyReplicas: apiReady ?? 0 },
    };
  }

  function lagCondition(mi: MarketIndexer): ConditionInput {
    const o = deps.observation(mi);
    if (!o) return { type: 'IndexerLagging', status: 'Unknown', reason: 'StatusUnavailable', message: 'the indexer\'s /status has not been read yet or did not answer' };
    if (o.slotLag > deps.lagThreshold) {
      return { type: 'IndexerLagging', status: 'True', reason: 'SlotLagHigh', message: `slot lag ${o.slotLag} is above ${deps.lagThreshold}` };
    }
    return { type: 'IndexerLagging', status: 'False', reason: 'WithinThreshold', message: `slot lag ${o.slotLag} is within ${deps.lagThreshold}` };
  }

  async function degrade(mi: MarketIndexer, namespace: string, reason: string, message: string): Promise<Outcome> {
    logger.warn({ marketIndexer: mi.metadata.name, reason, message }, 'MarketIndexer degraded');
    await writeStatus(
      mi,
      status(
        mi,
        namespace,
        [
          { type: 'Ready', status: 'False', reason, message },
          { type: 'Progressing', status: 'False', reason, message: 'waiting for the problem to be fixed' },
          { type: 'Degraded', status: 'True', reason, message },
          lagCondition(mi),
        ],
        undefined,
      ),
    );
    return { result: 'degraded', reason, retryAfterMs: 15_000 };
  }

  /** The tenant namespace, from the cache or (when someone else made it) from the API server. */
  async function liveNamespace(name: string): Promise<KubeObject | undefined> {
    return caches.namespaces.get(name) ?? (await kube.get(NAMESPACE, undefined, name));
  }

  const access = createTenantAccess({ kube, caches, platformNamespace: deps.platformNamespace });

  async function missingSecrets(rendered: Rendered): Promise<string[]> {
    const v = rendered.values;
    if (v.devStores.enabled) return [];
    const refs = [v.database.secretRef, v.redis.secretRef];
    if (v.source.type === 'rpc' && v.source.rpcUrlSecretRef) refs.push(v.source.rpcUrlSecretRef);
    if (v.source.type === 'rpc' && v.source.rpcWsUrlSecretRef) refs.push(v.source.rpcWsUrlSecretRef);
    if (v.source.webhookSecretRef) refs.push(v.source.webhookSecretRef);
    const missing: string[] = [];
    const seen = new Map<string, KubeObject | undefined>();
    for (const ref of refs) {
      if (!seen.has(ref.name)) seen.set(ref.name, await kube.get(SECRET, rendered.namespace, ref.name));
      const secret = seen.get(ref.name) as (KubeObject & { data?: Json; stringData?: Json }) | undefined;
      if (!secret || !(ref.key in (secret.data ?? {}) || ref.key in (secret.stringData ?? {}))) missing.push(`${ref.name}/${ref.key}`);
    }
    return [...new Set(missing)];
  }

  /** Drops this MarketIndexer's ownerReference: what holds data is let go, never deleted. */
  async function letGo(o: KubeObject, uid: string): Promise<void> {
    const info = kindOf(o.apiVersion, o.kind);
    await kube.mergePatch(info, o.metadata.namespace, o.metadata.name, {
      metadata: { ownerReferences: (o.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid), resourceVersion: o.metadata.resourceVersion },
    });
  }

  async function finalize(mi: MarketIndexer): Promise<Outcome> {
    const finalizers = mi.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return { result: 'gone' };
    const uid = mi.metadata.uid!;
    const namespace = namespaceOf(mi.spec.tenant);
    const ns = await liveNamespace(namespace);
    const owned = !!ns && ownedBy(ns, uid) && !ns.metadata.deletionTimestamp;
    if (owned) await access.ensure(mi, namespace, ns.metadata.labels);
    if (mi.spec.deletionPolicy === 'Delete') {
      if (owned) await kube.delete(NAMESPACE, undefined, namespace, { uid: ns.metadata.uid });
      await access.drop(namespace);
    } else {
      // Retain: the namespace and its Secrets (and the volumes in it) stay, no longer owned, and
      // the operator gives its rights there up.
      if (owned) {
        for (const info of CHILD_KINDS) {
          const objects = info.namespaced ? (caches.child(info.kind, namespace)?.list(namespace) ?? []) : [ns];
          for (const o of objects) {
            if (!ownedBy(o, uid) || o.metadata.deletionTimestamp) continue;
            if (DATA_KINDS.has(info.kind)) await letGo(o, uid);
            else await kube.delete(info, o.metadata.namespace, o.metadata.name, { uid: o.metadata.uid });
          }
        }
      }
      // Not (or no longer) its own: a binding it left there is owned by this MarketIndexer, so
      // the garbage collector removes it with the resource.
      if (owned) await access.release(namespace);
      else await access.drop(namespace);
    }
    await kube.mergePatch(MARKET_INDEXER, undefined, mi.metadata.name, {
      metadata: { finalizers: finalizers.filter((f) => f !== FINALIZER), resourceVersion: mi.metadata.resourceVersion },
    });
    logger.info({ marketIndexer: mi.metadata.name, deletionPolicy: mi.spec.deletionPolicy }, 'MarketIndexer finalized');
    return { result: 'finalized' };
  }

  async function reconcile(name: string): Promise<Outcome> {
    try {
      return await reconcileOnce(name);
    } catch (err) {
      // Refused in a tenant namespace: its binding there may be gone; the retry makes it again.
      const mi = caches.marketIndexers.get(name) as unknown as MarketIndexer | undefined;
      if (isForbidden(err) && mi) access.forget(namespaceOf(mi.spec.tenant));
      throw err;
    }
  }

  async function reconcileOnce(name: string): Promise<Outcome> {
    const cached = caches.marketIndexers.get(name) as unknown as MarketIndexer | undefined;
    if (!cached) return { result: 'gone' };
    let mi = structuredClone(cached);
    if (mi.metadata.deletionTimestamp) return finalize(mi);
    const namespace = namespaceOf(mi.spec.tenant);

    // What a MarketIndexer may ask is bounded by the environment (D-200): images, egress.
    const refused = specPolicyProblems(mi.spec, deps.policy);
    if (refused.length) return degrade(mi, namespace, 'InvalidSpec', refused.join('; '));

    let rendered: Rendered;
    try {
      rendered = renderTenant(mi, { environment: deps.environment, defaults: deps.defaults, platformNamespace: deps.platformNamespace });
    } catch (err) {
      if (err instanceof KitInputError) return degrade(mi, namespace, 'InvalidSpec', err.problems.join('; '));
      if (err instanceof Error && err.message.startsWith('Validation failed')) return degrade(mi, namespace, 'InvalidSpec', err.message.split('\n').slice(1).join('; ').trim());
      throw err;
    }

    // The tenant's namespace belongs to one MarketIndexer: the first to create it.
    let ns = await liveNamespace(namespace);
    if (ns && !ownedBy(ns, mi.metadata.uid!)) {
      const owner = ns.metadata.ownerReferences?.find((r) => r.controller);
      return degrade(
        mi,
        namespace,
        'TenantClaimed',
        owner
          ? `tenant ${mi.spec.tenant} belongs to ${owner.kind} ${owner.name}: its namespace ${namespace} is owned there`
          : `namespace ${namespace} exists and no MarketIndexer owns it; delete it, or add this MarketIndexer as its controller owner`,
      );
    }

    if (!(mi.metadata.finalizers ?? []).includes(FINALIZER)) {
      mi = (await kube.mergePatch(MARKET_INDEXER, undefined, name, {
        metadata: { finalizers: [...(mi.metadata.finalizers ?? []), FINALIZER], resourceVersion: mi.metadata.resourceVersion },
      })) as unknown as MarketIndexer;
    }

    const desiredNs = rendered.objects.find((o) => o.kind === 'Namespace')!;
    if (!ns) {
      try {
        ns = await kube.create(NAMESPACE, desiredNs);
      } catch (err) {
        // Another MarketIndexer created it first: the next reconcile reports the claim.
        if (isConflict(err)) throw new KubeError(409, 'AlreadyExists', `namespace ${namespace} was created meanwhile`);
        throw err;
      }
    }
    await access.ensure(mi, namespace, desiredNs.metadata.labels);
    if (needsApply(desiredNs, ns)) await kube.apply(NAMESPACE, desiredNs, FIELD_MANAGER);

    const missing = await missingSecrets(rendered);
    if (missing.length) {
      return degrade(mi, namespace, 'SecretMissing', `namespace ${namespace} lacks the Secret key(s) ${missing.join(', ')} (docs/deploy.md)`);
    }

    const unserved: string[] = [];
    for (const desired of rendered.objects) {
      if (desired.kind === 'Namespace') continue;
      const info = kindOf(desired.apiVersion, desired.kind);
      const cache = caches.child(desired.kind, namespace);
      if (!cache) {
        unserved.push(desired.kind);
        continue;
      }
      if (needsApply(desired, cache.get(desired.metadata.name, desired.metadata.namespace))) await kube.apply(info, desired, FIELD_MANAGER);
    }

    // What this MarketIndexer owns and no longer renders goes (never what it does not own);
    // a Secret it no longer renders is let go instead: it may hold what someone put there.
    const wanted = new Set(rendered.objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`));
    for (const info of CHILD_KINDS) {
      if (!info.namespaced) continue;
      for (const o of caches.child(info.kind, namespace)?.list(namespace) ?? []) {
        if (!ownedBy(o, mi.metadata.uid!) || o.metadata.deletionTimestamp) continue;
        if (wanted.has(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)) continue;
        if (DATA_KINDS.has(info.kind)) await letGo(o, mi.metadata.uid!);
        else await kube.delete(info, o.metadata.namespace, o.metadata.name, { uid: o.metadata.uid });
      }
    }

    const deployments = caches.child('Deployment', namespace);
    const api = deployments?.get(NAMES.api, namespace) as (KubeObject & { spec?: { replicas?: number }; status?: Json }) | undefined;
    const indexer = deployments?.get(NAMES.indexer, namespace) as (KubeObject & { spec?: { replicas?: number }; status?: Json }) | undefined;
    const rolledOut = (d: typeof api) =>
      !!d &&
      Number(d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
      Number(d.status?.updatedReplicas ?? 0) >= (d.spec?.replicas ?? 1) &&
      Number(d.status?.availableReplicas ?? 0) >= (d.spec?.replicas ?? 1);
    const available = (d: typeof api) => Number(d?.status?.availableReplicas ?? 0) >= 1;
    const progressing = !(rolledOut(api) && rolledOut(indexer));
    const ready = available(api) && available(indexer);
    const degraded = unserved.length > 0;
    const conditions: ConditionInput[] = [
      ready
        ? { type: 'Ready', status: 'True', reason: 'Available', message: 'the API and the indexer have available replicas' }
        : { type: 'Ready', status: 'False', reason: 'NotAvailable', message: `available replicas: API ${Number(api?.status?.availableReplicas ?? 0)}, indexer ${Number(indexer?.status?.availableReplicas ?? 0)}` },
      progressing
        ? { type: 'Progressing', status: 'True', reason: 'RollingOut', message: 'the Deployments have not rolled out the latest spec yet' }
        : { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: 'every Deployment runs the latest spec' },
      degraded
        ? { type: 'Degraded', status: 'True', reason: 'KindNotServed', message: `the cluster does not serve ${[...new Set(unserved)].join(', ')} (install the prometheus-operator CRDs, or set monitoring.enabled to false)` }
        : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'every object is applied' },
      lagCondition(mi),
    ];
    await writeStatus(mi, status(mi, namespace, conditions, Number(api?.status?.readyReplicas ?? 0)));
    if (degraded) return { result: 'degraded', reason: 'KindNotServed', retryAfterMs: 60_000 };
    return { result: progressing || !ready ? 'progressing' : 'converged' };
  }

  return { reconcile, forgetAccess: (namespace) => access.forget(namespace) };
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isMap(v)) {
    return Object.fromEntries(
      Object.keys(v)
        .filter((k) => v[k] !== undefined && v[k] !== null)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  }
  return v;
}
