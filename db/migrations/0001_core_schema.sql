-- Up Migration
-- Every projection of spec part 2. Row ids of indexer-written tables are assigned by the
-- projector from indexer id counters committed in the same transaction as the rows, never
-- from sequences (which do not roll back): a crashed and replayed batch yields the same ids. Token amounts are NUMERIC so u64 values (and sums of
-- them) never lose precision; they leave the API as decimal strings. Each tenant has its
-- own database, so no table carries a tenant column.

CREATE DOMAIN u64 AS NUMERIC(20, 0)
  CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615);
-- Accumulators (sums of u64) and signed P&L figures: wide enough for any realistic sum.
CREATE DOMAIN amount AS NUMERIC(40, 0) CHECK (VALUE >= 0);
CREATE DOMAIN signed_amount AS NUMERIC(40, 0);
CREATE DOMAIN bps AS INTEGER CHECK (VALUE BETWEEN 0 AND 10000);

CREATE TABLE markets (
  id                        BIGINT PRIMARY KEY,
  address                   TEXT NOT NULL UNIQUE,
  market_id                 u64 NOT NULL,
  oracle_feed               TEXT,
  oracle_feed_id            TEXT CHECK (oracle_feed_id ~ '^[0-9a-f]{64}$'),
  settlement_mint           TEXT NOT NULL,
  creator                   TEXT,
  duration_seconds          u64,
  max_confidence_ratio_bps  bps,
  state                     SMALLINT NOT NULL CHECK (state BETWEEN 0 AND 5),
  outcome                   SMALLINT CHECK (outcome BETWEEN 0 AND 2),
  t_start                   TIMESTAMPTZ NOT NULL,
  t_end                     TIMESTAMPTZ NOT NULL CHECK (t_end > t_start),
  start_price               NUMERIC(20, 0),
  start_price_conf          u64,
  start_price_expo          INTEGER,
  end_price                 NUMERIC(20, 0),
  end_price_conf            u64,
  end_price_expo            INTEGER,
  -- Deprecated by the spec: frozen at its create-time value, never updated.
  total_collateral          amount NOT NULL DEFAULT 0,
  total_yes_shares          amount NOT NULL DEFAULT 0,
  total_no_shares           amount NOT NULL DEFAULT 0,
  total_volume              amount NOT NULL DEFAULT 0,
  total_trades              BIGINT NOT NULL DEFAULT 0 CHECK (total_trades >= 0),
  total_positions           BIGINT NOT NULL DEFAULT 0 CHECK (total_positions >= 0),
  best_bid                  bps,
  best_ask                  bps,
  -- Unclaimed creator fees (drops to 0 on claim) and the lifetime figure.
  accumulated_creator_fees  amount NOT NULL DEFAULT 0,
  creator_fees_earned       amount NOT NULL DEFAULT 0,
  created_at                TIMESTAMPTZ NOT NULL,
  resolved_at               TIMESTAMPTZ,
  updated_at                TIMESTAMPTZ NOT NULL,
  created_slot              BIGINT NOT NULL,
  created_signature         TEXT NOT NULL
);
-- GET /markets (optionally by state) pages newest epoch first; /markets/current looks up
-- state 2 or the next upcoming market; numeric /markets/:marketId looks up by epoch id.
CREATE INDEX markets_list_idx ON markets (market_id DESC, id DESC);
CREATE INDEX markets_state_list_idx ON markets (state, market_id DESC, id DESC);
CREATE INDEX markets_upcoming_idx ON markets (t_start) WHERE state IN (0, 1);
CREATE INDEX markets_creator_idx ON markets (creator, market_id DESC) WHERE creator IS NOT NULL;

