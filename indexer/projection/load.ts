import type { IBaseProtocol } from 'pg-promise';
import type { RowCache } from './cache';
import type { ProgramEvent } from '../../core/events';
import { createDecoder } from '../../core/db/table';
import * as tables from '../../core/db/tables';
import { achievementKey, earningsKey, levelKey, orderKey, type BatchState, type Table } from './state';

type Row = Record<string, unknown>;

/** Rows as pg returns them (`SELECT *`) into the batch's in-memory rows. */
const decode = {
  market: createDecoder(tables.markets),
  order: createDecoder(tables.orders),
  level: createDecoder(tables.orderbookLevels),
  position: createDecoder(tables.positions),
  activity: createDecoder(tables.traderActivity),
  stats: createDecoder(tables.userStats),
  achievement: createDecoder(tables.userAchievements),
  lock: createDecoder(tables.referralLocks),
  earnings: createDecoder(tables.referrerEarnings),
};

/** Every key the batch's events will read, gathered before one query per table. */
interface Keys {
  markets: Set<string>;
  books: Set<string>;
  orders: Map<string, { market: string; orderId: bigint }>;
  positions: Set<string>;
  positionOwners: Map<string, { market: string; owner: string }>;
  traders: Set<string>;
  settlers: Set<string>;
  lockWallets: Set<string>;
  earnings: Map<string, { wallet: string; mint: string }>;
}

function collectKeys(events: ProgramEvent[]): Keys {
  const k: Keys = {
    markets: new Set(),
    books: new Set(),
    orders: new Map(),
    positions: new Set(),
    positionOwners: new Map(),
    traders: new Set(),
    settlers: new Set(),
    lockWallets: new Set(),
    earnings: new Map(),
  };
  const order = (market: string, orderId: bigint) => k.orders.set(orderKey(market, orderId), { market, orderId });
  const owner = (market: string, wallet: string) => k.positionOwners.set(`${market}:${wallet}`, { market, owner: wallet });
  for (const ev of events) {
    switch (ev.kind) {
      case 'MarketInitialized':
      case 'TradingStarted':
      case 'MarketSettling':
      case 'MarketResolved':
      case 'MarketClosed':
      case 'CreatorFeesAccrued':
      case 'CreatorFeesClaimed':
        k.markets.add(ev.data.market);
        break;
      case 'OrderPlaced':
      case 'OrderCancelled':
      case 'OrderExpired':
        k.markets.add(ev.data.market);
        k.books.add(ev.data.market);
        order(ev.data.market, ev.data.orderId);
        break;
      case 'OrderFilled': {
        const d = ev.data;
        k.markets.add(d.market);
        k.books.add(d.market);
        order(d.market, d.makerOrderId);
        order(d.market, d.takerOrderId);
        k.positions.add(d.makerPosition).add(d.takerPosition);
        owner(d.market, d.maker);
        owner(d.market, d.taker);
        k.traders.add(d.maker).add(d.taker);
        break;
      }
      case 'PositionSettled':
        k.markets.add(ev.data.market);
        k.positions.add(ev.data.position);
        k.settlers.add(ev.data.owner);
        break;
      case 'ReferralLocked':
        k.lockWallets.add(ev.data.wallet);
        break;
      case 'ReferrerCredited':
      case 'ReferrerClaimed':
        k.earnings.set(earningsKey(ev.data.referrer, ev.data.settlementMint), { wallet: ev.data.referrer, mint: ev.data.settlementMint });
        break;
      case 'FeeConfigChanged':
      case 'TickSizeChanged':
        break;
      default: {
        const never: never = ev;
        throw new Error(`unhandled event ${JSON.stringify(never)}`);
      }
    }
  }
  return k;
}

/** Rows of `keys` that `cached` holds go into `table`; the others are returned, to be read. */
function takeCached<R, V>(keys: Map<string, V> | Set<V & string>, cached: Map<string, R> | undefined, table: Table<string, R>): V[] {
  const missing: V[] = [];
  for (const [key, v] of keys.entries()) {
    const hit = cached?.get(key);
    if (hit) table.load(key, hit);
    else missing.push(v);
  }
  return missing;
}

/**
 * Loads into `state` every row the batch's events touch: from `cache` what it holds, the rest
 * with one query per table.
 */
