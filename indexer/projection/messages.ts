import { liveUpdate, PUBLISHED_MARKET_FIELDS, type LiveUpdate } from '../../core/live/channels';
import type { MarketRow } from './rows';
import type { BatchState } from './state';

const jsonValue = (v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v instanceof Date ? v.toISOString() : v);

/**
 * What a committed batch publishes: one message per changed market field, top-of-book change
 * and touched position.
 */
export function buildMessages(st: BatchState, slot: number): LiveUpdate[] {
  const out: LiveUpdate[] = [];
  for (const [address, before] of st.marketsBefore) {
    const m = st.markets.get(address) as MarketRow | undefined;
    if (!m) continue;
    const marketId = m.marketId.toString();
    for (const field of PUBLISHED_MARKET_FIELDS) {
      const value = m[field];
      if (before && before[field] === value) continue;
      if (!before && (value === null || value === 0 || value === 0n)) continue;
      out.push(liveUpdate('market', marketId, slot, { marketId, field, value: jsonValue(value) }));
    }
    if (!before || before.bestBid !== m.bestBid || before.bestAsk !== m.bestAsk) {
      if (before || m.bestBid !== null || m.bestAsk !== null) {
        out.push(liveUpdate('orderbook', marketId, slot, { marketId, bestBid: m.bestBid, bestAsk: m.bestAsk }));
      }
    }
  }
  for (const address of st.touchedPositions) {
    const p = st.positions.get(address);
    const m = p && st.markets.get(p.marketAddress);
    if (!p || !m) continue;
    out.push(liveUpdate('positions', p.owner, slot, { marketId: m.marketId.toString(), owner: p.owner, yesShares: p.yesShares.toString(), noShares: p.noShares.toString() }));
  }
  return out;
}
