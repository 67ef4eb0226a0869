-- Each PG has its own contract, so each has its own places under its own cap
-- and its own learned limit (see migrations/postgres/0012_pg_places_per_pg.sql;
-- one server on SQLite keeps its limits in memory, but the schema is the same).
-- Every place and the one learned limit so far were Toss's.
--
-- Both tables are rebuilt: SQLite cannot change a primary key.
CREATE TABLE pg_slots_v14 (
    pg            TEXT    NOT NULL CHECK (pg IN ('toss', 'kakaopay')),
    slot          INTEGER NOT NULL,
    holder        TEXT,               -- the server holding it
    call_id       TEXT,               -- the call it allows; a release frees only its own
    taken_at_ms   INTEGER NOT NULL DEFAULT 0,
    held_until_ms INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pg, slot)
);
INSERT INTO pg_slots_v14 (pg, slot, holder, call_id, taken_at_ms, held_until_ms)
SELECT 'toss', slot, holder, call_id, taken_at_ms, held_until_ms FROM pg_slots;
DROP TABLE pg_slots;
ALTER TABLE pg_slots_v14 RENAME TO pg_slots;
-- As many of KakaoPay's as a learned limit can reach; start-up adds the rest
-- for a contract's higher fixed number, as it does for Toss's.
WITH RECURSIVE numbers (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM numbers WHERE n < 1000)
INSERT INTO pg_slots (pg, slot) SELECT 'kakaopay', n FROM numbers;
-- A server renewing its places finds them by holder, as on PostgreSQL.
CREATE INDEX pg_slots_by_holder ON pg_slots (holder);

-- One learned limit per PG, keyed by the PG. KakaoPay's starts where Toss's did, at 40.
CREATE TABLE pg_limit_v14 (
    pg               TEXT    NOT NULL PRIMARY KEY CHECK (pg IN ('toss', 'kakaopay')),
    cap              INTEGER NOT NULL,
    slow_start       INTEGER NOT NULL,  -- 1 until the first sign of overload
    last_decrease_ms INTEGER,
    last_increase_ms INTEGER NOT NULL,
    version          INTEGER NOT NULL
);
INSERT INTO pg_limit_v14 (pg, cap, slow_start, last_decrease_ms, last_increase_ms, version)
SELECT 'toss', cap, slow_start, last_decrease_ms, last_increase_ms, version FROM pg_limit;
DROP TABLE pg_limit;
ALTER TABLE pg_limit_v14 RENAME TO pg_limit;
INSERT INTO pg_limit (pg, cap, slow_start, last_decrease_ms, last_increase_ms, version)
    VALUES ('kakaopay', 40, 1, NULL, 0, 0);
