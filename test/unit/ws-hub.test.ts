import { createMemoryBus } from '../../core/redis/bus';
import { createMemoryUpdateLog } from '../../core/redis/updates';
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

describe('channel hub', () => {
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
});
