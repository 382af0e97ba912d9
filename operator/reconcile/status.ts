import type { Condition, MarketIndexer, MarketIndexerStatus } from '../../cdk8s/lib/crd';
import { EVENT, MARKET_INDEXER } from '../../cdk8s/lib/kinds';
import type { Logger } from '../../core/telemetry/logger';
import { nextConditions, transitions, type ConditionInput } from '../conditions';
import type { KubeClient } from '../kube/client';
import { FIELD_MANAGER, type IndexerReading } from './outcome';

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The status a reconcile computed: its conditions, the indexer's last `/status`, the API's ready replicas, the image tag it runs. */
export function statusOf(
  mi: MarketIndexer,
  namespace: string,
  conditions: ConditionInput[],
  reading: IndexerReading | undefined,
  apiReady: number | undefined,
  now: string,
  imageTag?: string,
): MarketIndexerStatus {
  const generation = mi.metadata.generation ?? 1;
  const observation = reading && !('unavailable' in reading) ? reading : undefined;
  return {
    observedGeneration: generation,
    namespace,
    conditions: nextConditions(mi.status?.conditions, conditions, generation, now),
    indexer: observation
      ? { lastProcessedSlot: observation.lastProcessedSlot, slotLag: observation.slotLag, ...(observation.writer ? { writer: observation.writer } : {}) }
      : {},
    api: { readyReplicas: apiReady ?? 0 },
    ...(imageTag ? { imageTag } : {}),
  };
}

/** A status compared without the fields that are absent or null, keys in order. */
export function canonical(v: unknown): unknown {
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

export interface StatusWriter {
  /** Writes `next` unless it is what the resource already has (or was last given); an Event per condition that changed status. */
  write(mi: MarketIndexer, next: MarketIndexerStatus): Promise<void>;
}

/** How long a written status is remembered while the cache does not show it yet. */
export const MEMO_MS = 30_000;

export function createStatusWriter(deps: {
  kube: Pick<KubeClient, 'mergePatch' | 'create'>;
  logger: Logger;
  /** Where the Events go: the operator's own namespace (D-199). */
  platformNamespace: string;
  now: () => string;
  clock?: () => number;
}): StatusWriter {
  const { kube, logger } = deps;
  const clock = deps.clock ?? Date.now;

  async function event(mi: MarketIndexer, c: Condition): Promise<void> {
    const warning = (c.type === 'Ready' && c.status !== 'True') || (c.type !== 'Ready' && c.type !== 'Progressing' && c.status === 'True');
    const ts = deps.now();
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

  return {
    async write(mi, next) {
      const memo = written.get(mi.metadata.name);
      const fresh = memo && clock() - memo.at < MEMO_MS && memo.resourceVersion !== mi.metadata.resourceVersion;
      if (memo && !fresh) written.delete(mi.metadata.name);
      const current = (fresh ? memo.status : mi.status) ?? {};
      if (JSON.stringify(canonical(current)) === JSON.stringify(canonical(next))) return;
      // A merge patch of the whole status; null removes what is no longer known.
      const indexer = next.indexer ?? {};
      const out = await kube.mergePatch(
        MARKET_INDEXER,
        undefined,
        mi.metadata.name,
        { status: { ...next, indexer: { lastProcessedSlot: indexer.lastProcessedSlot ?? null, slotLag: indexer.slotLag ?? null, writer: indexer.writer ?? null } } },
        'status',
      );
      written.set(mi.metadata.name, { status: next, resourceVersion: out.metadata.resourceVersion, at: clock() });
      for (const c of transitions(current.conditions, next.conditions ?? [])) await event(mi, c);
    },
  };
}
