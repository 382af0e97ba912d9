import { createMemoryBus, type Bus } from '../../core/redis/bus';
import { createMemoryUpdateLog, type UpdateEnvelope, type UpdateLog } from '../../core/redis/updates';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createHub, type HubClient } from '../../server/ws/hub';

/** A socket's side of the hub: records frames; `buffered` stands for ws.bufferedAmount. */
function client(buffered = 0) {
  const frames: Record<string, unknown>[] = [];
  let closedForBackpressure = false;
  const c: HubClient & { frames: typeof frames; buffered: number; backpressureClosed: () => boolean } = {
    frames,
    buffered,
    skips: 0,
    closed: false,
    get bufferedAmount() {
      return c.buffered;
    },
    send: (frame) => void frames.push(JSON.parse(frame.toString()) as Record<string, unknown>),
    closeForBackpressure: () => void (closedForBackpressure = true),
    backpressureClosed: () => closedForBackpressure,
  };
  return c;
}

function setup() {
  const bus = createMemoryBus();
  const updates = createMemoryUpdateLog({ bus });
  const metrics = createMetrics({ processMetrics: false });
  const hub = createHub({ bus, updates, metrics, logger: createLogger({ level: 'silent', service: 't', tenant: 't' }), backpressure: { maxBufferedBytes: 100, maxSkips: 3 } });
  const flush = () => new Promise<void>((r) => setImmediate(r));
  return { bus, updates, hub, metrics, flush };
}

/**
 * A bus whose subscriptions complete when the test says, as Redis's do after a round trip; the
 * handler is registered at once, as the Redis bus registers it before sending SUBSCRIBE.
 */
function slowBus() {
  const inner = createMemoryBus();
  const pending: (() => void)[] = [];
  const bus: Bus = {
    ...inner,
    subscribe: (channel, handler) => {
      const unsubscribe = inner.subscribe(channel, handler);
      return new Promise<void>((resolve) => pending.push(resolve)).then(() => unsubscribe);
    },
  };
  return { bus, complete: (i: number) => pending[i]!() };
}

