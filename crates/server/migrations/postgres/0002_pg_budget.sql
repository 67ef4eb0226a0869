-- The PG's concurrency budget, shared by every order server of the cluster
-- (see migrations/sqlite/0004_pg_budget.sql for how it works).

CREATE TABLE pg_slots (
    slot          BIGINT PRIMARY KEY,
    holder        TEXT,
    call_id       TEXT,
    taken_at_ms   BIGINT NOT NULL DEFAULT 0,
    held_until_ms BIGINT NOT NULL DEFAULT 0
);
INSERT INTO pg_slots (slot) SELECT generate_series(1, 1000);
CREATE INDEX pg_slots_by_holder ON pg_slots (holder);

CREATE TABLE pg_limit (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    cap              BIGINT NOT NULL,
    slow_start       BIGINT NOT NULL,
    last_decrease_ms BIGINT,
    last_increase_ms BIGINT NOT NULL,
    version          BIGINT NOT NULL
);
INSERT INTO pg_limit (id, cap, slow_start, last_decrease_ms, last_increase_ms, version) VALUES (1, 8, 1, NULL, 0, 0);
