-- Refunds: a paid order can be cancelled (by its customer, within the cancel
-- window) or refunded in full or in part (by an operator).
--
-- payment_attempts is rebuilt (SQLite cannot alter a CHECK constraint) for:
-- * CANCEL_REQUESTED: a refund is stored and being sent; the PG's answer moves
--   the order to CANCELED or PARTIALLY_REFUNDED, or back where it was.
-- * refunded_amount: what the PG has refunded of the payment so far.
CREATE TABLE payment_attempts_v5 (
    order_id            TEXT    PRIMARY KEY REFERENCES orders (order_id),
    idempotency_key     TEXT    UNIQUE,
    payment_key         TEXT,
    amount              INTEGER NOT NULL,
    status              TEXT    NOT NULL CHECK (status IN ('PENDING', 'PAID', 'FAILED', 'UNKNOWN', 'CANCELED',
                            'PARTIALLY_REFUNDED', 'CANCEL_REQUESTED')),
    failure_code        TEXT,
    failure_message     TEXT,
    unknown_reason      TEXT,
    last_pg_answer      TEXT,
    recovery_passes     INTEGER NOT NULL DEFAULT 0,
    next_recovery_at_ms INTEGER NOT NULL DEFAULT 0,
    lease_until_ms      INTEGER NOT NULL DEFAULT 0,
    lease_owner         TEXT,
    refunded_amount     INTEGER NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= amount),
    created_at_ms       INTEGER NOT NULL,
    updated_at_ms       INTEGER NOT NULL,
    CHECK ((idempotency_key IS NULL) = (payment_key IS NULL))
);
INSERT INTO payment_attempts_v5 (order_id, idempotency_key, payment_key, amount, status, failure_code,
    failure_message, unknown_reason, last_pg_answer, recovery_passes, next_recovery_at_ms, lease_until_ms,
    lease_owner, refunded_amount, created_at_ms, updated_at_ms)
SELECT order_id, idempotency_key, payment_key, amount, status, failure_code, failure_message, unknown_reason,
    last_pg_answer, recovery_passes, next_recovery_at_ms, lease_until_ms, lease_owner,
    CASE WHEN status = 'CANCELED' THEN amount ELSE 0 END, created_at_ms, updated_at_ms
FROM payment_attempts;
DROP TABLE payment_attempts;
ALTER TABLE payment_attempts_v5 RENAME TO payment_attempts;
CREATE INDEX payment_attempts_due ON payment_attempts (next_recovery_at_ms)
    WHERE status IN ('PENDING', 'UNKNOWN');
CREATE INDEX payment_attempts_by_created ON payment_attempts (created_at_ms);

-- One row per refund asked for, written (with the order's move to
-- CANCEL_REQUESTED) before the PG is called. A refund must eventually go out:
-- while its outcome is unknown, recovery looks the payment up and resends it
-- under pg_idempotency_key, which the server made, until the PG answers.
CREATE TABLE refunds (
    refund_id          TEXT    PRIMARY KEY,
    order_id           TEXT    NOT NULL REFERENCES orders (order_id),
    request_key        TEXT    NOT NULL, -- the caller's Idempotency-Key: a double click is one refund
    pg_idempotency_key TEXT    NOT NULL UNIQUE,
    amount             INTEGER NOT NULL CHECK (amount > 0),
    balance_before     INTEGER NOT NULL CHECK (balance_before >= amount), -- what was left before it
    full_cancel        INTEGER NOT NULL CHECK (full_cancel IN (0, 1)), -- sent without cancelAmount
    reason             TEXT    NOT NULL,
    requested_by       TEXT    NOT NULL CHECK (requested_by IN ('customer', 'operator')),
    previous_status    TEXT    NOT NULL CHECK (previous_status IN ('PAID', 'PARTIALLY_REFUNDED')),
    status             TEXT    NOT NULL CHECK (status IN ('REQUESTED', 'DONE', 'FAILED')),
    failure_code       TEXT,             -- the PG's code when it refused
    last_pg_answer     TEXT,
    calls              INTEGER NOT NULL DEFAULT 0, -- cancel requests sent to the PG
    recovery_passes    INTEGER NOT NULL DEFAULT 0, -- passes in which the PG answered without settling it
    next_attempt_at_ms INTEGER NOT NULL DEFAULT 0,
    lease_until_ms     INTEGER NOT NULL DEFAULT 0,
    lease_owner        TEXT,
    created_at_ms      INTEGER NOT NULL,
    updated_at_ms      INTEGER NOT NULL,
    UNIQUE (order_id, request_key)
);
CREATE INDEX refunds_due ON refunds (next_attempt_at_ms) WHERE status = 'REQUESTED';
-- At most one refund of an order is being sent at a time.
CREATE UNIQUE INDEX refunds_one_requested ON refunds (order_id) WHERE status = 'REQUESTED';

-- Every action an operator took through the operators' API.
CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms    INTEGER NOT NULL,
    operator TEXT    NOT NULL, -- X-Operator, or "operator"
    action   TEXT    NOT NULL,
    order_id TEXT,
    detail   TEXT
);
CREATE INDEX audit_log_by_order ON audit_log (order_id, id);
