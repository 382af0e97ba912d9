import { makeInformer, type Informer, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../core/telemetry/logger';
import { KubeError, type KubeClient, type KubeObject } from './kube/client';
import { CHILD_KINDS, MARKET_INDEXER, NAMESPACE, SECRET, type KindInfo } from '../cdk8s/lib/kinds';
import { pathOf } from './kube/paths';

/** The label every object the operator renders carries (the kit's managed-by label). */
export const MANAGED_BY = 'market-indexer-operator';
export const MANAGED_SELECTOR = `app.kubernetes.io/managed-by=${MANAGED_BY}`;

/** An informer's cache, of plain JSON objects (client-node types dates as Date; these are strings). */
export interface ObjectCache {
  get(name: string, namespace?: string): KubeObject | undefined;
  list(namespace?: string): KubeObject[];
}
type Cache = Informer<KubernetesObject> & ObjectCache;

export interface Caches {
  marketIndexers: ObjectCache;
  /** The tenant namespaces (those carrying the managed-by label), cluster-wide. */
  namespaces: ObjectCache;
  /**
   * The cache of a kind in one tenant namespace; undefined while the cluster does not serve the
   * kind (a missing CRD), or, for Secrets, before `watchNamespace` read that namespace's.
   */
  child(kind: string, namespace: string): ObjectCache | undefined;
  /**
   * Reads the operator's Secrets in a tenant namespace (each time: they are not watched, D-320)
   * and resolves once every kind's cluster-wide cache has listed.
   */
  watchNamespace(namespace: string): Promise<void>;
  /** Forgets a namespace's Secrets (before the operator gives its access there up). */
  unwatchNamespace(namespace: string): Promise<void>;
  /** Resolves once the MarketIndexers and the namespaces have been listed. */
  synced: Promise<void>;
  stop(): Promise<void>;
}

/** The kinds watched cluster-wide, by the operator's label: every namespaced kind a tenant renders but Secrets. */
export const WATCHED_KINDS = CHILD_KINDS.filter((k) => k.namespaced && k !== SECRET);

/** A cache of a list's objects, read as an informer's cache is. */
function snapshot(items: KubeObject[]): ObjectCache {
  return {
    get: (name) => items.find((o) => o.metadata.name === name),
    list: () => items,
  };
}

/**
 * List-and-watch caches, one per kind whatever the number of tenants (controller-runtime's
 * shape, D-320): the MarketIndexers, the tenant namespaces, and every namespaced kind a tenant
 * renders, cluster-wide, only the objects carrying the operator's managed-by label. Secrets are
 * the exception: a cluster-wide right on them would read every Secret in the cluster, so the
 * operator's own Secrets are listed in a tenant namespace, through its binding there (D-198),
 * by the reconcile that needs them (`watchNamespace`). Any change calls `onChange` with the
 * MarketIndexer concerned: itself, or the controller owner of a child.
 * client-node's informer stops on a watch or list error other than 410 Gone (which it handles by
 * listing again); here it is started again after a backoff, so an API server restart is ridden
 * out, and a kind the cluster does not serve yet (the prometheus-operator CRDs) is looked for again
 * every minute. A namespace whose lists are refused (403: the operator's binding there is gone)
 * is reported through `onForbidden`.
 */
export function startInformers(opts: {
  kube: KubeClient;
  logger: Logger;
  onChange(marketIndexer: string): void;
  onForbidden?(namespace: string): void;
  signal: AbortSignal;
}): Caches {
  const { kube, logger } = opts;
  const served = new Map<string, boolean>();
  const all = new Set<Cache>();

  function watch(info: KindInfo, namespace: string | undefined, labelSelector: string | undefined, key: (o: KubeObject) => string | undefined) {
    let markListed!: () => void;
    const listed = new Promise<void>((resolve) => (markListed = resolve));
    let stopped = false;
    const list = async () => {
      try {
        const result = await kube.list(info, { labelSelector, namespace });
        served.set(info.kind, true);
        // Once the informer has filled its cache from this list (after this function returns).
        setImmediate(markListed);
        return result;
      } catch (err) {
        if (err instanceof KubeError && err.status === 404) {
          if (served.get(info.kind) !== false) logger.info({ kind: info.kind }, 'kind not served by this cluster (yet)');
          served.set(info.kind, false);
          markListed();
        }
        if (err instanceof KubeError && err.status === 403 && namespace) opts.onForbidden?.(namespace);
        throw err;
      }
    };
    const informer = makeInformer<KubernetesObject>(kube.kubeConfig, pathOf(info, namespace), list as never, labelSelector) as unknown as Cache;
    const notify = (obj: KubernetesObject) => {
      const k = key(obj as unknown as KubeObject);
      if (k) opts.onChange(k);
    };
    for (const event of ['add', 'update', 'delete'] as const) informer.on(event, notify);
    let failures = 0;
    informer.on('connect', () => void (failures = 0));
    informer.on('error', (err: unknown) => {
      if (opts.signal.aborted || stopped) return;
      failures += 1;
      // A watch refused as client-node reports it (the list's refusal is caught above).
      if (namespace && (err as { statusCode?: number })?.statusCode === 403) opts.onForbidden?.(namespace);
      const missing = served.get(info.kind) === false;
      const delay = missing ? 60_000 : Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
      if (!missing) logger.warn({ kind: info.kind, namespace, err: (err as Error)?.message ?? String(err), retryInMs: delay }, 'list or watch failed; starting again');
      setTimeout(() => {
        if (!opts.signal.aborted && !stopped) informer.start().catch(() => {});
      }, delay).unref();
    });
    all.add(informer);
    void informer.start().catch(() => {});
    return {
      informer,
      listed,
      async stop() {
        stopped = true;
        all.delete(informer);
        await informer.stop().catch(() => {});
      },
    };
  }

  const ownerOf = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller && r.kind === MARKET_INDEXER.kind)?.name;
  const marketIndexers = watch(MARKET_INDEXER, undefined, undefined, (o) => o.metadata.name);
  const namespaces = watch(NAMESPACE, undefined, MANAGED_SELECTOR, ownerOf);
  const children = new Map(WATCHED_KINDS.map((info) => [info.kind, watch(info, undefined, MANAGED_SELECTOR, ownerOf)]));
  const childrenListed = Promise.all([...children.values()].map((c) => c.listed)).then(() => undefined);
  const secrets = new Map<string, ObjectCache>();

  return {
    marketIndexers: marketIndexers.informer,
    namespaces: namespaces.informer,
    child(kind, namespace) {
      if (kind === NAMESPACE.kind) return namespaces.informer;
      if (kind === SECRET.kind) return secrets.get(namespace);
      if (!served.get(kind)) return undefined;
      return children.get(kind)?.informer;
    },
    async watchNamespace(namespace) {
      try {
        const listed = await kube.list(SECRET, { namespace, labelSelector: MANAGED_SELECTOR });
        secrets.set(namespace, snapshot(listed.items));
      } catch (err) {
        if (err instanceof KubeError && err.status === 403) opts.onForbidden?.(namespace);
        throw err;
      }
      await childrenListed;
    },
    async unwatchNamespace(namespace) {
      secrets.delete(namespace);
    },
    synced: Promise.all([marketIndexers.listed, namespaces.listed]).then(() => undefined),
    async stop() {
      await Promise.all([...all].map((i) => i.stop().catch(() => {})));
    },
  };
}