export async function loadState(q: IBaseProtocol<unknown>, state: BatchState, events: ProgramEvent[], cache?: RowCache): Promise<void> {
  const k = collectKeys(events);
  const markets = takeCached(k.markets, cache?.markets, state.markets);
  if (markets.length) {
    for (const r of await q.any<Row>('SELECT * FROM markets WHERE address = ANY($1)', [markets])) {
      state.markets.load(r.address as string, decode.market(r));
    }
  }
  const books: string[] = [];
  for (const m of k.books) {
    const hit = cache?.books.get(m);
    if (!hit) {
      books.push(m);
      continue;
    }
    for (const [key, l] of hit) state.levels.load(key, l);
    state.bookLoaded.add(m);
  }
  if (books.length) {
    for (const r of await q.any<Row>('SELECT * FROM orderbook_levels WHERE market_address = ANY($1)', [books])) {
      const l = decode.level(r);
      state.levels.load(levelKey(l.marketAddress, l.bookSide, l.priceBps), l);
    }
    books.forEach((m) => state.bookLoaded.add(m));
  }
  const orders = takeCached(k.orders, cache?.orders, state.orders);
  if (orders.length) {
    const rows = await q.any<Row>(
      `SELECT o.* FROM orders o
         JOIN unnest($1::text[], $2::numeric[]) AS k(m, id) ON o.market_address = k.m AND o.order_id = k.id`,
      [orders.map((o) => o.market), orders.map((o) => o.orderId.toString())],
    );
    for (const r of rows) {
      const o = decode.order(r);
      state.orders.load(orderKey(o.marketAddress, o.orderId), o);
    }
  }
  const positions: string[] = [];
  const owners: { market: string; owner: string }[] = [];
  const cachedPosition = (address: string | undefined): boolean => {
    const hit = address === undefined ? undefined : cache?.positions.get(address);
    if (!hit) return false;
    state.positions.load(hit.address, hit);
    state.positionByOwner.set(`${hit.marketAddress}:${hit.owner}`, hit.address);
    return true;
  };
  for (const a of k.positions) if (!cachedPosition(a)) positions.push(a);
  for (const [key, o] of k.positionOwners) if (!cachedPosition(cache?.positionByOwner.get(key))) owners.push(o);
  if (positions.length || owners.length) {
    const rows = await q.any<Row>(
      `SELECT p.* FROM positions p WHERE p.address = ANY($1)
       UNION
       SELECT p.* FROM positions p
         JOIN unnest($2::text[], $3::text[]) AS k(m, w) ON p.market_address = k.m AND p.owner = k.w`,
      [positions, owners.map((o) => o.market), owners.map((o) => o.owner)],
    );
    for (const r of rows) {
      const p = decode.position(r);
      state.positions.load(p.address, p);
      state.positionByOwner.set(`${p.marketAddress}:${p.owner}`, p.address);
    }
  }
  // Achievements of a wallet read both its activity and its stats, whichever event touched it.
  const wallets: string[] = [];
  for (const w of new Set([...k.traders, ...k.settlers])) {
    state.walletsLoaded.add(w);
    const hit = cache?.wallets.get(w);
    if (!hit) {
      wallets.push(w);
      continue;
    }
    if (hit.activity) state.activity.load(w, hit.activity);
    if (hit.stats) state.stats.load(w, hit.stats);
    for (const [key, a] of hit.achievements) state.userAchievements.load(key, a);
  }
  if (wallets.length) {
    for (const r of await q.any<Row>('SELECT * FROM trader_activity WHERE wallet = ANY($1)', [wallets])) {
      const a = decode.activity(r);
      state.activity.load(a.wallet, a);
    }
    for (const r of await q.any<Row>('SELECT * FROM user_stats WHERE wallet = ANY($1)', [wallets])) {
      const s = decode.stats(r);
      state.stats.load(s.wallet, s);
    }
    for (const r of await q.any<Row>('SELECT * FROM user_achievements WHERE wallet = ANY($1)', [wallets])) {
      const a = decode.achievement(r);
      state.userAchievements.load(achievementKey(a.wallet, a.achievementId), a);
    }
  }
  const locks = takeCached(k.lockWallets, cache?.locks, state.locks);
  if (locks.length) {
    for (const r of await q.any<Row>('SELECT * FROM referral_locks WHERE wallet = ANY($1)', [locks])) {
      const l = decode.lock(r);
      state.locks.load(l.wallet, l);
    }
  }
  const list = takeCached(k.earnings, cache?.earnings, state.earnings);
  if (list.length) {
    const rows = await q.any<Row>(
      `SELECT e.* FROM referrer_earnings e
         JOIN unnest($1::text[], $2::text[]) AS k(w, m) ON e.wallet = k.w AND e.settlement_mint = k.m`,
      [list.map((e) => e.wallet), list.map((e) => e.mint)],
    );
    for (const r of rows) {
      const e = decode.earnings(r);
      state.earnings.load(earningsKey(e.wallet, e.settlementMint), e);
    }
  }
}
