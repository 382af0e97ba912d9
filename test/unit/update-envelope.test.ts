import { createMemoryBus } from '../../core/redis/bus';
import { createMemoryUpdateLog, parseEnvelope } from '../../core/redis/updates';

describe('update envelope trace context (D-86)', () => {
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('carries the publish span\'s traceparent when given, and nothing otherwise', async () => {
    const bus = createMemoryBus();
    const seen: string[] = [];
    await bus.subscribe('market:1', (m) => void seen.push(m));
    const log = createMemoryUpdateLog({ bus });
    await log.append([{ channel: 'market:1', slot: 5, data: { marketId: '1', field: 'state', value: 2 } }], tp);
    await log.append([{ channel: 'market:1', slot: 6, data: { marketId: '1', field: 'state', value: 3 } }]);
    expect(seen.map((m) => parseEnvelope(m))).toEqual([
      { seq: 1, slot: 5, tp, data: { marketId: '1', field: 'state', value: 2 } },
      { seq: 2, slot: 6, data: { marketId: '1', field: 'state', value: 3 } },
    ]);
    const replay = await log.since('market:1', 0);
    expect(replay.ok && replay.entries.map((e) => e.tp)).toEqual([tp, undefined]);
  });

  it('refuses an envelope whose tp is not a string', () => {
    expect(parseEnvelope(JSON.stringify({ seq: 1, slot: 1, tp: 7, data: {} }))).toBeUndefined();
    expect(parseEnvelope(JSON.stringify({ seq: 1, slot: 1, tp, data: {} }))).toEqual({ seq: 1, slot: 1, tp, data: {} });
  });
});
