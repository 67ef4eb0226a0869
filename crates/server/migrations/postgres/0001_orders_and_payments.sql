-- The PostgreSQL schema, the same tables as SQLite's after its migrations
-- (see migrations/sqlite for why each column is there), in PostgreSQL's types.

-- Orders are immutable once created: what was bought and for how much.
CREATE TABLE orders (
    order_id      TEXT   PRIMARY KEY,
    customer_id   TEXT   NOT NULL,
    amount        BIGINT NOT NULL CHECK (amount > 0),
    order_name    TEXT   NOT NULL,
    items         TEXT   NOT NULL, -- JSON array of line items, priced at creation
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX orders_by_customer ON orders (customer_id, created_at_ms DESC);

-- At most one payment attempt per order; it carries the order's payment status.
CREATE TABLE payment_attempts (
    order_id            TEXT   PRIMARY KEY REFERENCES orders (order_id),
    idempotency_key     TEXT   UNIQUE,
    payment_key         TEXT,
    amount              BIGINT NOT NULL,
    status              TEXT   NOT NULL CHECK (status IN
                            ('PENDING', 'PAID', 'FAILED', 'UNKNOWN', 'CANCELED', 'PARTIALLY_REFUNDED')),
    failure_code        TEXT,
    failure_message     TEXT,
    unknown_reason      TEXT,
    last_pg_answer      TEXT,
    recovery_passes     BIGINT NOT NULL DEFAULT 0,
    next_recovery_at_ms BIGINT NOT NULL DEFAULT 0,
    lease_until_ms      BIGINT NOT NULL DEFAULT 0,
    lease_owner         TEXT,
    created_at_ms       BIGINT NOT NULL,
    updated_at_ms       BIGINT NOT NULL,
    CHECK ((idempotency_key IS NULL) = (payment_key IS NULL))
);
CREATE INDEX payment_attempts_due ON payment_attempts (next_recovery_at_ms)
    WHERE status IN ('PENDING', 'UNKNOWN');
CREATE INDEX payment_attempts_by_created ON payment_attempts (created_at_ms);

-- Every status change of an attempt, written in the same transaction as the change.
CREATE TABLE payment_events (
    id          BIGSERIAL PRIMARY KEY,
    order_id    TEXT   NOT NULL REFERENCES orders (order_id),
    at_ms       BIGINT NOT NULL,
    actor       TEXT   NOT NULL,
    from_status TEXT   NOT NULL,
    to_status   TEXT   NOT NULL,
    code        TEXT,
    detail      TEXT
);
CREATE INDEX payment_events_by_order ON payment_events (order_id, id);
