// Fakes of the interfaces the operator's reconcile steps use (its Kubernetes client, its caches,
// its tenant access), on plain objects: the steps' unit tests run without an API server. The
// real client and caches are exercised against the test API server by test/journeys/operator.test.ts.
import type { MarketIndexer } from '../../cdk8s/lib/crd';
import type { KindInfo } from '../../cdk8s/lib/kinds';
import type { TenantAccess } from '../../operator/access';
import type { Caches, ObjectCache } from '../../operator/informers';
import { KubeError, type Json, type KubeClient, type KubeObject } from '../../operator/kube/client';
import { effectivePolicy } from '../../operator/policy';
import { createReconciler } from '../../operator/reconcile';
import type { IndexerReading } from '../../operator/reconcile/outcome';
import { testCommon } from './common';

export interface KubeCall {
  verb: 'list' | 'get' | 'create' | 'replace' | 'apply' | 'mergePatch' | 'delete';
  kind: string;
  namespace: string | undefined;
  name: string;
  body?: unknown;
  subresource?: 'status';
}

export type FakeKube = KubeClient & {
  calls: KubeCall[];
  /** The calls that change something (everything but get and list). */
  writes(): KubeCall[];
  /** The object as the fake holds it now. */
  find(kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Every object it holds. */
  all(): KubeObject[];
};

const keyOf = (kind: string, namespace: string | undefined, name: string) => `${kind}/${namespace ?? ''}/${name}`;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: maps merge key by key, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const out: Json = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * A KubeClient over a map of objects: create refuses what exists (409), a patch naming a
 * resourceVersion other than the object's is a conflict (409), every write bumps the object's
 * resourceVersion. `refuse` makes a call fail (a 403, a 500) before it does anything.
 */
export function fakeKube(objects: KubeObject[] = [], opts: { refuse?: (call: KubeCall) => KubeError | undefined } = {}): FakeKube {
  const store = new Map<string, KubeObject>();
  let version = 100;
  const put = (o: KubeObject) => {
    const stored = structuredClone(o);
    stored.metadata.resourceVersion = String(++version);
    store.set(keyOf(o.kind, o.metadata.namespace, o.metadata.name), stored);
    return structuredClone(stored);
  };
  // Seeded objects keep their resourceVersion (a test's patches name it).
  for (const o of objects) store.set(keyOf(o.kind, o.metadata.namespace, o.metadata.name), structuredClone(o));
  const calls: KubeCall[] = [];
  const record = (call: KubeCall) => {
    calls.push(call);
    const refused = opts.refuse?.(call);
    if (refused) throw refused;
  };
  const existing = (info: KindInfo, namespace: string | undefined, name: string) => {
    const o = store.get(keyOf(info.kind, namespace, name));
    if (!o) throw new KubeError(404, 'NotFound', `${info.plural} "${name}" not found`);
    return o;
  };
  return {
    calls,
    writes: () => calls.filter((c) => c.verb !== 'get' && c.verb !== 'list'),
    find: (kind, namespace, name) => store.get(keyOf(kind, namespace, name)),
    all: () => [...store.values()],
    kubeConfig: undefined as never,
    async list(info, o = {}) {
      record({ verb: 'list', kind: info.kind, namespace: o.namespace, name: '' });
      const items = [...store.values()].filter((x) => x.kind === info.kind && (o.namespace === undefined || x.metadata.namespace === o.namespace));
      return { items: structuredClone(items), metadata: { resourceVersion: String(version) } };
    },
    async get(info, namespace, name) {
      record({ verb: 'get', kind: info.kind, namespace, name });
      const o = store.get(keyOf(info.kind, namespace, name));
      return o && structuredClone(o);
    },
    async create(info, obj) {
      record({ verb: 'create', kind: info.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, body: structuredClone(obj) });
      if (store.has(keyOf(info.kind, obj.metadata.namespace, obj.metadata.name))) throw new KubeError(409, 'AlreadyExists', `${info.plural} "${obj.metadata.name}" already exists`);
      return put({ ...obj, metadata: { ...obj.metadata, uid: obj.metadata.uid ?? `uid-${obj.metadata.name}` } });
    },
    async replace(info, obj) {
      record({ verb: 'replace', kind: info.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, body: structuredClone(obj) });
      existing(info, obj.metadata.namespace, obj.metadata.name);
      return put(obj);
    },
    async apply(info, obj) {
      record({ verb: 'apply', kind: info.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, body: structuredClone(obj) });
      const live = store.get(keyOf(info.kind, obj.metadata.namespace, obj.metadata.name));
      return put(mergePatch(live ?? {}, obj) as KubeObject);
    },
    async mergePatch(info, namespace, name, patch, subresource) {
      record({ verb: 'mergePatch', kind: info.kind, namespace, name, body: structuredClone(patch), subresource });
      const live = existing(info, namespace, name);
      const wanted = (patch.metadata as Json | undefined)?.resourceVersion;
      if (wanted !== undefined && wanted !== live.metadata.resourceVersion) throw new KubeError(409, 'Conflict', `the object has been modified`);
      const next = subresource === 'status' ? { ...live, status: mergePatch(live.status, patch.status) } : (mergePatch(live, patch) as KubeObject);
      return put(next);
    },
    async delete(info, namespace, name, o) {
      record({ verb: 'delete', kind: info.kind, namespace, name, body: o });
      const live = existing(info, namespace, name);
      if (o?.uid && o.uid !== live.metadata.uid) throw new KubeError(409, 'Conflict', 'the uid precondition failed');
      store.delete(keyOf(info.kind, namespace, name));
    },
  };
}

/** A cache over a list of objects (or over whatever `objects()` returns at each read). */
export function fakeCache(objects: KubeObject[] | (() => KubeObject[])): ObjectCache {
  const now = typeof objects === 'function' ? objects : () => objects;
  return {
    get: (name, namespace) => now().find((o) => o.metadata.name === name && o.metadata.namespace === namespace),
    list: (namespace) => now().filter((o) => namespace === undefined || o.metadata.namespace === namespace),
  };
}

export type FakeCaches = Caches & { watched: string[]; unwatched: string[] };

/**
 * Caches over plain objects: the MarketIndexers, the tenant namespaces, and the objects in
 * them (a kind in `unserved` has no cache, as when the cluster lacks its CRD).
 */
export function fakeCaches(state: { marketIndexers?: MarketIndexer[]; namespaces?: KubeObject[]; objects?: KubeObject[] | (() => KubeObject[]); unserved?: string[] } = {}): FakeCaches {
  const objects = typeof state.objects === 'function' ? state.objects : () => (state.objects ?? []) as KubeObject[];
  const watched: string[] = [];
  const unwatched: string[] = [];
  return {
    watched,
    unwatched,
    marketIndexers: fakeCache((state.marketIndexers ?? []) as unknown as KubeObject[]),
    namespaces: fakeCache(state.namespaces ?? []),
    child: (kind, namespace) =>
      state.unserved?.includes(kind) ? undefined : fakeCache(() => objects().filter((o) => o.kind === kind && o.metadata.namespace === namespace)),
    watchNamespace: async (namespace) => void watched.push(namespace),
    unwatchNamespace: async (namespace) => void unwatched.push(namespace),
    synced: Promise.resolve(),
    stop: async () => {},
  };
}

/**
 * Caches that show what `kube` holds at each read, as if every watch delivered at once: the
 * MarketIndexers, the namespaces, and (only once watched, as the informers do) the objects of
 * each tenant namespace.
 */
export function cachesOf(kube: FakeKube, opts: { unserved?: string[] } = {}): FakeCaches {
  const caches = fakeCaches({ objects: () => kube.all().filter((o) => o.metadata.namespace !== undefined && caches.watched.includes(o.metadata.namespace)), unserved: opts.unserved });
  caches.marketIndexers = fakeCache(() => kube.all().filter((o) => o.kind === 'MarketIndexer'));
  caches.namespaces = fakeCache(() => kube.all().filter((o) => o.kind === 'Namespace'));
  return caches;
}

/** A TenantAccess that records what it was asked, in order (`ensure <namespace>`, `release …`, `drop …`, `forget …`). */
export function fakeAccess(): TenantAccess & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    ensure: async (_mi, namespace) => void log.push(`ensure ${namespace}`),
    release: async (namespace) => void log.push(`release ${namespace}`),
    drop: async (namespace) => void log.push(`drop ${namespace}`),
    forget: (namespace) => void log.push(`forget ${namespace}`),
    adopt: (namespace) => void log.push(`adopt ${namespace}`),
  };
}

