import { subscriberOf, type Redis } from './client';
import type { Keys } from './keys';

export type BusHandler = (message: string, channel: string) => void;
export type Unsubscribe = () => Promise<void>;

/**
 * Live-change fan-out between the indexer and the API replicas. Channel names are
 * unprefixed (`market:42`); the Redis implementation puts them under the tenant prefix.
 * A pattern ends in `*` (`market:*`). Subscriptions are reference counted: the first local
 * handler of a channel subscribes in Redis, the last one to leave unsubscribes.
 */
export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channelOrPattern: string, handler: BusHandler): Promise<Unsubscribe>;
  /** Number of channels and patterns this process is subscribed to in the backing store. */
  activeSubscriptions(): number;
  close(): Promise<void>;
}

const isPattern = (c: string) => c.endsWith('*');

/** Local handler registry shared by both implementations. */
function createHandlerTable(onError: (err: unknown) => void) {
  const handlers = new Map<string, Set<BusHandler>>();
  return {
    handlers,
    add(key: string, h: BusHandler): boolean {
      let set = handlers.get(key);
      const first = !set;
      if (!set) handlers.set(key, (set = new Set()));
      set.add(h);
      return first;
    },
    remove(key: string, h: BusHandler): boolean {
      const set = handlers.get(key);
      if (!set || !set.delete(h)) return false;
      if (set.size === 0) {
        handlers.delete(key);
        return true;
      }
      return false;
    },
    dispatch(key: string, message: string, channel: string) {
      const set = handlers.get(key);
      if (!set) return;
      for (const h of set) {
        try {
          h(message, channel);
        } catch (err) {
          onError(err);
        }
      }
    },
  };
}

export function createRedisBus(opts: { redis: Redis; keys: Keys; onError?: (err: unknown) => void }): Bus {
  const { keys } = opts;
  const onError = opts.onError ?? (() => {});
  // Classic (not sharded) pub/sub, also on a Cluster (D-93): a PUBLISH reaches subscribers on
  // every node, and patterns (`market:*`) work, which sharded pub/sub does not offer.
  const sub = subscriberOf(opts.redis);
  sub.on('error', onError);
  const table = createHandlerTable(onError);

  sub.on('message', (redisChannel: string, message: string) => {
    const name = keys.channelName(redisChannel);
    if (name !== undefined) table.dispatch(name, message, name);
  });
  sub.on('pmessage', (redisPattern: string, redisChannel: string, message: string) => {
    const pattern = keys.channelName(redisPattern);
    const name = keys.channelName(redisChannel);
    if (pattern !== undefined && name !== undefined) table.dispatch(pattern, message, name);
  });

  return {
    async publish(channel, message) {
      await opts.redis.publish(keys.channel(channel), message);
    },
    async subscribe(channel, handler) {
      const pattern = isPattern(channel);
      if (table.add(channel, handler)) {
        try {
          if (pattern) await sub.psubscribe(keys.channel(channel));
          else await sub.subscribe(keys.channel(channel));
        } catch (err) {
          table.remove(channel, handler);
          throw err;
        }
      }
      let done = false;
      return async () => {
        if (done) return;
        done = true;
        if (table.remove(channel, handler)) {
          if (pattern) await sub.punsubscribe(keys.channel(channel));
          else await sub.unsubscribe(keys.channel(channel));
        }
      };
    },
    activeSubscriptions: () => table.handlers.size,
    async close() {
      table.handlers.clear();
      sub.disconnect();
    },
  };
}

/** Single-process stand-in (embedded mode). Delivery is asynchronous, like Redis. */
export function createMemoryBus(opts: { onError?: (err: unknown) => void } = {}): Bus {
  const table = createHandlerTable(opts.onError ?? (() => {}));
  const patternMatches = (pattern: string, channel: string) => channel.startsWith(pattern.slice(0, -1));
  return {
    async publish(channel, message) {
      queueMicrotask(() => {
        table.dispatch(channel, message, channel);
        for (const key of table.handlers.keys()) {
          if (isPattern(key) && patternMatches(key, channel)) table.dispatch(key, message, channel);
        }
      });
    },
    async subscribe(channel, handler) {
      table.add(channel, handler);
      let done = false;
      return async () => {
        if (done) return;
        done = true;
        table.remove(channel, handler);
      };
    },
    activeSubscriptions: () => table.handlers.size,
    async close() {
      table.handlers.clear();
    },
  };
}
