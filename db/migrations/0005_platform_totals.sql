-- Up Migration
-- The platform-wide totals of /stats/platform, maintained by the projector in the batch
-- transaction (like market_counts), so that the endpoint reads one row instead of summing
-- the markets, trades and trader tables on every request.
CREATE TABLE platform_totals (
  id               SMALLINT PRIMARY KEY CHECK (id = 1),
  total_volume     amount NOT NULL,
  total_trades     BIGINT NOT NULL CHECK (total_trades >= 0),
  total_positions  BIGINT NOT NULL CHECK (total_positions >= 0),
  unique_traders   BIGINT NOT NULL CHECK (unique_traders >= 0),
  protocol_fees    amount NOT NULL,
  creator_fees     amount NOT NULL
);
INSERT INTO platform_totals
SELECT 1,
       (SELECT COALESCE(sum(total_volume), 0) FROM markets),
       (SELECT COALESCE(sum(total_trades), 0) FROM markets),
       (SELECT COALESCE(sum(total_positions), 0) FROM markets),
       (SELECT count(*) FROM trader_activity),
       (SELECT COALESCE(sum(fee_protocol), 0) FROM trades),
       (SELECT COALESCE(sum(creator_fees_earned), 0) FROM markets);

-- Down Migration
DROP TABLE platform_totals;
