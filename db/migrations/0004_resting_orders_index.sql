-- Up Migration
-- /stats/platform counts resting orders: open, pending_cancel and cancel_failed. The partial
-- index left cancel_failed out, so that count could not use it and read the whole table.
DROP INDEX orders_resting_idx;
CREATE INDEX orders_resting_idx ON orders (market_address) WHERE status_code IN (0, 4, 5);

-- Down Migration
DROP INDEX orders_resting_idx;
CREATE INDEX orders_resting_idx ON orders (market_address) WHERE status_code IN (0, 4);
