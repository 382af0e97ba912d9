import type { MarketIndexerStatus } from '../../cdk8s/lib/crd';
import { NAMES } from '../../cdk8s/lib/names';
import type { ConditionInput } from '../conditions';
import type { Caches } from '../informers';
import type { KubeObject } from '../kube/client';
import type { IndexerObservation, IndexerReading, Outcome, Problem } from './outcome';

type Deployment = KubeObject & { spec?: { replicas?: number }; status?: Record<string, unknown> };

/** How far a Deployment's rollout is: replicas running its latest spec, of those it asks for. */
export interface Progress {
  updated: number;
  replicas: number;
}

/** The tenant's two Deployments as the caches last saw them. */
export interface Observed {
  /** Available replicas of the API and of the indexer. */
  apiAvailable: number;
  indexerAvailable: number;
  apiReadyReplicas: number;
  /** Both run the latest spec on every replica. */
  rolledOut: boolean;
  rollout: { api: Progress; indexer: Progress };
}

/** The image tags of a rollout: the one the tenant last ran everywhere, and the one it is given. */
export interface ImageTags {
  running?: string;
  wanted: string;
}

const observedLatest = (d: Deployment | undefined) => !!d && Number(d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 1);

// As `kubectl rollout status` has it: the latest spec observed, on every replica asked for, all
// available, and no old replica left running.
const rolledOut = (d: Deployment | undefined) =>
  !!d &&
  observedLatest(d) &&
  Number(d.status?.updatedReplicas ?? 0) >= (d.spec?.replicas ?? 1) &&
  Number(d.status?.availableReplicas ?? 0) >= (d.spec?.replicas ?? 1) &&
  Number(d.status?.replicas ?? 0) <= Number(d.status?.updatedReplicas ?? 0);

const progressOf = (d: Deployment | undefined): Progress => ({
  updated: observedLatest(d) ? Number(d!.status?.updatedReplicas ?? 0) : 0,
  replicas: d?.spec?.replicas ?? 1,
});

export function observe(caches: Pick<Caches, 'child'>, namespace: string): Observed {
  const deployments = caches.child('Deployment', namespace);
  const api = deployments?.get(NAMES.api, namespace) as Deployment | undefined;
  const indexer = deployments?.get(NAMES.indexer, namespace) as Deployment | undefined;
  return {
    apiAvailable: Number(api?.status?.availableReplicas ?? 0),
    indexerAvailable: Number(indexer?.status?.availableReplicas ?? 0),
    apiReadyReplicas: Number(api?.status?.readyReplicas ?? 0),
    rolledOut: rolledOut(api) && rolledOut(indexer),
    rollout: { api: progressOf(api), indexer: progressOf(indexer) },
  };
}

const isReady = (o: Observed) => o.apiAvailable >= 1 && o.indexerAvailable >= 1;

/**
 * What is known of the tenant's indexer: this process's last read of its `/status`, or, before
 * its first read (a restarted operator, a leader that just took over), what the status recorded
 * from the previous one. Otherwise a restart would write `IndexerLagging` Unknown ("not read
 * yet") over every tenant reconciled before the first poll, with an Event each, and write the
 * reading back (and another Event) once the poll comes: two writes where nothing changed. A real
 * change shows at the first read, which queues the tenant again.
 */
export function readingOf(seen: IndexerReading | undefined, status: MarketIndexerStatus | undefined): IndexerReading | undefined {
  if (seen) return seen;
  const indexer = status?.indexer;
  if (indexer?.slotLag !== undefined && indexer.lastProcessedSlot !== undefined) {
    return { slotLag: indexer.slotLag, lastProcessedSlot: indexer.lastProcessedSlot, writer: indexer.writer ?? null, indexerRunning: true, ...recordedProjection(status!) };
  }
  const lag = status?.conditions?.find((c) => c.type === 'IndexerLagging');
  if (lag?.status === 'Unknown' && lag.reason === 'StatusUnavailable') return { unavailable: lag.message };
  return undefined;
}

/** The projection as the status recorded it (D-436), unless `Reindexing` said it was not known. */
function recordedProjection(status: MarketIndexerStatus): Pick<IndexerObservation, 'projection'> {
  const p = status.projection;
  const reindexing = status.conditions?.find((c) => c.type === 'Reindexing');
  if (!p?.liveSchema || !reindexing || reindexing.status === 'Unknown') return {};
  const b = p.build;
  return { projection: { live: p.liveSchema, build: b ? { schema: b.schema, lastProcessedSlot: b.lastProcessedSlot ?? null, chainTipSlot: b.chainTipSlot ?? null } : null } };
}

/**
 * The longest the indexer's recorded figures (`status.indexer`, the slot lag in `IndexerLagging`'s
 * message) are kept while only they move (D-443): the slots change at every read of a live
 * indexer, and a status write per read and tenant (about 33 a second at 1,000 tenants read every
 * 30 s) is what the operator avoids. A change of writer or of the condition's status is written at once.
 */
export const INDEXER_FIGURES_MS = 60_000;

/**
 * The reading a reconcile records: the fresh one, or, while only its figures moved and those
 * recorded are younger than `INDEXER_FIGURES_MS`, the recorded figures with the fresh rest (the
 * projection, whose figures have their own rule). `observedAt` says which.
 */
