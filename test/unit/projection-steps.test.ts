import { finalizeBook } from '../../indexer/projection/book';
import { buildMessages } from '../../indexer/projection/messages';
import type { MarketRow } from '../../indexer/projection/rows';
import { BatchState, levelKey } from '../../indexer/projection/state';

/** The projector's pure steps, without PostgreSQL: the book's best prices and the published messages. */
const market = (over: Partial<MarketRow> = {}): MarketRow => ({
  id: 1, address: 'M1', marketId: 7n, oracleFeed: null, oracleFeedId: null, settlementMint: 'USDC', creator: null, durationSeconds: null,
  maxConfidenceRatioBps: null, state: 2, outcome: null, tStart: new Date(0), tEnd: new Date(60_000), startPrice: null, startPriceConf: null,
  startPriceExpo: null, endPrice: null, endPriceConf: null, endPriceExpo: null, totalCollateral: 0n, totalYesShares: 0n, totalNoShares: 0n,
  totalVolume: 0n, totalTrades: 0, totalPositions: 0, bestBid: null, bestAsk: null, accumulatedCreatorFees: 0n, creatorFeesEarned: 0n,
  createdAt: new Date(0), resolvedAt: null, updatedAt: new Date(0), createdSlot: 1, createdSignature: 's', ...over,
});

function stateWith(m: MarketRow, levels: [side: number, price: number, qty: bigint][]): BatchState {
  const st = new BatchState({}, []);
  st.markets.load(m.address, m);
  st.rememberMarket(m.address);
  for (const [bookSide, priceBps, quantity] of levels) {
    st.levels.load(levelKey(m.address, bookSide, priceBps), { marketAddress: m.address, bookSide, priceBps, quantity, orders: quantity > 0n ? 1 : 0 });
  }
  st.bookTouched.add(m.address);
  return st;
}

describe('projection steps (pure)', () => {
  it('best bid is the highest non-empty bid level and best ask the lowest ask; emptied levels do not count', () => {
    const st = stateWith(market(), [[0, 4000, 5n], [0, 4500, 0n], [0, 4200, 1n], [1, 6000, 2n], [1, 5500, 3n]]);
    finalizeBook(st);
    expect(st.markets.get('M1')).toMatchObject({ bestBid: 4200, bestAsk: 5500 });
    expect(st.markets.dirty.has('M1')).toBe(true);
  });

  it('leaves a market untouched when its best prices did not change', () => {
    const st = stateWith(market({ bestBid: 4000, bestAsk: null }), [[0, 4000, 5n]]);
    finalizeBook(st);
    expect(st.markets.dirty.has('M1')).toBe(false);
  });

  it('publishes each changed market field and the top of book once, amounts as decimal strings', () => {
    const st = stateWith(market(), [[0, 4000, 5n]]);
    const m = st.markets.get('M1')!;
    m.totalVolume = 12345678901234567890n;
    m.state = 3;
    finalizeBook(st);
    expect(buildMessages(st, 99)).toEqual([
      { channel: 'market:7', slot: 99, data: { marketId: '7', field: 'state', value: 3 } },
      { channel: 'market:7', slot: 99, data: { marketId: '7', field: 'totalVolume', value: '12345678901234567890' } },
      { channel: 'market:7', slot: 99, data: { marketId: '7', field: 'bestBid', value: 4000 } },
      { channel: 'orderbook:7', slot: 99, data: { marketId: '7', bestBid: 4000, bestAsk: null } },
    ]);
  });

  it('publishes nothing for a market the batch did not change', () => {
    const st = stateWith(market({ bestBid: 4000 }), [[0, 4000, 5n]]);
    finalizeBook(st);
    expect(buildMessages(st, 5)).toEqual([]);
  });
});
