import type { MarketIndexer } from '../cdk8s/lib/crd';
import { namespaceOf } from '../cdk8s/lib/names';
import type { Logger } from '../core/telemetry/logger';
import type { IndexerObservation } from './reconcile';

/**
 * Reads each tenant indexer's `/status` (its Service, by default) every interval and keeps the
 * last answer per MarketIndexer; a changed answer calls `onChange`, so the reconcile writes it
 * into the status. An indexer that has not answered `FAILURES_TO_FORGET` reads in a row has no
 * observation (`IndexerLagging` Unknown): one lost read (a dropped keep-alive connection, a
 * restarting pod) is not a change worth a status write and an Event.
 */
export const FAILURES_TO_FORGET = 3;

export function createIndexerStatusPoller(opts: {
  urlTemplate: string;
  intervalMs: number;
  logger: Logger;
  list(): MarketIndexer[];
  onChange(name: string): void;
  timeoutMs?: number;
}) {
  const seen = new Map<string, IndexerObservation>();
  const failures = new Map<string, number>();
  const urlOf = (mi: MarketIndexer) =>
    opts.urlTemplate.replaceAll('{namespace}', namespaceOf(mi.spec.tenant)).replaceAll('{tenant}', mi.spec.tenant);

  async function read(mi: MarketIndexer): Promise<IndexerObservation | undefined> {
    try {
      const res = await fetch(urlOf(mi), { signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000) });
      if (!res.ok) return undefined;
      const b = (await res.json()) as { slotLag?: unknown; lastProcessedSlot?: unknown; writer?: unknown; indexerRunning?: unknown };
      if (typeof b.slotLag !== 'number' || typeof b.lastProcessedSlot !== 'string') return undefined;
      return { slotLag: b.slotLag, lastProcessedSlot: b.lastProcessedSlot, writer: typeof b.writer === 'string' ? b.writer : null, indexerRunning: b.indexerRunning === true };
    } catch {
      return undefined;
    }
  }

  async function pollOnce(): Promise<void> {
    const live = opts.list().filter((mi) => !mi.metadata.deletionTimestamp);
    const names = new Set(live.map((mi) => mi.metadata.name));
    for (const name of seen.keys()) if (!names.has(name)) seen.delete(name);
    for (const name of failures.keys()) if (!names.has(name)) failures.delete(name);
    await Promise.all(
      live.map(async (mi) => {
        const name = mi.metadata.name;
        const o = await read(mi);
        const before = seen.get(name);
        if (o) {
          failures.delete(name);
          seen.set(name, o);
        } else {
          const n = (failures.get(name) ?? 0) + 1;
          failures.set(name, n);
          if (n >= FAILURES_TO_FORGET) seen.delete(name);
        }
        if (JSON.stringify(before) !== JSON.stringify(seen.get(name))) opts.onChange(name);
      }),
    );
  }

  let timer: NodeJS.Timeout | undefined;
  return {
    get: (mi: MarketIndexer) => seen.get(mi.metadata.name),
    pollOnce,
    start() {
      const tick = () => {
        pollOnce()
          .catch((err: Error) => opts.logger.warn({ err: err.message }, 'status poll failed'))
          .finally(() => (timer = setTimeout(tick, opts.intervalMs)));
      };
      tick();
    },
    stop() {
      if (timer) clearTimeout(timer);
    },
  };
}
