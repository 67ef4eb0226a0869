-- A learned PG limit starts where the fixed cap's default was, 40 (the
-- learning rules' INITIAL, and the README), so a shop that learns never turns
-- away more in its first seconds than one with a fixed cap of 40. The first
-- migration seeded 8. A limit already learned (version above 0) stays as it is.
UPDATE pg_limit SET cap = 40 WHERE id = 1 AND version = 0;
