-- Orders are immutable once created: what was bought and for how much.
CREATE TABLE orders (
    order_id      TEXT    PRIMARY KEY,
    customer_id   TEXT    NOT NULL,
    amount        INTEGER NOT NULL CHECK (amount > 0),
    order_name    TEXT    NOT NULL,
    items         TEXT    NOT NULL, -- JSON array of line items, priced at creation
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX orders_by_customer ON orders (customer_id, created_at_ms DESC);

-- At most one payment attempt per order; it carries the order's payment status.
-- The row is committed before the PG is called, and every transition is
-- committed before it is reported.
CREATE TABLE payment_attempts (
    order_id        TEXT    PRIMARY KEY REFERENCES orders (order_id),
    idempotency_key TEXT    NOT NULL UNIQUE,
    payment_key     TEXT    NOT NULL,
    amount          INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('PENDING', 'PAID', 'FAILED', 'UNKNOWN')),
    failure_code    TEXT,
    failure_message TEXT,
    unknown_reason  TEXT,   -- why the outcome is unknown, for operators
    recovery_passes INTEGER NOT NULL DEFAULT 0,
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL
);
CREATE INDEX payment_attempts_unsettled ON payment_attempts (status, updated_at_ms)
    WHERE status IN ('PENDING', 'UNKNOWN');
