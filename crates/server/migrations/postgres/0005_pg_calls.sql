-- Every call to the PG about an order (see migrations/sqlite/0007_pg_calls.sql).

CREATE TABLE pg_calls (
    id              BIGSERIAL PRIMARY KEY,
    order_id        TEXT   NOT NULL,
    kind            TEXT   NOT NULL CHECK (kind IN ('confirm', 'lookup', 'cancel')),
    caller          TEXT   NOT NULL CHECK (caller IN ('customer', 'recovery', 'operator', 'reconcile')),
    idempotency_key TEXT,
    server          TEXT   NOT NULL,
    started_at_ms   BIGINT NOT NULL,
    took_ms         BIGINT NOT NULL,
    answer          TEXT   NOT NULL
);
CREATE INDEX pg_calls_by_order ON pg_calls (order_id, id);
