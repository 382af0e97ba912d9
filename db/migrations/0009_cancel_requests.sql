-- Up Migration
-- Cancels built by POST /tx/cancel-order (D-8, D-143). The API writes only here, never into
-- the indexer's tables (its row cache assumes it is their only writer, D-62): an open order
-- with a request reads as pending_cancel until the indexer has processed `valid_until_slot`
-- (the blockhash's slot + 150) without the cancel event, then as cancel_failed. The cancel
-- event itself makes the order cancelled in `orders`, which wins.
CREATE TABLE cancel_requests (
  market_address    TEXT NOT NULL,
  order_id          u64 NOT NULL,
  owner             TEXT NOT NULL,
  valid_until_slot  BIGINT NOT NULL CHECK (valid_until_slot >= 0),
  requested_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (market_address, order_id)
);

-- Down Migration
DROP TABLE cancel_requests;
