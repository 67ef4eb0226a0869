-- The PG's concurrency budget, kept in the database so that every order server
-- sharing it shares one cap. A server of its own (SQLite) keeps the budget in
-- memory and leaves these tables empty; PostgreSQL's schema has the same ones.

-- One row per place under the cap (the ceiling of a learned limit is 1000). A
-- place is taken while held_until_ms is in the future; its holder renews that
-- while it lives, so a killed server's places come back by themselves.
CREATE TABLE pg_slots (
    slot          INTEGER PRIMARY KEY,
    holder        TEXT,               -- the server holding it
    call_id       TEXT,               -- the call it allows; a release frees only its own
    taken_at_ms   INTEGER NOT NULL DEFAULT 0,
    held_until_ms INTEGER NOT NULL DEFAULT 0
);
WITH RECURSIVE numbers (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM numbers WHERE n < 1000)
INSERT INTO pg_slots (slot) SELECT n FROM numbers;

-- The learned limit (--pg-max-concurrency auto), one row, changed with a
-- version check so that two servers learning at once do not overwrite each other.
CREATE TABLE pg_limit (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    cap              INTEGER NOT NULL,
    slow_start       INTEGER NOT NULL,  -- 1 until the first sign of overload
    last_decrease_ms INTEGER,
    last_increase_ms INTEGER NOT NULL,
    version          INTEGER NOT NULL
);
INSERT INTO pg_limit (id, cap, slow_start, last_decrease_ms, last_increase_ms, version) VALUES (1, 8, 1, NULL, 0, 0);