describe('channel hub', () => {
  it('sends each update once to a channel subscribed again while its released subscription was still being made', async () => {
    const { bus, complete } = slowBus();
    const updates = createMemoryUpdateLog({ bus });
    const hub = createHub({ bus, updates, metrics: createMetrics({ processMetrics: false }), logger: createLogger({ level: 'silent', service: 't', tenant: 't' }), backpressure: { maxBufferedBytes: 100, maxSkips: 3 } });
    const flush = () => new Promise<void>((r) => setImmediate(r));
    // a resumes, and its socket closes while the channel's bus subscription is being made.
    const a = client();
    const aJoining = hub.subscribe(a, 'orderbook:1', 0, () => {});
    hub.removeClient(a);
    // b subscribes the channel again: a new subscription, whose completion comes first.
    const b = client();
    const bJoining = hub.subscribe(b, 'orderbook:1', undefined, () => {});
    complete(1);
    await bJoining;
    await updates.append([{ channel: 'orderbook:1', slot: 7, data: { marketId: '1', bestBid: 1, bestAsk: 9000 } }]);
    await flush();
    complete(0);
    await aJoining;
    await flush();
    expect(b.frames.map((f) => f.seq)).toEqual([1]);
    expect(a.frames).toEqual([]);
    // The released subscription's handler is gone once it completed: the next update once too.
    await updates.append([{ channel: 'orderbook:1', slot: 8, data: { marketId: '1', bestBid: 2, bestAsk: 9000 } }]);
    await flush();
    expect(b.frames.map((f) => f.seq)).toEqual([1, 2]);
    expect(bus.activeSubscriptions()).toBe(1);
  });

  it('sends an update once to a client whose replay held it before its bus message arrived', async () => {
    // The stream and the bus are two Redis connections: the replay can read seq 2 from the
    // stream while seq 2's bus message is still on its way to this replica.
    const bus = createMemoryBus();
    const env = (seq: number): UpdateEnvelope => ({ seq, slot: seq, data: { marketId: '1', bestBid: seq, bestAsk: 9000 } });
    const updates: UpdateLog = { append: async () => {}, since: async () => ({ ok: true, entries: [env(1), env(2)], latest: 2 }) };
    const hub = createHub({ bus, updates, metrics: createMetrics({ processMetrics: false }), logger: createLogger({ level: 'silent', service: 't', tenant: 't' }), backpressure: { maxBufferedBytes: 100, maxSkips: 3 } });
    const flush = () => new Promise<void>((r) => setImmediate(r));
    const resumed = client();
    const live = client();
    await hub.subscribe(live, 'orderbook:1', undefined, () => {});
    await hub.subscribe(resumed, 'orderbook:1', 0, () => {});
    expect(resumed.frames.map((f) => f.seq)).toEqual([1, 2]);
    await bus.publish('orderbook:1', JSON.stringify(env(2)));
    await bus.publish('orderbook:1', JSON.stringify(env(3)));
    await flush();
    expect(resumed.frames.map((f) => f.seq)).toEqual([1, 2, 3]);
    expect(live.frames.map((f) => f.seq)).toEqual([2, 3]);
  });

  it('keeps the channel for a subscriber that joins while the last one leaves', async () => {
    const { hub, updates, bus, flush } = setup();
    const a = client();
    const b = client();
    await hub.subscribe(a, 'market:1', undefined, () => {});
    const joining = hub.subscribe(b, 'market:1', undefined, () => {});
    hub.unsubscribe(a, 'market:1'); // while b waits for the bus subscription
    await joining;
    expect(hub.channelCount()).toBe(1);
    expect(bus.activeSubscriptions()).toBe(1);
    await updates.append([{ channel: 'market:1', slot: 5, data: { marketId: '1', field: 'state', value: 2 } }]);
    await flush();
    expect(b.frames).toMatchObject([{ type: 'update', channel: 'market:1', seq: 1, slot: 5 }]);
    expect(a.frames).toEqual([]);
  });

  it('does not add a client that backpressure dropped during its replay', async () => {
    const { hub, updates, metrics, flush } = setup();
    for (let i = 1; i <= 5; i++) await updates.append([{ channel: 'orderbook:1', slot: i, data: { marketId: '1', bestBid: i, bestAsk: 9000 } }]);
    const fast = client(); // keeps the channel alive, so a wrongly re-added client would be served
    await hub.subscribe(fast, 'orderbook:1', undefined, () => {});
    const slow = client(1_000); // over the 100-byte test limit from the start
    await hub.subscribe(slow, 'orderbook:1', 0, () => {});
    expect(slow.backpressureClosed()).toBe(true); // the third skipped replay closed it
    slow.buffered = 0; // even if its buffer drains, a dropped client gets nothing more
    await updates.append([{ channel: 'orderbook:1', slot: 6, data: { marketId: '1', bestBid: 6, bestAsk: 9000 } }]);
    await flush();
    expect(slow.frames).toEqual([]);
    expect(fast.frames).toMatchObject([{ seq: 6 }]);
    expect((await metrics.wsSubscriptions.get()).values[0]?.value).toBe(1);
  });

  describe('at a switch of the live projection schema (D-410)', () => {
    function switchable() {
      const bus = createMemoryBus();
      let live = 'public';
      // The API's log reads the live schema's sequences; the writers append under their own.
      const updates = createMemoryUpdateLog({ bus, schema: () => live });
      const metrics = createMetrics({ processMetrics: false });
      const hub = createHub({ bus, updates, metrics, logger: createLogger({ level: 'silent', service: 't', tenant: 't' }), backpressure: { maxBufferedBytes: 100, maxSkips: 3 }, liveSchema: () => live });
      const flush = () => new Promise<void>((r) => setImmediate(r));
      const book = (slot: number, schema: string) => updates.append([{ channel: 'orderbook:1', slot, data: { marketId: '1', bestBid: slot, bestAsk: 9000 } }], undefined, schema);
      return { bus, updates, hub, metrics, flush, book, switchTo: (s: string) => (live = s) };
    }

    it('delivers only the live schema\'s updates, each schema numbered from 1', async () => {
      const { hub, flush, book, switchTo } = switchable();
      const a = client();
      await hub.subscribe(a, 'orderbook:1', undefined, () => {});
      await book(10, 'public');
      await book(11, 'p2'); // the builder, before the switch
      await flush();
      expect(a.frames).toMatchObject([{ seq: 1, slot: 10 }]);
      switchTo('p2');
      await book(12, 'public'); // the old writer, still running after the switch
      await book(13, 'p2');
      await flush();
      expect(a.frames.map((f) => [f.seq, f.slot])).toEqual([[1, 10], [2, 13]]);
    });

    it('answers an old seq as not resumable and replays the new schema\'s sequence', async () => {
      const { hub, book, switchTo } = switchable();
      for (let i = 1; i <= 5; i++) await book(i, 'public');
      await book(100, 'p2');
      switchTo('p2');
      const outcomes: unknown[] = [];
      const old = client();
      await hub.subscribe(old, 'orderbook:1', 5, (o) => outcomes.push(o));
      expect(outcomes).toEqual([{ resumed: 'snapshot', latest: 1 }]);
      const fresh = client();
      await hub.subscribe(fresh, 'orderbook:1', 0, (o) => outcomes.push(o));
      expect(outcomes[1]).toEqual({ resumed: 'replayed', count: 1, latest: 1 });
      expect(fresh.frames).toMatchObject([{ seq: 1, slot: 100 }]);
    });

    it('forgets every subscription and bus subscription at reset, and serves a new subscriber afresh', async () => {
      const { hub, bus, metrics, flush, book, switchTo } = switchable();
      const a = client();
      const b = client();
      await hub.subscribe(a, 'orderbook:1', undefined, () => {});
      await hub.subscribe(b, 'market:1', undefined, () => {});
      switchTo('p2');
      hub.reset();
      await flush();
      expect(hub.channelCount()).toBe(0);
      expect(bus.activeSubscriptions()).toBe(0);
      expect((await metrics.wsSubscriptions.get()).values[0]?.value).toBe(0);
      hub.removeClient(a); // its socket's close, later: counts nothing twice
      expect((await metrics.wsSubscriptions.get()).values[0]?.value).toBe(0);
      const c = client();
      await hub.subscribe(c, 'orderbook:1', undefined, () => {});
      await book(7, 'p2');
      await flush();
      expect(c.frames).toMatchObject([{ seq: 1, slot: 7 }]);
      expect(a.frames).toEqual([]);
    });
  });
});
