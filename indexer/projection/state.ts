import type {
  AchievementDef,
  CreatorAccrualRow,
  CreatorClaimRow,
  DailyPnlDelta,
  FeeConfigRow,
  IdTable,
  LevelRow,
  MarketRow,
  OrderRow,
  PositionRow,
  ReferralLockRow,
  ReferrerClaimRow,
  ReferrerCreditRow,
  ReferrerEarningsRow,
  SettledTradeRow,
  TickSizeRow,
  TradeRow,
  TraderActivityRow,
  UserAchievementRow,
  UserStatsRow,
} from './rows';

/** A table's rows by key, with the keys written in this batch. */
export class Table<K, R> {
  readonly rows = new Map<K, R>();
  readonly dirty = new Set<K>();
  readonly created = new Set<K>();
  get(key: K): R | undefined {
    return this.rows.get(key);
  }
  /** A loaded row. */
  load(key: K, row: R): void {
    this.rows.set(key, row);
  }
  insert(key: K, row: R): void {
    this.rows.set(key, row);
    this.created.add(key);
    this.dirty.add(key);
  }
  touch(key: K): void {
    this.dirty.add(key);
  }
  dirtyRows(): R[] {
    return [...this.dirty].map((k) => this.rows.get(k) as R);
  }
}

export const orderKey = (market: string, orderId: bigint) => `${market}:${orderId}`;
export const levelKey = (market: string, bookSide: number, price: number) => `${market}:${bookSide}:${price}`;
export const earningsKey = (wallet: string, mint: string) => `${wallet}:${mint}`;
export const achievementKey = (wallet: string, id: number) => `${wallet}:${id}`;


export class BatchState {
  readonly markets = new Table<string, MarketRow>();
  readonly orders = new Table<string, OrderRow>();
  readonly levels = new Table<string, LevelRow>();
  readonly positions = new Table<string, PositionRow>();
  readonly locks = new Table<string, ReferralLockRow>();
  readonly earnings = new Table<string, ReferrerEarningsRow>();
  readonly activity = new Table<string, TraderActivityRow>();
  readonly stats = new Table<string, UserStatsRow>();
  readonly userAchievements = new Table<string, UserAchievementRow>();

  readonly trades: TradeRow[] = [];
  readonly feeConfigs: FeeConfigRow[] = [];
  readonly tickSizes: TickSizeRow[] = [];
  readonly referrerCredits: ReferrerCreditRow[] = [];
  readonly referrerClaims: ReferrerClaimRow[] = [];
  readonly creatorAccruals: CreatorAccrualRow[] = [];
  readonly creatorClaims: CreatorClaimRow[] = [];
  readonly settledTrades: SettledTradeRow[] = [];
  readonly dailyPnl = new Map<string, DailyPnlDelta>();

  /** Markets whose book levels were all loaded (level rows exist only for non-empty levels). */
  readonly bookLoaded = new Set<string>();
  /** Wallets whose activity, stats and achievements were all loaded. */
  readonly walletsLoaded = new Set<string>();
  /** Markets whose levels changed: their best bid and ask are recomputed at the end. */
  readonly bookTouched = new Set<string>();
  /** Position (market, owner) → address, to find a wallet's position in a market. */
  readonly positionByOwner = new Map<string, string>();
  /** Market state as first seen in this batch, to publish only fields that changed. */
  readonly marketsBefore = new Map<string, Partial<MarketRow> | undefined>();
  /** Net change of the number of markets per state (market_counts). */
  readonly stateCounts = new Map<number, number>();
  countState(state: number, delta: number): void {
    this.stateCounts.set(state, (this.stateCounts.get(state) ?? 0) + delta);
  }
  /** What the batch adds to the platform totals (platform_totals, `/stats/platform`). */
  readonly platform = { volume: 0n, trades: 0, positions: 0, traders: 0, protocolFees: 0n, creatorFees: 0n };
  /** Positions changed in this batch, for `positions:{wallet}` updates. */
  readonly touchedPositions = new Set<string>();

  constructor(
    private readonly nextIds: Record<string, number>,
    readonly achievements: AchievementDef[],
  ) {}

  nextId(table: IdTable): number {
    const id = this.nextIds[table] ?? 1;
    this.nextIds[table] = id + 1;
    return id;
  }

  private readonly walletAchievementKeys = new Map<string, string[]>();
  /** The `userAchievements` keys of a wallet, one per catalog entry in catalog order. */
  achievementKeys(wallet: string): string[] {
    let keys = this.walletAchievementKeys.get(wallet);
    if (!keys) {
      keys = this.achievements.map((def) => achievementKey(wallet, def.id));
      this.walletAchievementKeys.set(wallet, keys);
    }
    return keys;
  }

  idCounters(): Record<string, number> {
    return { ...this.nextIds };
  }

  rememberMarket(address: string): void {
    if (this.marketsBefore.has(address)) return;
    const m = this.markets.get(address);
    this.marketsBefore.set(address, m ? { ...m } : undefined);
  }
}
