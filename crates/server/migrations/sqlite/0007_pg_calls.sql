-- Every call to the PG about an order, for operators: what was sent, by whom,
-- from which server, how long it took and what came back. A row is written
-- after its call has returned, never during it. Kept bounded: the insert
-- deletes all but the newest 200 calls of the order (see `db::pg_calls`).
-- No foreign key: a reconciliation refund is about the PG's orderId, which
-- the shop may not know.
CREATE TABLE pg_calls (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id        TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('confirm', 'lookup', 'cancel')),
    caller          TEXT    NOT NULL CHECK (caller IN ('customer', 'recovery', 'operator', 'reconcile')),
    idempotency_key TEXT,             -- the Idempotency-Key sent; lookups send none
    server          TEXT    NOT NULL, -- the worker id of the server that made it
    started_at_ms   INTEGER NOT NULL,
    took_ms         INTEGER NOT NULL,
    answer          TEXT    NOT NULL  -- as logs describe it: HTTP status and code, or no answer / not sent
);
CREATE INDEX pg_calls_by_order ON pg_calls (order_id, id);
