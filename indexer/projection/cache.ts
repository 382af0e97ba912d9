import { OrderStatusCode } from '../../core/domain/codes';
import type {
  LevelRow,
  MarketRow,
  OrderRow,
  PositionRow,
  ReferralLockRow,
  ReferrerEarningsRow,
  TraderActivityRow,
  UserAchievementRow,
  UserStatsRow,
} from './rows';
import type { BatchState } from './state';

/** A wallet's rows that the achievements read and write, cached together or not at all. */
export interface WalletRows {
  activity: TraderActivityRow | undefined;
  stats: UserStatsRow | undefined;
  /** By `achievementKey`. */
  achievements: Map<string, UserAchievementRow>;
}

/**
 * Rows as the batches applied so far left them, kept across batches so that the next batch
 * reads most of its state from memory instead of PostgreSQL (design section 3, D-62).
 *
 * The rule that keeps it right: every row a batch wrote, or will write once its commit lands,
 * is here, so a key that is missing can be read from the committed tables. A group (a
 * market's order book, a wallet's activity, stats and achievements) is cached whole or not
 * at all, because a missing level or achievement row means "zero". Rows are shared with the
 * batch states that apply events to them: whoever finds the cache stale (a failed commit, a
 * batch whose events were partly in the ledger already) clears it.
 */
export class RowCache {
  readonly markets = new Map<string, MarketRow>();
  readonly orders = new Map<string, OrderRow>();
  readonly positions = new Map<string, PositionRow>();
  /** `${market}:${owner}` → position address, for the positions above. */
  readonly positionByOwner = new Map<string, string>();
  /** Market → its non-empty levels by `levelKey`: the whole book. */
  readonly books = new Map<string, Map<string, LevelRow>>();
  readonly wallets = new Map<string, WalletRows>();
  readonly locks = new Map<string, ReferralLockRow>();
  readonly earnings = new Map<string, ReferrerEarningsRow>();
  /**
   * Orders a batch closed and positions it settled, dropped once that batch committed: no
   * event changes them again (one that tries is a contradiction, found as well in the tables).
   */
  private readonly closed: { seq: number; orders: string[]; positions: string[] }[] = [];

  constructor(readonly maxRows: number) {}

  size(): number {
    let levels = 0;
    for (const b of this.books.values()) levels += b.size;
    return this.markets.size + this.orders.size + this.positions.size + levels + this.wallets.size + this.locks.size + this.earnings.size;
  }

  clear(): void {
    for (const m of [this.markets, this.orders, this.positions, this.positionByOwner, this.books, this.wallets, this.locks, this.earnings]) m.clear();
    this.closed.length = 0;
  }

  /** Takes in every row of a batch state after its events were applied (batch `seq`). */
  absorb(st: BatchState, seq: number): void {
    for (const [k, r] of st.markets.rows) this.markets.set(k, r);
    const orders: string[] = [];
    for (const [k, r] of st.orders.rows) {
      this.orders.set(k, r);
      if (CLOSED.has(r.statusCode)) orders.push(k);
    }
    const positions: string[] = [];
    for (const [k, r] of st.positions.rows) {
      this.positions.set(k, r);
      if (r.settled) positions.push(k);
    }
    if (orders.length || positions.length) this.closed.push({ seq, orders, positions });
    for (const [k, a] of st.positionByOwner) this.positionByOwner.set(k, a);
    for (const [k, r] of st.locks.rows) this.locks.set(k, r);
    for (const [k, r] of st.earnings.rows) this.earnings.set(k, r);

    const books = new Map<string, Map<string, LevelRow>>();
    for (const m of st.bookLoaded) books.set(m, new Map());
    for (const [k, l] of st.levels.rows) {
      const book = books.get(l.marketAddress);
      if (!book) throw new Error(`level ${k} belongs to a book the batch did not load`);
      if (l.quantity > 0n) book.set(k, l);
    }
    for (const [m, b] of books) this.books.set(m, b);

    for (const w of st.walletsLoaded) {
      const achievements = new Map<string, UserAchievementRow>();
      for (const k of st.achievementKeys(w)) {
        const row = st.userAchievements.get(k);
        if (row) achievements.set(k, row);
      }
      this.wallets.set(w, { activity: st.activity.get(w), stats: st.stats.get(w), achievements });
    }
    for (const w of [...st.activity.rows.keys(), ...st.stats.rows.keys()]) {
      if (!st.walletsLoaded.has(w)) throw new Error(`wallet ${w} has rows the batch did not load`);
    }
  }

  /** Batch `seq` and every one before it committed: what they closed can go. */
  committed(seq: number): void {
    while (this.closed.length && this.closed[0]!.seq <= seq) {
      const { orders, positions } = this.closed.shift()!;
      for (const k of orders) {
        const o = this.orders.get(k);
        if (o && CLOSED.has(o.statusCode)) this.orders.delete(k);
      }
      for (const k of positions) {
        const p = this.positions.get(k);
        if (!p?.settled) continue;
        this.positions.delete(k);
        this.positionByOwner.delete(`${p.marketAddress}:${p.owner}`);
      }
    }
  }
}

const CLOSED = new Set<number>([OrderStatusCode.filled, OrderStatusCode.cancelled, OrderStatusCode.expired]);
