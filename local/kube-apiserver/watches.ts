/**
 * The store's watches: each type's recent events, kept in a bounded history so a watch can
 * start from a list's resourceVersion (410 Gone once that is older than the history), and the
 * open watches each new event is sent to, by type, namespace and label selector.
 */
import { ApiError } from './errors';
import type { Json } from './fields';
import { meta, typeKey } from './objects';
import type { ResourceType } from './resources';
import { matches, type Selector } from './selectors';

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'ERROR' | 'BOOKMARK';
  object: Json;
}

interface Watcher {
  type: ResourceType;
  namespace: string | undefined;
  selector: Selector;
  send(e: WatchEvent): void;
}

/**
 * An event as a watch with `selector` sees it, as kube-apiserver's watch cache sends it: a change
 * that makes an object match is ADDED, one that makes it stop matching is DELETED (the object as
 * it was, at the new resourceVersion); undefined when the watch does not see it at all.
 */
function throughSelector(selector: Selector, event: WatchEvent, prev: Json | undefined): WatchEvent | undefined {
  const now = matches(selector, event.object);
  if (event.type !== 'MODIFIED' || prev === undefined) return now ? event : undefined;
  const before = matches(selector, prev);
  if (now) return before ? event : { type: 'ADDED', object: event.object };
  if (!before) return undefined;
  return { type: 'DELETED', object: { ...prev, metadata: { ...meta(prev), resourceVersion: meta(event.object).resourceVersion } } };
}

export class Watches {
  private readonly history = new Map<string, { rv: number; event: WatchEvent; prev?: Json; namespace: string | undefined }[]>();
  /** Watches may start from resourceVersions at or after this one (older ones get 410 Gone). */
  private oldestWatchable = 1;
  private readonly watchers = new Set<Watcher>();

  constructor(private readonly historySize: number) {}

  /**
   * Records the event of the write that made resourceVersion `rv` (`prev`: the object it
   * replaced) and sends it to the watches it concerns, as seen through each one's selector.
   */
  emit(t: ResourceType, rv: number, event: WatchEvent, prev?: Json): void {
    const ns = meta(event.object).namespace;
    const h = this.history.get(typeKey(t)) ?? [];
    h.push({ rv, event: structuredClone(event), prev: prev && structuredClone(prev), namespace: ns });
    if (h.length > this.historySize) {
      const dropped = h.shift()!;
      this.oldestWatchable = Math.max(this.oldestWatchable, dropped.rv);
    }
    this.history.set(typeKey(t), h);
    for (const w of this.watchers) {
      if (w.type !== t && typeKey(w.type) !== typeKey(t)) continue;
      if (w.namespace !== undefined && w.namespace !== ns) continue;
      const seen = throughSelector(w.selector, event, prev);
      if (seen) w.send(structuredClone(seen));
    }
  }

  /**
   * Starts a watch after `fromRv` (a list's resourceVersion), replaying what happened since;
   * `undefined` or "0" starts with every current object (`current()`) as ADDED. Returns the stop
   * function, or throws 410 when `fromRv` is older than the history kept.
   */
  watch(t: ResourceType, ns: string | undefined, selector: Selector, fromRv: string | undefined, current: () => Json[], send: (e: WatchEvent) => void): () => void {
    const w: Watcher = { type: t, namespace: t.namespaced ? ns : undefined, selector, send };
    if (fromRv === undefined || fromRv === '' || fromRv === '0') {
      for (const o of current()) send({ type: 'ADDED', object: o });
    } else {
      const from = Number(fromRv);
      if (!Number.isInteger(from) || from < this.oldestWatchable - 1) {
        throw new ApiError(410, 'Expired', `too old resource version: ${fromRv} (${this.oldestWatchable})`);
      }
      for (const h of this.history.get(typeKey(t)) ?? []) {
        const seen = h.rv > from && (w.namespace === undefined || w.namespace === h.namespace) ? throughSelector(selector, h.event, h.prev) : undefined;
        if (seen) send(structuredClone(seen));
      }
    }
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  /** Forgets every event so far, the store being at `rv`: a watch from an older resourceVersion gets 410 Gone. */
  compact(rv: number): void {
    this.history.clear();
    this.oldestWatchable = rv + 1;
  }
}
