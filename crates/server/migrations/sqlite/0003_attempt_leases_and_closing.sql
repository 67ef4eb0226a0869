-- Three changes to payment_attempts, so the table is rebuilt (SQLite cannot
-- alter a CHECK constraint):
-- * an order can be closed without a confirm: the page's window ended and the
--   server never received one. Such an attempt has no idempotency key and no
--   payment key, so both become nullable (together).
-- * charged-then-cancelled payments have statuses of their own.
-- * a lease: whoever acts on an unsettled attempt (the confirm task, or one
--   recovery worker) holds it until lease_until_ms, so no two act at once.
--   A PENDING attempt's lease is the confirm task's; once it lapses, the task
--   is gone and recovery takes over.
-- * last_pg_answer: what the PG said last, for operators.
CREATE TABLE payment_attempts_v3 (
    order_id            TEXT    PRIMARY KEY REFERENCES orders (order_id),
    idempotency_key     TEXT    UNIQUE,
    payment_key         TEXT,
    amount              INTEGER NOT NULL,
    status              TEXT    NOT NULL CHECK (status IN
                            ('PENDING', 'PAID', 'FAILED', 'UNKNOWN', 'CANCELED', 'PARTIALLY_REFUNDED')),
    failure_code        TEXT,
    failure_message     TEXT,
    unknown_reason      TEXT,
    last_pg_answer      TEXT,
    recovery_passes     INTEGER NOT NULL DEFAULT 0,
    next_recovery_at_ms INTEGER NOT NULL DEFAULT 0,
    lease_until_ms      INTEGER NOT NULL DEFAULT 0,
    lease_owner         TEXT,   -- the recovery worker holding the lease, if one does
    created_at_ms       INTEGER NOT NULL,
    updated_at_ms       INTEGER NOT NULL,
    CHECK ((idempotency_key IS NULL) = (payment_key IS NULL))
);
INSERT INTO payment_attempts_v3 (order_id, idempotency_key, payment_key, amount, status, failure_code,
    failure_message, unknown_reason, recovery_passes, next_recovery_at_ms, lease_until_ms, created_at_ms,
    updated_at_ms)
SELECT order_id, idempotency_key, payment_key, amount, status, failure_code, failure_message,
    unknown_reason, recovery_passes, next_recovery_at_ms, updated_at_ms, created_at_ms, updated_at_ms
FROM payment_attempts;
DROP TABLE payment_attempts;
ALTER TABLE payment_attempts_v3 RENAME TO payment_attempts;
CREATE INDEX payment_attempts_due ON payment_attempts (next_recovery_at_ms)
    WHERE status IN ('PENDING', 'UNKNOWN');
CREATE INDEX payment_attempts_by_created ON payment_attempts (created_at_ms);

-- Every status change of an attempt, written in the same transaction as the
-- change itself: an order's history for operators, and proof that a
-- transition was applied once.
CREATE TABLE payment_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id    TEXT    NOT NULL REFERENCES orders (order_id),
    at_ms       INTEGER NOT NULL,
    actor       TEXT    NOT NULL, -- confirm, recovery, abandon
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    code        TEXT,             -- the failure code, if any
    detail      TEXT              -- why the outcome is unknown, if it is
);
CREATE INDEX payment_events_by_order ON payment_events (order_id, id);
