/**
 * The store's watches: each type's recent events, kept in a bounded history so a watch can
 * start from a list's resourceVersion (410 Gone once that is older than the history), and the
 * open watches each new event is sent to, by type, namespace and label selector. As the real
 * server's watch cache does, open watches are indexed by type and namespace: an event reaches
 * the watches of its own namespace and the type's cluster-wide ones, never a walk of every
 * watch; it is copied once, and every watch it reaches gets that one copy (read-only).
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

interface HistoryEntry {
  rv: number;
  event: WatchEvent;
  /** The object the write replaced (the store no longer holds it, so it is never changed). */
  prev?: Json;
  namespace: string | undefined;
}

interface Watcher {
  selector: Selector;
  send(e: WatchEvent): void;
}

/** A bounded FIFO of a type's events: a ring, so dropping the oldest costs nothing. */
class History {
  private readonly ring: (HistoryEntry | undefined)[];
  private start = 0;
  size = 0;
  constructor(private readonly capacity: number) {
    this.ring = new Array(Math.min(capacity, 1024));
  }
  /** Adds an entry; returns the one dropped to make room, if any. */
  push(e: HistoryEntry) {
    let dropped;
    if (this.size === this.capacity) {
      dropped = this.ring[this.start];
      this.ring[this.start] = e;
      this.start = (this.start + 1) % this.capacity;
      return dropped;
    }
    if (this.size === this.ring.length) {
      // Grow (up to the capacity), unrolling the ring.
      const items = [...this.entries()];
      this.ring.length = Math.min(this.capacity, this.ring.length * 2);
      items.forEach((x, i) => (this.ring[i] = x));
      this.start = 0;
    }
    this.ring[(this.start + this.size) % this.ring.length] = e;
    this.size += 1;
    return undefined;
  }
  *entries() {
    for (let i = 0; i < this.size; i++) yield this.ring[(this.start + i) % this.ring.length]!;
  }
}

export class Watches {
  private readonly history = new Map<string, History>();
  /** Watches may start from resourceVersions at or after this one (older ones get 410 Gone). */
  private oldestWatchable = 1;
  /** Open watches by type, then namespace ('' for the type's cluster-wide ones). */
  private readonly watchers = new Map<string, Map<string, Set<Watcher>>>();

  constructor(private readonly historySize: number) {}

  /**
   * Records the event of the write that made resourceVersion `rv` (`prev`: the object it
   * replaced) and sends it to the watches it concerns, as seen through each one's selector.
   */
  emit(t: ResourceType, rv: number, event: WatchEvent, prev?: Json): void {
    const ns = meta(event.object).namespace;
    const key = typeKey(t);
    const shared: WatchEvent = structuredClone(event);
    const h = this.history.get(key) ?? this.history.set(key, new History(this.historySize)).get(key)!;
    const dropped = h.push({ rv, event: shared, prev, namespace: ns });
    if (dropped) this.oldestWatchable = Math.max(this.oldestWatchable, dropped.rv);
    const byNs = this.watchers.get(key);
    if (!byNs) return;
    for (const group of [byNs.get(''), ns ? byNs.get(ns) : undefined]) {
      for (const w of group ?? []) {
        const seen = throughSelector(w.selector, shared, prev);
        if (seen) w.send(seen);
      }
    }
  }

  /**
   * Starts a watch after `fromRv` (a list's resourceVersion), replaying what happened since;
   * `undefined` or "0" starts with every current object (`current()`) as ADDED. Returns the stop
   * function, or throws 410 when `fromRv` is older than the history kept.
   */
  watch(t: ResourceType, ns: string | undefined, selector: Selector, fromRv: string | undefined, current: () => Json[], send: (e: WatchEvent) => void): () => void {
    const namespace = t.namespaced ? ns : undefined;
    const w: Watcher = { selector, send };
    if (fromRv === undefined || fromRv === '' || fromRv === '0') {
      for (const o of current()) send({ type: 'ADDED', object: o });
    } else {
      const from = Number(fromRv);
      if (!Number.isInteger(from) || from < this.oldestWatchable - 1) {
        throw new ApiError(410, 'Expired', `too old resource version: ${fromRv} (${this.oldestWatchable})`);
      }
      for (const h of this.history.get(typeKey(t))?.entries() ?? []) {
        const seen = h.rv > from && (namespace === undefined || namespace === h.namespace) ? throughSelector(selector, h.event, h.prev) : undefined;
        if (seen) send(seen);
      }
    }
    const key = typeKey(t);
    const byNs = this.watchers.get(key) ?? this.watchers.set(key, new Map()).get(key)!;
    const group = byNs.get(namespace ?? '') ?? byNs.set(namespace ?? '', new Set()).get(namespace ?? '')!;
    group.add(w);
    return () => {
      group.delete(w);
      if (!group.size && byNs.get(namespace ?? '') === group) byNs.delete(namespace ?? '');
    };
  }

  /** Forgets every event so far, the store being at `rv`: a watch from an older resourceVersion gets 410 Gone. */
  compact(rv: number): void {
    this.history.clear();
    this.oldestWatchable = rv + 1;
  }
}