export function recordedFigures(reading: IndexerReading | undefined, status: MarketIndexerStatus | undefined, threshold: number, now: string): { reading: IndexerReading | undefined; observedAt?: string } {
  if (!reading || 'unavailable' in reading) return { reading };
  const was = status?.indexer;
  const lag = status?.conditions?.find((c) => c.type === 'IndexerLagging');
  // Nothing moved (a restarted operator's first reading is the recorded one): nothing to write.
  if (was && was.slotLag === reading.slotLag && was.lastProcessedSlot === reading.lastProcessedSlot) return { reading, ...(was.observedAt ? { observedAt: was.observedAt } : {}) };
  const fresh = lagCondition(reading, threshold);
  const keep =
    was?.observedAt !== undefined &&
    was.slotLag !== undefined &&
    was.lastProcessedSlot !== undefined &&
    (was.writer ?? null) === reading.writer &&
    lag?.status === fresh.status &&
    lag.reason === fresh.reason &&
    Date.parse(now) - Date.parse(was.observedAt) < INDEXER_FIGURES_MS;
  if (!keep) return { reading, observedAt: now };
  return { reading: { ...reading, slotLag: was.slotLag!, lastProcessedSlot: was.lastProcessedSlot! }, observedAt: was.observedAt };
}

/** `IndexerLagging` from the indexer's `/status`, as last read (undefined: not read yet; unavailable: why it failed). */
export function lagCondition(o: IndexerReading | undefined, threshold: number): ConditionInput {
  if (!o) return { type: 'IndexerLagging', status: 'Unknown', reason: 'StatusUnavailable', message: 'the indexer\'s /status has not been read yet or did not answer' };
  if ('unavailable' in o) return { type: 'IndexerLagging', status: 'Unknown', reason: 'StatusUnavailable', message: o.unavailable };
  if (o.slotLag > threshold) {
    return { type: 'IndexerLagging', status: 'True', reason: 'SlotLagHigh', message: `slot lag ${o.slotLag} is above ${threshold}` };
  }
  return { type: 'IndexerLagging', status: 'False', reason: 'WithinThreshold', message: `slot lag ${o.slotLag} is within ${threshold}` };
}

/**
 * `Progressing`: while the Deployments roll, the image tags from and to (when the tag changes) and
 * each Deployment's updated replicas; once done, the tag every replica runs.
 */
function progressing(o: Observed, tags: ImageTags | undefined): ConditionInput {
  const tag = tags ? ` (image tag ${tags.wanted})` : '';
  if (o.rolledOut) return { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: `every Deployment runs the latest spec${tag}` };
  const { api, indexer } = o.rollout;
  const counts = `API ${api.updated}/${api.replicas} updated, indexer ${indexer.updated}/${indexer.replicas} updated`;
  const what = tags?.running && tags.running !== tags.wanted ? `image tag ${tags.running} → ${tags.wanted}` : `the latest spec${tag}`;
  return { type: 'Progressing', status: 'True', reason: 'RollingOut', message: `rolling out ${what}: ${counts}` };
}

/** What makes a cluster serve a kind a tenant renders, or the field that stops asking for it. */
const fixOf = (kind: string) =>
  kind === 'Cluster'
    ? 'install CloudNativePG, or set database.cloudnativepg.enabled to false'
    : kind === 'HTTPRoute'
      ? "install Gateway API's CRDs, or set api.httpRoute.enabled to false"
      : 'install the prometheus-operator CRDs, or set monitoring.enabled to false';

/** The conditions of a tenant that was applied: `unserved` are the kinds the cluster lacks. */
export function observedConditions(o: Observed, unserved: string[], lag: ConditionInput, tags?: ImageTags): ConditionInput[] {
  return [
    isReady(o)
      ? { type: 'Ready', status: 'True', reason: 'Available', message: 'the API and the indexer have available replicas' }
      : { type: 'Ready', status: 'False', reason: 'NotAvailable', message: `available replicas: API ${o.apiAvailable}, indexer ${o.indexerAvailable}` },
    progressing(o, tags),
    unserved.length
      ? { type: 'Degraded', status: 'True', reason: 'KindNotServed', message: `the cluster does not serve ${[...new Set(unserved)].join(', ')} (${[...new Set(unserved.map(fixOf))].join('; ')})` }
      : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'every object is applied' },
    lag,
  ];
}

/** The conditions of a tenant a step refused: nothing else was touched. */
export function problemConditions(p: Problem, lag: ConditionInput): ConditionInput[] {
  return [
    { type: 'Ready', status: 'False', reason: p.reason, message: p.message },
    { type: 'Progressing', status: 'False', reason: p.reason, message: 'waiting for the problem to be fixed' },
    { type: 'Degraded', status: 'True', reason: p.reason, message: p.message },
    lag,
  ];
}

/** What the work queue does next: retry a missing kind in a minute, else wait for changes. */
export function outcomeOf(o: Observed, unserved: string[]): Outcome {
  if (unserved.length) return { result: 'degraded', reason: 'KindNotServed', retryAfterMs: 60_000 };
  return { result: !o.rolledOut || !isReady(o) ? 'progressing' : 'converged' };
}

/** A refused tenant is looked at again after this long (and on any change to it). */
export const PROBLEM_RETRY_MS = 15_000;