CREATE TABLE orders (
  id               BIGINT PRIMARY KEY,
  market_address   TEXT NOT NULL REFERENCES markets (address),
  order_id         u64 NOT NULL,
  owner            TEXT NOT NULL,
  side_code        SMALLINT NOT NULL CHECK (side_code BETWEEN 0 AND 3),
  price_bps        bps NOT NULL,
  quantity         u64 NOT NULL CHECK (quantity > 0),
  filled_quantity  u64 NOT NULL DEFAULT 0,
  status_code      SMALLINT NOT NULL DEFAULT 0 CHECK (status_code BETWEEN 0 AND 5),
  order_type       SMALLINT NOT NULL DEFAULT 0 CHECK (order_type BETWEEN 0 AND 2),
  created_at       TIMESTAMPTZ NOT NULL,
  updated_at       TIMESTAMPTZ NOT NULL,
  created_slot     BIGINT NOT NULL,
  tx_signature     TEXT NOT NULL,
  CHECK (filled_quantity <= quantity),
  UNIQUE (market_address, order_id)
);
CREATE INDEX orders_owner_idx ON orders (owner, id DESC);
CREATE INDEX orders_owner_status_idx ON orders (owner, status_code, id DESC);
CREATE INDEX orders_resting_idx ON orders (market_address) WHERE status_code IN (0, 4);

-- Aggregated canonical YES book, maintained by the projector so that the top of book and
-- the 10 levels of market detail are index scans. book_side: 0 bid, 1 ask.
CREATE TABLE orderbook_levels (
  market_address  TEXT NOT NULL REFERENCES markets (address),
  book_side       SMALLINT NOT NULL CHECK (book_side IN (0, 1)),
  price_bps       bps NOT NULL,
  quantity        amount NOT NULL CHECK (quantity > 0),
  orders          INTEGER NOT NULL CHECK (orders > 0),
  PRIMARY KEY (market_address, book_side, price_bps)
);

