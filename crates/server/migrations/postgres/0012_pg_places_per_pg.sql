-- Each PG has its own contract, so each has its own places under its own cap
-- and its own learned limit: KakaoPay's calls no longer go out under a limit
-- each server keeps in memory (three servers sent KakaoPay three times its
-- cap), and they never take a place Toss's calls need, nor Toss's theirs.
-- Every place and the one learned limit so far were Toss's.
--
-- Servers of the old schema claim places by number alone and could take
-- KakaoPay's: a cluster is upgraded by stopping its servers, then starting
-- the new ones.

ALTER TABLE pg_slots ADD COLUMN pg TEXT NOT NULL DEFAULT 'toss' CHECK (pg IN ('toss', 'kakaopay'));
ALTER TABLE pg_slots ALTER COLUMN pg DROP DEFAULT;
ALTER TABLE pg_slots DROP CONSTRAINT pg_slots_pkey;
ALTER TABLE pg_slots ADD PRIMARY KEY (pg, slot);
-- As many of KakaoPay's as a learned limit can reach; start-up adds the rest
-- for a contract's higher fixed number, as it does for Toss's.
INSERT INTO pg_slots (pg, slot) SELECT 'kakaopay', generate_series(1, 1000);
-- pg_slots_by_holder (holder) still finds a server's places when it renews them.

-- One learned limit per PG, keyed by the PG (the single row's id goes with
-- its CHECK). KakaoPay's starts where Toss's did, at 40.
ALTER TABLE pg_limit ADD COLUMN pg TEXT NOT NULL DEFAULT 'toss' CHECK (pg IN ('toss', 'kakaopay'));
ALTER TABLE pg_limit ALTER COLUMN pg DROP DEFAULT;
ALTER TABLE pg_limit DROP COLUMN id;
ALTER TABLE pg_limit ADD PRIMARY KEY (pg);
INSERT INTO pg_limit (pg, cap, slow_start, last_decrease_ms, last_increase_ms, version)
    VALUES ('kakaopay', 40, 1, NULL, 0, 0);
