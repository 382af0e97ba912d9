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

-- Jurisdiction attestations (D-145): a wallet's signed statement, stored with its signature so
-- it can be shown to a regulator as the wallet signed it; an admin revokes, never deletes.
CREATE TABLE attestations (
  id          BIGSERIAL PRIMARY KEY,
  wallet      TEXT NOT NULL,
  country     TEXT NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  statement   TEXT NOT NULL,
  signature   TEXT NOT NULL,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  revoked_at  TIMESTAMPTZ,
  revoked_by  TEXT
);
CREATE INDEX attestations_wallet_idx ON attestations (wallet, country) WHERE revoked_at IS NULL;

-- Every /admin/* call (D-146): who, what, when, outcome.
CREATE TABLE admin_audit (
  id       BIGSERIAL PRIMARY KEY,
  at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  wallet   TEXT,
  action   TEXT NOT NULL,
  status   INTEGER NOT NULL,
  outcome  TEXT NOT NULL
);
CREATE INDEX admin_audit_at_idx ON admin_audit (id DESC);

-- Down Migration
DROP TABLE admin_audit;
DROP TABLE attestations;
DROP TABLE cancel_requests;
