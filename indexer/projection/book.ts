import type { BatchState } from './state';

/** Best bid and ask of every market whose book changed, from its level rows. */
export function finalizeBook(st: BatchState): void {
  if (!st.bookTouched.size) return;
  const best = new Map<string, { bid: number | null; ask: number | null }>();
  for (const m of st.bookTouched) best.set(m, { bid: null, ask: null });
  for (const l of st.levels.rows.values()) {
    const b = best.get(l.marketAddress);
    if (!b || l.quantity <= 0n) continue;
    if (l.bookSide === 0) b.bid = b.bid === null ? l.priceBps : Math.max(b.bid, l.priceBps);
    else b.ask = b.ask === null ? l.priceBps : Math.min(b.ask, l.priceBps);
  }
  for (const [address, b] of best) {
    const m = st.markets.get(address);
    if (!m || (m.bestBid === b.bid && m.bestAsk === b.ask)) continue;
    m.bestBid = b.bid;
    m.bestAsk = b.ask;
    st.markets.touch(address);
  }
}
