import type { MarketIndexerStatus } from '../../cdk8s/lib/crd';
import type { ConditionInput } from '../conditions';
import type { IndexerReading } from './outcome';

/** What the status records of the tenant's projection: the schema the API reads, the switch that made it so, the build in progress. */
export type ProjectionStatus = NonNullable<MarketIndexerStatus['projection']>;
type BuildSnapshot = NonNullable<ProjectionStatus['build']>;

/**
 * The longest a re-index's recorded figures are kept while the build moves (D-436): its slots
 * change at every read of `/status`, and a status write per read and tenant is what the operator
 * avoids (an idle tenant writes nothing, D-83). Once a minute at most, a switch or a new build at once.
 */
export const REINDEX_PROGRESS_MS = 60_000;

const sameFigures = (a: BuildSnapshot, b: BuildSnapshot) =>
  a.schema === b.schema && a.lastProcessedSlot === b.lastProcessedSlot && a.chainTipSlot === b.chainTipSlot && a.slotLag === b.slotLag;

/**
 * `status.projection` from the last reading and what the status recorded: the live schema as last
 * read (kept while `/status` does not answer, so that a switch meanwhile is still seen as one);
 * `switchedFrom` once the live schema changed from a recorded one, kept while it stays; and the
 * build's figures, taken anew only when the build is new or those recorded are `REINDEX_PROGRESS_MS` old.
 */
export function projectionStatus(reading: IndexerReading | undefined, recorded: ProjectionStatus | undefined, now: string): ProjectionStatus {
  const p = reading && !('unavailable' in reading) ? reading.projection : undefined;
  const kept = { ...(recorded?.liveSchema ? { liveSchema: recorded.liveSchema } : {}), ...(recorded?.switchedFrom ? { switchedFrom: recorded.switchedFrom } : {}) };
  if (!p) return kept;
  const was = recorded?.liveSchema;
  const switchedFrom = was && was !== p.live ? was : was === p.live ? recorded?.switchedFrom : undefined;
  const out: ProjectionStatus = { liveSchema: p.live, ...(switchedFrom ? { switchedFrom } : {}) };
  if (!p.build) return out;
  const b = p.build;
  const built = b.lastProcessedSlot === null ? null : Number(b.lastProcessedSlot);
  const fresh: BuildSnapshot = {
    schema: b.schema,
    ...(b.lastProcessedSlot !== null ? { lastProcessedSlot: b.lastProcessedSlot } : {}),
    ...(b.chainTipSlot !== null ? { chainTipSlot: b.chainTipSlot } : {}),
    ...(b.chainTipSlot !== null && built !== null ? { slotLag: Math.max(0, b.chainTipSlot - built) } : {}),
    observedAt: now,
  };
  const last = recorded?.build;
  const keep = last && last.schema === b.schema && (sameFigures(last, fresh) || Date.parse(now) - Date.parse(last.observedAt) < REINDEX_PROGRESS_MS);
  return { ...out, build: keep ? last : fresh };
}

const n = (v: number | string) => Number(v).toLocaleString('en-US');

/** `p2 at slot 812,345 of 812,400 (55 behind)`: short enough for a `kubectl get` column. */
export function buildMessage(b: BuildSnapshot): string {
  const at = `${b.schema} at slot ${n(b.lastProcessedSlot ?? 0)}`;
  if (b.chainTipSlot === undefined) return `${at} (its writer has not seen the tip yet)`;
  return `${at} of ${n(b.chainTipSlot)} (${n(b.slotLag ?? 0)} behind)`;
}

/**
 * `Reindexing`: True while a projection schema is built beside the live one, its message the
 * recorded figures; False once none is (`Switched` naming the switch the status saw, else
 * `NotReindexing` naming the live schema); Unknown while `/status` is not read or does not report
 * the projection (an indexer of an earlier release).
 */
export function reindexCondition(reading: IndexerReading | undefined, projection: ProjectionStatus): ConditionInput {
  const type = 'Reindexing';
  if (!reading || 'unavailable' in reading) return { type, status: 'Unknown', reason: 'StatusUnavailable', message: "not known: the indexer's /status is not read (see IndexerLagging)" };
  if (!reading.projection) return { type, status: 'Unknown', reason: 'NotReported', message: "not known: the indexer's /status does not report its projection" };
  if (projection.build) return { type, status: 'True', reason: 'Building', message: buildMessage(projection.build) };
  const live = projection.liveSchema ?? reading.projection.live;
  if (projection.switchedFrom) return { type, status: 'False', reason: 'Switched', message: `switched from ${projection.switchedFrom} to ${live}` };
  return { type, status: 'False', reason: 'NotReindexing', message: `none: the API reads ${live}` };
}