/** A MarketIndexer as the caches hold it (uid `mi-uid`); `spec` adds to a dev-store simulator tenant. */
export function marketIndexer(name: string, spec: Record<string, unknown> = {}, metadata: Partial<MarketIndexer['metadata']> = {}): MarketIndexer {
  return {
    apiVersion: 'marketindexer.dev/v1alpha1',
    kind: 'MarketIndexer',
    metadata: { name, uid: 'mi-uid', generation: 1, resourceVersion: '7', ...metadata },
    spec: { tenant: name, deletionPolicy: 'Retain', source: { type: 'simulator' }, devStores: { enabled: true }, monitoring: { enabled: false }, ...spec },
  };
}

/** A controller ownerReference to the MarketIndexer of `uid`. */
export const ownerRef = (uid = 'mi-uid', name = 'demo') => ({ apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name, uid, controller: true, blockOwnerDeletion: true });

/** A plain object of `kind` in `namespace`, owned by `owner` (a ownerReference) when given. */
export function object(apiVersion: string, kind: string, namespace: string | undefined, name: string, extra: Partial<KubeObject['metadata']> & { owner?: ReturnType<typeof ownerRef> } = {}): KubeObject {
  const { owner, ...metadata } = extra;
  return { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${kind}-${name}`, resourceVersion: '1', ...(owner ? { ownerReferences: [owner] } : {}), ...metadata } };
}

/**
 * The reconciler as the operator's main builds it, over a fake cluster and its caches: environment
 * `dev`, a policy admitting any egress, the lag threshold of the defaults.
 */
export function fakeReconciler(kube: FakeKube, opts: { observation: () => IndexerReading | undefined; now: () => string }) {
  const caches = cachesOf(kube);
  const common = testCommon();
  const reconciler = createReconciler({
    kube,
    caches,
    logger: common.logger,
    metrics: common.metrics,
    environment: 'dev',
    defaults: { quota: { persistentVolumeClaims: 3 } },
    policy: effectivePolicy({ egressBlocks: [{ cidr: '0.0.0.0/0' }] }, {}),
    platformNamespace: 'market-indexer-system',
    lagThreshold: 100,
    observation: opts.observation,
    now: opts.now,
  });
  return { caches, reconciler };
}

/** Every Deployment in the fake cluster rolled out, as its controller would report it: all replicas updated, available and ready. */
export function rollOutDeployments(kube: FakeKube): void {
  for (const d of kube.all().filter((o) => o.kind === 'Deployment')) {
    const replicas = (d.spec as { replicas?: number }).replicas ?? 1;
    d.status = { observedGeneration: d.metadata.generation ?? 1, updatedReplicas: replicas, availableReplicas: replicas, readyReplicas: replicas };
  }
}
