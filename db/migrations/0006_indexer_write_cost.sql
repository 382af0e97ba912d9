-- Up Migration
-- What each batch commit pays PostgreSQL for per row, cut where nothing depends on it
-- (measured in `npm run bench -- indexer`; decisions D-120…D-122).

-- D-120: foreign keys. Every checked child row ran a `SELECT … FOR KEY SHARE` on markets (or
-- achievements) at the end of the statement: about 17 % of the commit's time. The projector is
-- the tables' only writer; it creates a market before any row that names it, dead-letters an
-- event whose market it does not know, and never deletes a market or an achievement.
ALTER TABLE orders DROP CONSTRAINT orders_market_address_fkey;
ALTER TABLE orderbook_levels DROP CONSTRAINT orderbook_levels_market_address_fkey;
ALTER TABLE trades DROP CONSTRAINT trades_market_address_fkey;
ALTER TABLE positions DROP CONSTRAINT positions_market_address_fkey;
ALTER TABLE creator_fee_accruals DROP CONSTRAINT creator_fee_accruals_market_address_fkey;
ALTER TABLE creator_fee_claims DROP CONSTRAINT creator_fee_claims_market_address_fkey;
ALTER TABLE settled_trades DROP CONSTRAINT settled_trades_market_address_fkey;
ALTER TABLE user_achievements DROP CONSTRAINT user_achievements_achievement_id_fkey;

-- D-121: indexes no query reads (none of server/ or indexer/ filters or orders by these
-- columns): each was one more B-tree insert per row, on the tables written once per trade.
-- The (tx_signature, event_index) keys of event-derived rows duplicate the ledger's key
-- (raw_events), which is what keeps them unique; trades keeps its own: /trades?tx= reads it.
-- trades keeps its maker and taker indexes: the appendix variant's /trades/user/:owner reads them.
DROP INDEX creator_fee_accruals_market_idx;
DROP INDEX referrer_credits_referrer_idx;
DROP INDEX referrer_claims_wallet_idx;
ALTER TABLE creator_fee_accruals DROP CONSTRAINT creator_fee_accruals_tx_signature_event_index_key;
ALTER TABLE referrer_credits DROP CONSTRAINT referrer_credits_tx_signature_event_index_key;
ALTER TABLE referrer_claims DROP CONSTRAINT referrer_claims_tx_signature_event_index_key;

-- D-122: the ledger's keys compare bytewise. Signatures are base58 (ASCII), only ever matched
-- for equality, and no query orders by them; under the database's collation every comparison
-- of a B-tree insert copied both strings and called strcoll.
ALTER TABLE raw_events ALTER COLUMN signature TYPE TEXT COLLATE "C";
ALTER TABLE processed_transactions ALTER COLUMN signature TYPE TEXT COLLATE "C";

-- Down Migration
ALTER TABLE processed_transactions ALTER COLUMN signature TYPE TEXT COLLATE "default";
ALTER TABLE raw_events ALTER COLUMN signature TYPE TEXT COLLATE "default";
ALTER TABLE referrer_claims ADD UNIQUE (tx_signature, event_index);
ALTER TABLE referrer_credits ADD UNIQUE (tx_signature, event_index);
ALTER TABLE creator_fee_accruals ADD UNIQUE (tx_signature, event_index);
CREATE INDEX referrer_claims_wallet_idx ON referrer_claims (wallet, id DESC);
CREATE INDEX referrer_credits_referrer_idx ON referrer_credits (referrer, referee);
CREATE INDEX creator_fee_accruals_market_idx ON creator_fee_accruals (market_address);
ALTER TABLE user_achievements ADD FOREIGN KEY (achievement_id) REFERENCES achievements (id);
ALTER TABLE settled_trades ADD FOREIGN KEY (market_address) REFERENCES markets (address);
ALTER TABLE creator_fee_claims ADD FOREIGN KEY (market_address) REFERENCES markets (address);
ALTER TABLE creator_fee_accruals ADD FOREIGN KEY (market_address) REFERENCES markets (address);
ALTER TABLE positions ADD FOREIGN KEY (market_address) REFERENCES markets (address);
ALTER TABLE trades ADD FOREIGN KEY (market_address) REFERENCES markets (address);
ALTER TABLE orderbook_levels ADD FOREIGN KEY (market_address) REFERENCES markets (address);
ALTER TABLE orders ADD FOREIGN KEY (market_address) REFERENCES markets (address);
