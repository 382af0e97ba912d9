import type { Condition, MarketIndexer, MarketIndexerStatus } from '../../cdk8s/lib/crd';
import { EVENT, MARKET_INDEXER } from '../../cdk8s/lib/kinds';
import type { Logger } from '../../core/telemetry/logger';
import { nextConditions, transitions, type ConditionInput } from '../conditions';
import type { KubeClient } from '../kube/client';
import { FIELD_MANAGER, type IndexerReading } from './outcome';
import type { ProjectionStatus } from './reindex';

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The status a reconcile computed: its conditions, the indexer's last `/status`, the API's ready replicas, the image tag it runs, the projection (D-436). */
export function statusOf(
  mi: MarketIndexer,
  namespace: string,
  conditions: ConditionInput[],
  reading: IndexerReading | undefined,
  apiReady: number | undefined,
  now: string,
  imageTag?: string,
  projection?: ProjectionStatus,
  indexerObservedAt?: string,
): MarketIndexerStatus {
  const generation = mi.metadata.generation ?? 1;
  const observation = reading && !('unavailable' in reading) ? reading : undefined;
  return {
    observedGeneration: generation,
    namespace,
    conditions: nextConditions(mi.status?.conditions, conditions, generation, now),
    indexer: observation
      ? { lastProcessedSlot: observation.lastProcessedSlot, slotLag: observation.slotLag, ...(observation.writer ? { writer: observation.writer } : {}), ...(indexerObservedAt ? { observedAt: indexerObservedAt } : {}) }
      : {},
    api: { readyReplicas: apiReady ?? 0 },
    ...(imageTag ? { imageTag } : {}),
    projection: projection ?? {},
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

/** The conditions whose True is the good state (the others say a problem, or work under way, when True). */
const POSITIVE: string[] = ['Ready', 'DatabaseReady'];

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

  /** A condition's change of status; `Warning` for the bad ones (a re-index building is not one). */
  const conditionEvent = (mi: MarketIndexer, c: Condition) =>
    event(mi, c.reason, `${c.type}=${c.status}: ${c.message}`, POSITIVE.includes(c.type) ? c.status !== 'True' : !['Progressing', 'Reindexing'].includes(c.type) && c.status === 'True');

  async function event(mi: MarketIndexer, reason: string, message: string, warning: boolean): Promise<void> {
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
        reason,
        message,
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
      const p = next.projection ?? {};
      // The build's fields one by one: a merge patch merges objects, so one it no longer has must be null.
      const b = p.build;
      const build = b ? { ...b, lastProcessedSlot: b.lastProcessedSlot ?? null, chainTipSlot: b.chainTipSlot ?? null, slotLag: b.slotLag ?? null } : null;
      const out = await kube.mergePatch(
        MARKET_INDEXER,
        undefined,
        mi.metadata.name,
        {
          status: {
            ...next,
            indexer: { lastProcessedSlot: indexer.lastProcessedSlot ?? null, slotLag: indexer.slotLag ?? null, writer: indexer.writer ?? null, observedAt: indexer.observedAt ?? null },
            projection: { liveSchema: p.liveSchema ?? null, switchedFrom: p.switchedFrom ?? null, build },
          },
        },
        'status',
      );
      written.set(mi.metadata.name, { status: next, resourceVersion: out.metadata.resourceVersion, at: clock() });
      // A change of the live schema between two recorded readings is a switch (D-437): one Event
      // naming both schemas, which stands for the Reindexing transition it causes.
      const [from, to] = [current.projection?.liveSchema, next.projection?.liveSchema];
      const switched = !!from && !!to && from !== to;
      for (const c of transitions(current.conditions, next.conditions ?? [])) if (!(switched && c.type === 'Reindexing')) await conditionEvent(mi, c);
      if (switched) await event(mi, 'ProjectionSwitched', `the API reads ${to}, switched from ${from}`, false);
    },
  };
}
