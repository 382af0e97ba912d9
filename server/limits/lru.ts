/**
 * A bounded map that drops its least recently used entry to make room (a `Map` keeps insertion
 * order, so a read that re-inserts its key keeps the order by use). Used for the API-key caches
 * (D-189), where the bound, not a clock, is what keeps memory flat under a flood of distinct keys.
 */
export interface Lru<V> {
  /** The value, marked as just used; undefined when absent. */
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  readonly size: number;
  entries(): IterableIterator<[string, V]>;
}

export function createLru<V>(max: number): Lru<V> {
  if (!(max >= 1)) throw new Error(`an LRU needs room for at least one entry (got ${max})`);
  const map = new Map<string, V>();
  return {
    get(key) {
      const v = map.get(key);
      if (v === undefined) return undefined;
      map.delete(key);
      map.set(key, v);
      return v;
    },
    set(key, value) {
      map.delete(key);
      map.set(key, value);
      if (map.size > max) map.delete(map.keys().next().value!);
    },
    delete: (key) => void map.delete(key),
    get size() {
      return map.size;
    },
    entries: () => map.entries(),
  };
}
