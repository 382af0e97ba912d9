import type { MarketIndexer } from '../../cdk8s/lib/crd';
import type { KubeObject } from '../kube/client';

/** Held on every MarketIndexer until its deletion policy ran (D-84). */
export const FINALIZER = 'marketindexer.dev/cleanup';
/** The one field manager of every server-side apply, and the source of its Events. */
export const FIELD_MANAGER = 'market-indexer-operator';

/** A projection build as a tenant indexer's `/status` reports it (D-435). */
export interface BuildReading {
  schema: string;
  lastProcessedSlot: string | null;
  chainTipSlot: number | null;
}

/** What the operator last read from a tenant indexer's `/status`. */
export interface IndexerObservation {
  slotLag: number;
  lastProcessedSlot: string;
  writer: string | null;
  indexerRunning: boolean;
  /** The schema the API reads and the build in progress (null: none); absent when the indexer does not report it. */
  projection?: { live: string; build: BuildReading | null };
}

/** Why there is no observation: the indexer's `/status` failed to answer, and how (the condition's message). */
export interface IndexerUnavailable {
  unavailable: string;
}

/** What the operator knows of a tenant's indexer. */
export type IndexerReading = IndexerObservation | IndexerUnavailable;

export type Outcome =
  | { result: 'converged' | 'progressing' | 'gone' | 'finalized' }
  | { result: 'degraded'; reason: string; retryAfterMs: number };

/**
 * Why a MarketIndexer cannot be served as asked: a step that finds one stops the reconcile, and
 * the resource is `Degraded` with this reason and message (and nothing else is touched).
 */
export interface Problem {
  reason: 'InvalidSpec' | 'TenantClaimed' | 'SecretMissing';
  message: string;
}

/** A copy of the cached resource, the reconcile's own to change. */
export const fetchMarketIndexer = (cache: { get(name: string): KubeObject | undefined }, name: string): MarketIndexer | undefined => {
  const cached = cache.get(name) as unknown as MarketIndexer | undefined;
  return cached && structuredClone(cached);
};

/** Whether `o` is controlled by the MarketIndexer of `uid`. */
export const ownedBy = (o: KubeObject, uid: string) => o.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller);