CREATE TABLE trades (
  id                       BIGINT PRIMARY KEY,
  market_address           TEXT NOT NULL REFERENCES markets (address),
  maker_order_id           u64 NOT NULL,
  taker_order_id           u64 NOT NULL,
  maker                    TEXT NOT NULL,
  taker                    TEXT NOT NULL,
  maker_side               SMALLINT NOT NULL CHECK (maker_side BETWEEN 0 AND 3),
  taker_side               SMALLINT NOT NULL CHECK (taker_side BETWEEN 0 AND 3),
  price_bps                bps NOT NULL,
  quantity                 u64 NOT NULL CHECK (quantity > 0),
  taker_fee                u64 NOT NULL,
  fee_protocol             u64 NOT NULL,
  fee_creator              u64 NOT NULL,
  fee_referral             u64 NOT NULL,
  protocol_treasury_index  SMALLINT NOT NULL CHECK (protocol_treasury_index BETWEEN 0 AND 7),
  referrer                 TEXT,
  tx_signature             TEXT NOT NULL,
  event_index              INTEGER NOT NULL,
  slot                     BIGINT NOT NULL,
  executed_at              TIMESTAMPTZ NOT NULL,
  CHECK (fee_protocol + fee_creator + fee_referral = taker_fee),
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX trades_market_idx ON trades (market_address, id DESC);
CREATE INDEX trades_maker_idx ON trades (maker, id DESC);
CREATE INDEX trades_taker_idx ON trades (taker, id DESC);
CREATE INDEX trades_executed_idx ON trades (executed_at);

CREATE TABLE positions (
  id                    BIGINT PRIMARY KEY,
  address               TEXT NOT NULL UNIQUE,
  market_address        TEXT NOT NULL REFERENCES markets (address),
  owner                 TEXT NOT NULL,
  yes_shares            u64 NOT NULL DEFAULT 0,
  no_shares             u64 NOT NULL DEFAULT 0,
  collateral_deposited  amount NOT NULL DEFAULT 0,
  total_bought          amount NOT NULL DEFAULT 0,
  total_sold            amount NOT NULL DEFAULT 0,
  fees_paid             amount NOT NULL DEFAULT 0,
  -- Net cost per side (buys minus sells, before fees): the cost basis of settled trades.
  yes_cost              signed_amount NOT NULL DEFAULT 0,
  no_cost               signed_amount NOT NULL DEFAULT 0,
  settled               BOOLEAN NOT NULL DEFAULT false,
  payout                amount NOT NULL DEFAULT 0,
  created_at            TIMESTAMPTZ NOT NULL,
  updated_at            TIMESTAMPTZ NOT NULL,
  settled_at            TIMESTAMPTZ,
  UNIQUE (market_address, owner)
);
CREATE INDEX positions_owner_idx ON positions (owner, id DESC);
CREATE INDEX positions_owner_settled_idx ON positions (owner, settled, id DESC);

-- Program-wide configuration history; the live value is the newest row, the spec's
-- defaults apply while the table is empty. Invalid splits are stored (and reported by
-- /v2/fee-config invariants), so the split sum is deliberately not a constraint.
CREATE TABLE fee_config_history (
  id                  BIGINT PRIMARY KEY,
  fee_cap_bps         bps NOT NULL,
  decay_rate_bps      bps NOT NULL,
  protocol_share_bps  bps NOT NULL,
  creator_share_bps   bps NOT NULL,
  referral_share_bps  bps NOT NULL,
  changed_at          TIMESTAMPTZ NOT NULL,
  slot                BIGINT NOT NULL,
  tx_signature        TEXT NOT NULL,
  event_index         INTEGER NOT NULL,
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX fee_config_history_newest_idx ON fee_config_history (slot DESC, event_index DESC);

CREATE TABLE tick_size_history (
  id             BIGINT PRIMARY KEY,
  tick_size_bps  INTEGER NOT NULL CHECK (tick_size_bps BETWEEN 1 AND 10000),
  changed_at     TIMESTAMPTZ NOT NULL,
  slot           BIGINT NOT NULL,
  tx_signature   TEXT NOT NULL,
  event_index    INTEGER NOT NULL,
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX tick_size_history_newest_idx ON tick_size_history (slot DESC, event_index DESC);

CREATE TABLE referral_locks (
  wallet        TEXT PRIMARY KEY,
  referrer      TEXT NOT NULL CHECK (referrer <> wallet),
  expires_at    TIMESTAMPTZ NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL,
  updated_at    TIMESTAMPTZ NOT NULL,
  slot          BIGINT NOT NULL,
  tx_signature  TEXT NOT NULL
);
CREATE INDEX referral_locks_referrer_idx ON referral_locks (referrer);

CREATE TABLE referrer_earnings (
  wallet           TEXT NOT NULL,
  settlement_mint  TEXT NOT NULL,
  accumulated      amount NOT NULL DEFAULT 0,
  total_earned     amount NOT NULL DEFAULT 0,
  total_claimed    amount NOT NULL DEFAULT 0,
  last_credit_at   TIMESTAMPTZ,
  PRIMARY KEY (wallet, settlement_mint),
  CHECK (total_earned = accumulated + total_claimed)
);
CREATE INDEX referrer_earnings_leaderboard_idx ON referrer_earnings (total_earned DESC, wallet);

CREATE TABLE referrer_credits (
  id               BIGINT PRIMARY KEY,
  referrer         TEXT NOT NULL,
  referee          TEXT NOT NULL,
  market_address   TEXT NOT NULL,
  settlement_mint  TEXT NOT NULL,
  amount           u64 NOT NULL,
  credited_at      TIMESTAMPTZ NOT NULL,
  slot             BIGINT NOT NULL,
  tx_signature     TEXT NOT NULL,
  event_index      INTEGER NOT NULL,
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX referrer_credits_referrer_idx ON referrer_credits (referrer, referee);

CREATE TABLE referrer_claims (
  id               BIGINT PRIMARY KEY,
  wallet           TEXT NOT NULL,
  settlement_mint  TEXT NOT NULL,
  token_account    TEXT NOT NULL,
  amount           u64 NOT NULL,
  claimed_at       TIMESTAMPTZ NOT NULL,
  slot             BIGINT NOT NULL,
  tx_signature     TEXT NOT NULL,
  event_index      INTEGER NOT NULL,
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX referrer_claims_wallet_idx ON referrer_claims (wallet, id DESC);

CREATE TABLE creator_fee_accruals (
  id              BIGINT PRIMARY KEY,
  market_address  TEXT NOT NULL REFERENCES markets (address),
  creator         TEXT NOT NULL,
  amount          u64 NOT NULL,
  accrued_at      TIMESTAMPTZ NOT NULL,
  slot            BIGINT NOT NULL,
  tx_signature    TEXT NOT NULL,
  event_index     INTEGER NOT NULL,
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX creator_fee_accruals_market_idx ON creator_fee_accruals (market_address);

CREATE TABLE creator_fee_claims (
  id                     BIGINT PRIMARY KEY,
  market_address         TEXT NOT NULL REFERENCES markets (address),
  creator                TEXT NOT NULL,
  creator_token_account  TEXT NOT NULL,
  caller                 TEXT NOT NULL,
  amount                 u64 NOT NULL,
  claimed_at             TIMESTAMPTZ NOT NULL,
  slot                   BIGINT NOT NULL,
  tx_signature           TEXT NOT NULL,
  event_index            INTEGER NOT NULL,
  UNIQUE (tx_signature, event_index)
);
CREATE INDEX creator_fee_claims_market_idx ON creator_fee_claims (market_address, id DESC);

-- Per-wallet trading activity: leaderboards, platform unique traders, exploration progress.
CREATE TABLE trader_activity (
  wallet          TEXT PRIMARY KEY,
  trades_count    BIGINT NOT NULL DEFAULT 0,
  volume          amount NOT NULL DEFAULT 0,
  markets_traded  INTEGER NOT NULL DEFAULT 0,
  first_trade_at  TIMESTAMPTZ NOT NULL,
  last_trade_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX trader_activity_volume_idx ON trader_activity (volume DESC, wallet);

-- Stored personal statistics (spec 2.12); absent rows are computed on the fly by the API.
CREATE TABLE user_stats (
  wallet           TEXT PRIMARY KEY,
  total_trades     INTEGER NOT NULL DEFAULT 0,
  winning_trades   INTEGER NOT NULL DEFAULT 0,
  losing_trades    INTEGER NOT NULL DEFAULT 0,
  total_pnl        signed_amount NOT NULL DEFAULT 0,
  total_size       amount NOT NULL DEFAULT 0,
  best_trade_pnl   signed_amount,
  worst_trade_pnl  signed_amount,
  current_streak   INTEGER NOT NULL DEFAULT 0,
  longest_streak   INTEGER NOT NULL DEFAULT 0,
  updated_at       TIMESTAMPTZ NOT NULL,
  CHECK (winning_trades + losing_trades = total_trades)
);
CREATE INDEX user_stats_pnl_idx ON user_stats (total_pnl DESC, wallet);

-- One row per settled position side (spec 2.13), paged by keyset (settled_at, id).
CREATE TABLE settled_trades (
  id              BIGINT PRIMARY KEY,
  wallet          TEXT NOT NULL,
  market_address  TEXT NOT NULL REFERENCES markets (address),
  market_id       u64 NOT NULL,
  side            TEXT NOT NULL CHECK (side IN ('yes', 'no')),
  shares          u64 NOT NULL,
  -- Net cost basis of the side (buys minus sells): negative when sells returned more.
  cost            signed_amount NOT NULL,
  payout          amount NOT NULL,
  pnl             signed_amount NOT NULL,
  is_win          BOOLEAN NOT NULL,
  market_outcome  SMALLINT NOT NULL CHECK (market_outcome BETWEEN 0 AND 2),
  settled_at      TIMESTAMPTZ NOT NULL,
  t_start         TIMESTAMPTZ NOT NULL,
  t_end           TIMESTAMPTZ NOT NULL,
  slot            BIGINT NOT NULL,
  tx_signature    TEXT NOT NULL,
  UNIQUE (wallet, market_address, side)
);
CREATE INDEX settled_trades_keyset_idx ON settled_trades (wallet, settled_at DESC, id DESC);
CREATE INDEX settled_trades_outcome_keyset_idx ON settled_trades (wallet, is_win, settled_at DESC, id DESC);

CREATE TABLE daily_pnl (
  wallet  TEXT NOT NULL,
  day     DATE NOT NULL,
  pnl     signed_amount NOT NULL,
  PRIMARY KEY (wallet, day)
);

CREATE TABLE achievements (
  id           SERIAL PRIMARY KEY,
  code         TEXT NOT NULL UNIQUE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL,
  category     TEXT NOT NULL CHECK (category IN ('trading', 'streak', 'accuracy', 'exploration')),
  icon_url     TEXT,
  -- What progress counts, in the projector's vocabulary (see core/domain/achievements.ts).
  metric       TEXT NOT NULL,
  threshold    INTEGER NOT NULL CHECK (threshold > 0),
  created_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE user_achievements (
  wallet          TEXT NOT NULL,
  achievement_id  INTEGER NOT NULL REFERENCES achievements (id),
  progress        INTEGER NOT NULL DEFAULT 0 CHECK (progress >= 0),
  unlocked_at     TIMESTAMPTZ,
  updated_at      TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (wallet, achievement_id)
);

-- The catalog is data the API serves; created_at is fixed so every tenant's catalog is identical.
INSERT INTO achievements (code, name, description, category, icon_url, metric, threshold, created_at) VALUES
  ('first_trade',     'First Trade',      'Complete your first trade.',                  'trading',     NULL, 'trades',          1,   '2026-01-01T00:00:00Z'),
  ('active_trader',   'Active Trader',    'Complete 100 trades.',                        'trading',     NULL, 'trades',          100, '2026-01-01T00:00:00Z'),
  ('whale',           'Whale',            'Trade a volume of 1,000,000,000 base units.', 'trading',     NULL, 'volume_millions', 1000,'2026-01-01T00:00:00Z'),
  ('hot_streak',      'Hot Streak',       'Win 3 settled trades in a row.',              'streak',      NULL, 'win_streak',      3,   '2026-01-01T00:00:00Z'),
  ('on_fire',         'On Fire',          'Win 10 settled trades in a row.',             'streak',      NULL, 'win_streak',      10,  '2026-01-01T00:00:00Z'),
  ('sharpshooter',    'Sharpshooter',     'Win 25 settled trades.',                      'accuracy',    NULL, 'wins',            25,  '2026-01-01T00:00:00Z'),
  ('oracle',          'Oracle',           'Win 100 settled trades.',                     'accuracy',    NULL, 'wins',            100, '2026-01-01T00:00:00Z'),
  ('explorer',        'Explorer',         'Trade in 10 different markets.',              'exploration', NULL, 'markets_traded',  10,  '2026-01-01T00:00:00Z'),
  ('globetrotter',    'Globetrotter',     'Trade in 100 different markets.',             'exploration', NULL, 'markets_traded',  100, '2026-01-01T00:00:00Z');

-- Down Migration
DROP TABLE user_achievements, achievements, daily_pnl, settled_trades, user_stats,
  trader_activity, creator_fee_claims, creator_fee_accruals, referrer_claims,
  referrer_credits, referrer_earnings, referral_locks, tick_size_history,
  fee_config_history, positions, trades, orderbook_levels, orders, markets;
DROP DOMAIN bps, signed_amount, amount, u64;
