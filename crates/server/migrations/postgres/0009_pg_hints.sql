-- A webhook's hint that a job's payment or refund may have settled at the PG.
-- It makes the job due at once; if a call holds the job then (a confirm still
-- waiting for its answer, a recovery pass), the hint is kept here so that the
-- call's release leaves the job due instead of postponing it by its backoff.
-- A pass that takes the job clears it: its lookup is the hint's answer. Every job
-- table has it, since every pass takes its job the same way.
ALTER TABLE payment_attempts ADD COLUMN pg_hinted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN pg_hinted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orphan_refunds ADD COLUMN pg_hinted INTEGER NOT NULL DEFAULT 0;
