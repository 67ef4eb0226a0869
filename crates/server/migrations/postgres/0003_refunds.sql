-- Refunds (see migrations/sqlite/0005_refunds.sql for why each column is there).

ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_status_check;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_status_check CHECK (status IN
    ('PENDING', 'PAID', 'FAILED', 'UNKNOWN', 'CANCELED', 'PARTIALLY_REFUNDED', 'CANCEL_REQUESTED'));
ALTER TABLE payment_attempts ADD COLUMN refunded_amount BIGINT NOT NULL DEFAULT 0;
UPDATE payment_attempts SET refunded_amount = amount WHERE status = 'CANCELED';
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_refunded_check
    CHECK (refunded_amount >= 0 AND refunded_amount <= amount);

CREATE TABLE refunds (
    refund_id          TEXT    PRIMARY KEY,
    order_id           TEXT    NOT NULL REFERENCES orders (order_id),
    request_key        TEXT    NOT NULL,
    pg_idempotency_key TEXT    NOT NULL UNIQUE,
    amount             BIGINT  NOT NULL CHECK (amount > 0),
    balance_before     BIGINT  NOT NULL CHECK (balance_before >= amount),
    full_cancel        BIGINT  NOT NULL CHECK (full_cancel IN (0, 1)),
    reason             TEXT    NOT NULL,
    requested_by       TEXT    NOT NULL CHECK (requested_by IN ('customer', 'operator')),
    previous_status    TEXT    NOT NULL CHECK (previous_status IN ('PAID', 'PARTIALLY_REFUNDED')),
    status             TEXT    NOT NULL CHECK (status IN ('REQUESTED', 'DONE', 'FAILED')),
    failure_code       TEXT,
    last_pg_answer     TEXT,
    calls              BIGINT  NOT NULL DEFAULT 0,
    recovery_passes    BIGINT  NOT NULL DEFAULT 0,
    next_attempt_at_ms BIGINT  NOT NULL DEFAULT 0,
    lease_until_ms     BIGINT  NOT NULL DEFAULT 0,
    lease_owner        TEXT,
    created_at_ms      BIGINT  NOT NULL,
    updated_at_ms      BIGINT  NOT NULL,
    UNIQUE (order_id, request_key)
);
CREATE INDEX refunds_due ON refunds (next_attempt_at_ms) WHERE status = 'REQUESTED';
CREATE UNIQUE INDEX refunds_one_requested ON refunds (order_id) WHERE status = 'REQUESTED';

CREATE TABLE audit_log (
    id       BIGSERIAL PRIMARY KEY,
    at_ms    BIGINT NOT NULL,
    operator TEXT   NOT NULL,
    action   TEXT   NOT NULL,
    order_id TEXT,
    detail   TEXT
);
CREATE INDEX audit_log_by_order ON audit_log (order_id, id);
