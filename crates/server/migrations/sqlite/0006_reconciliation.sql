-- Reconciliation: the PG's transactions compared with the orders.
--
-- Jobs that one server of a cluster runs at a time hold a lease here, as
-- recovery holds an attempt's: taken by one conditional UPDATE, lapsing by itself.
CREATE TABLE job_leases (
    job             TEXT    PRIMARY KEY,
    lease_owner     TEXT,
    lease_until_ms  INTEGER NOT NULL DEFAULT 0,
    last_started_ms INTEGER NOT NULL DEFAULT 0 -- when the last pass began, so a cluster runs one per interval
);
INSERT INTO job_leases (job) VALUES ('reconcile');

-- Every reconciliation pass and what it found (the report, as JSON).
CREATE TABLE reconcile_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at_ms  INTEGER NOT NULL,
    finished_at_ms INTEGER NOT NULL,
    runner         TEXT    NOT NULL, -- the server that ran it
    started_by     TEXT    NOT NULL CHECK (started_by IN ('schedule', 'operator')),
    mismatches     INTEGER NOT NULL,
    report         TEXT    NOT NULL
);

-- Refunds of charges no order of the shop made (a charge with no order, or a
-- second charge of an order). They have no order to hang on, so they are kept
-- by payment: one per charge, sent under a key derived from the paymentKey, so
-- every send of it is the same request to the PG.
CREATE TABLE orphan_refunds (
    payment_key        TEXT    PRIMARY KEY,
    order_id           TEXT    NOT NULL, -- the PG's orderId, which the shop may not know
    amount             INTEGER NOT NULL CHECK (amount > 0),
    pg_idempotency_key TEXT    NOT NULL UNIQUE,
    reason             TEXT    NOT NULL,
    status             TEXT    NOT NULL CHECK (status IN ('REQUESTED', 'DONE', 'FAILED')),
    failure_code       TEXT,
    last_pg_answer     TEXT,
    calls              INTEGER NOT NULL DEFAULT 0,
    created_at_ms      INTEGER NOT NULL,
    updated_at_ms      INTEGER NOT NULL
);
