import { makeInformer, type Informer, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../core/telemetry/logger';
import { KubeError, type KubeClient, type KubeObject } from './kube/client';
import { CHILD_KINDS, MARKET_INDEXER, type KindInfo } from '../cdk8s/lib/kinds';
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
  /** The cache of a child kind; undefined while the cluster does not serve it (a missing CRD). */
  child(kind: string): ObjectCache | undefined;
  /** Resolves once every kind has been listed once (or found not served). */
  synced: Promise<void>;
  stop(): Promise<void>;
}

/**
 * List-and-watch caches of the MarketIndexers and of every kind the operator renders (only the
 * objects carrying its managed-by label). Any change calls `onChange` with the MarketIndexer
 * concerned: itself, or the controller owner of a child. client-node's informer stops on a
 * watch or list error other than 410 Gone (which it handles by listing again); here it is
 * started again after a backoff, so an API server restart is ridden out, and a kind the cluster
 * does not serve yet (the prometheus-operator CRDs) is looked for again every minute.
 */
export function startInformers(opts: { kube: KubeClient; logger: Logger; onChange(marketIndexer: string): void; signal: AbortSignal }): Caches {
  const { kube, logger } = opts;
  const caches = new Map<string, Cache>();
  const served = new Map<string, boolean>();
  const listed: Promise<void>[] = [];

  function watch(info: KindInfo, labelSelector: string | undefined, key: (o: KubeObject) => string | undefined): Cache {
    let markListed!: () => void;
    listed.push(new Promise<void>((resolve) => (markListed = resolve)));
    const list = async () => {
      try {
        const result = await kube.list(info, { labelSelector });
        served.set(info.kind, true);
        return result;
      } catch (err) {
        if (err instanceof KubeError && err.status === 404) {
          if (served.get(info.kind) !== false) logger.info({ kind: info.kind }, 'kind not served by this cluster (yet)');
          served.set(info.kind, false);
          markListed();
        }
        throw err;
      } finally {
        if (served.get(info.kind)) markListed();
      }
    };
    const informer = makeInformer<KubernetesObject>(kube.kubeConfig, pathOf(info), list as never, labelSelector) as unknown as Cache;
    const notify = (obj: KubernetesObject) => {
      const k = key(obj as unknown as KubeObject);
      if (k) opts.onChange(k);
    };
    for (const event of ['add', 'update', 'delete'] as const) informer.on(event, notify);
    let failures = 0;
    informer.on('connect', () => void (failures = 0));
    informer.on('error', (err: unknown) => {
      if (opts.signal.aborted) return;
      failures += 1;
      const missing = served.get(info.kind) === false;
      const delay = missing ? 60_000 : Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
      if (!missing) logger.warn({ kind: info.kind, err: (err as Error)?.message ?? String(err), retryInMs: delay }, 'list or watch failed; starting again');
      setTimeout(() => {
        if (!opts.signal.aborted) informer.start().catch(() => {});
      }, delay).unref();
    });
    caches.set(info.kind, informer);
    void informer.start().catch(() => {});
    return informer;
  }

  const ownerOf = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller && r.kind === MARKET_INDEXER.kind)?.name;
  const marketIndexers = watch(MARKET_INDEXER, undefined, (o) => o.metadata.name);
  for (const info of CHILD_KINDS) watch(info, MANAGED_SELECTOR, ownerOf);
  return {
    marketIndexers,
    child: (kind) => (served.get(kind) ? caches.get(kind) : undefined),
    synced: Promise.all(listed).then(() => undefined),
    async stop() {
      await Promise.all([...caches.values()].map((i) => i.stop().catch(() => {})));
    },
  };
}
