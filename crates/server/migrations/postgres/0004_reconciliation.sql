-- Reconciliation (see migrations/sqlite/0006_reconciliation.sql for why each column is there).

CREATE TABLE job_leases (
    job             TEXT   PRIMARY KEY,
    lease_owner     TEXT,
    lease_until_ms  BIGINT NOT NULL DEFAULT 0,
    last_started_ms BIGINT NOT NULL DEFAULT 0
);
INSERT INTO job_leases (job) VALUES ('reconcile');

CREATE TABLE reconcile_runs (
    id             BIGSERIAL PRIMARY KEY,
    started_at_ms  BIGINT NOT NULL,
    finished_at_ms BIGINT NOT NULL,
    runner         TEXT   NOT NULL,
    started_by     TEXT   NOT NULL CHECK (started_by IN ('schedule', 'operator')),
    mismatches     BIGINT NOT NULL,
    report         TEXT   NOT NULL
);

CREATE TABLE orphan_refunds (
    payment_key        TEXT   PRIMARY KEY,
    order_id           TEXT   NOT NULL,
    amount             BIGINT NOT NULL CHECK (amount > 0),
    pg_idempotency_key TEXT   NOT NULL UNIQUE,
    reason             TEXT   NOT NULL,
    status             TEXT   NOT NULL CHECK (status IN ('REQUESTED', 'DONE', 'FAILED')),
    failure_code       TEXT,
    last_pg_answer     TEXT,
    calls              BIGINT NOT NULL DEFAULT 0,
    created_at_ms      BIGINT NOT NULL,
    updated_at_ms      BIGINT NOT NULL
);
