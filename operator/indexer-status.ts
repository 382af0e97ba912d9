import type { MarketIndexer } from '../cdk8s/lib/crd';
import { namespaceOf } from '../cdk8s/lib/names';
import type { Logger } from '../core/telemetry/logger';
import type { IndexerObservation, IndexerReading, IndexerUnavailable } from './reconcile';
import type { BuildReading } from './reconcile/outcome';

/**
 * Reads each tenant indexer's `/status` (its Service, by default) every interval and keeps the
 * last answer per MarketIndexer; a changed answer calls `onChange`, so the reconcile writes it
 * into the status. An indexer that has not answered `FAILURES_TO_FORGET` reads in a row has no
 * observation (`IndexerLagging` Unknown): one lost read (a dropped keep-alive connection, a
 * restarting pod) is not a change worth a status write and an Event.
 */
export const FAILURES_TO_FORGET = 3;

/**
 * The most of a `/status` answer the operator reads (its answer is a few hundred bytes): it serves
 * every tenant in one process, so one tenant's endpoint streaming without end must cost it no
 * more than this (D-277).
 */
export const STATUS_BODY_LIMIT = 4096;

/**
 * How many `/status` reads are in flight at once (D-421). All at once, a poll of 3,000 tenants
 * started 3,000 requests in one turn of the event loop (about 1.5 s of it, every interval, with
 * as many sockets); a few dozen keep the loop free and still read 3,000 answering indexers in well
 * under a second, and 100 that do not answer cost 100 × 5 s / 64, about 8 s, of a 30 s interval.
 */
export const STATUS_CONCURRENCY = 64;

const UNEXPECTED = "the indexer's /status answer is not the expected JSON (a number slotLag, a string lastProcessedSlot)";

/**
 * The body as text, read as it arrives; undefined (the rest not read, the connection given up)
 * once it is over `limit` bytes, by its Content-Length or by what arrived.
 */
const SCHEMA = /^(public|p[1-9][0-9]{0,8})$/;
const isSlot = (v: unknown): v is string => typeof v === 'string' && /^[0-9]{1,20}$/.test(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * The `projection` of a `/status` answer (D-435), or undefined when it is absent or not as
 * expected: an indexer of an earlier release does not send it, and a malformed one is ignored
 * (the reading stands without it; `Reindexing` says it is not known) rather than failing the read.
 */
export function projectionOf(v: unknown): IndexerObservation['projection'] {
  if (typeof v !== 'object' || v === null) return undefined;
  const { live, build } = v as { live?: unknown; build?: unknown };
  if (typeof live !== 'string' || !SCHEMA.test(live)) return undefined;
  if (build === null) return { live, build: null };
  if (typeof build !== 'object' || build === undefined) return undefined;
  const b = build as { schema?: unknown; lastProcessedSlot?: unknown; chainTipSlot?: unknown };
  if (typeof b.schema !== 'string' || !SCHEMA.test(b.schema) || b.schema === 'public') return undefined;
  if (b.lastProcessedSlot !== null && !isSlot(b.lastProcessedSlot)) return undefined;
  if (b.chainTipSlot !== null && !isCount(b.chainTipSlot)) return undefined;
  const reading: BuildReading = { schema: b.schema, lastProcessedSlot: b.lastProcessedSlot, chainTipSlot: b.chainTipSlot };
  return { live, build: reading };
}

export async function cappedText(res: Response, limit: number): Promise<string | undefined> {
  if (Number(res.headers.get('content-length') ?? 0) > limit) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createIndexerStatusPoller(opts: {
  urlTemplate: string;
  intervalMs: number;
  logger: Logger;
  list(): MarketIndexer[];
  onChange(name: string): void;
  timeoutMs?: number;
  concurrency?: number;
}) {
  const seen = new Map<string, IndexerObservation>();
  const failures = new Map<string, number>();
  const unavailable = new Map<string, IndexerUnavailable>();
  const urlOf = (mi: MarketIndexer) =>
    opts.urlTemplate.replaceAll('{namespace}', namespaceOf(mi.spec.tenant)).replaceAll('{tenant}', mi.spec.tenant);

  async function read(mi: MarketIndexer): Promise<IndexerReading> {
    try {
      const res = await fetch(urlOf(mi), { signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000) });
      if (!res.ok) {
        await res.body?.cancel();
        return { unavailable: `the indexer's /status answered HTTP ${res.status}` };
      }
      const text = await cappedText(res, STATUS_BODY_LIMIT);
      if (text === undefined) return { unavailable: `the indexer's /status answer is over ${STATUS_BODY_LIMIT} bytes: refused, not read` };
      const b = JSON.parse(text) as { slotLag?: unknown; lastProcessedSlot?: unknown; writer?: unknown; indexerRunning?: unknown; projection?: unknown } | null;
      if (typeof b?.slotLag !== 'number' || typeof b.lastProcessedSlot !== 'string') return { unavailable: UNEXPECTED };
      const projection = projectionOf(b.projection);
      return { slotLag: b.slotLag, lastProcessedSlot: b.lastProcessedSlot, writer: typeof b.writer === 'string' ? b.writer : null, indexerRunning: b.indexerRunning === true, ...(projection ? { projection } : {}) };
    } catch (err) {
      if (err instanceof SyntaxError) return { unavailable: UNEXPECTED };
      return { unavailable: `the indexer's /status did not answer (${(err as Error).message})` };
    }
  }

  /** The last observation, or why there is none once reads failed `FAILURES_TO_FORGET` times in a row. */
  const current = (name: string): IndexerReading | undefined => seen.get(name) ?? unavailable.get(name);

  async function pollOnce(): Promise<void> {
    const live = opts.list().filter((mi) => !mi.metadata.deletionTimestamp);
    const names = new Set(live.map((mi) => mi.metadata.name));
    for (const m of [seen, failures, unavailable]) for (const name of m.keys()) if (!names.has(name)) m.delete(name);
    // A few readers take the tenants in turn: never every request in one turn of the event loop.
    let next = 0;
    const readers = Math.min(live.length, opts.concurrency ?? STATUS_CONCURRENCY);
    await Promise.all(
      Array.from({ length: readers }, async () => {
        for (let mi = live[next++]; mi; mi = live[next++]) await observe(mi);
      }),
    );
  }

  /** One tenant's read, kept; a changed reading queues the tenant. */
  async function observe(mi: MarketIndexer): Promise<void> {
    const name = mi.metadata.name;
    const o = await read(mi);
    const before = JSON.stringify(current(name));
    if (!('unavailable' in o)) {
      failures.delete(name);
      unavailable.delete(name);
      seen.set(name, o);
    } else {
      const n = (failures.get(name) ?? 0) + 1;
      failures.set(name, n);
      if (n >= FAILURES_TO_FORGET) {
        seen.delete(name);
        unavailable.set(name, o);
      }
    }
    if (before !== JSON.stringify(current(name))) opts.onChange(name);
  }

  let timer: NodeJS.Timeout | undefined;
  return {
    get: (mi: MarketIndexer) => current(mi.metadata.name),
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
