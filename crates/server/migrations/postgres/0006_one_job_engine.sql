-- One job engine settles payments whose outcome is unknown, refunds being sent,
-- and refunds of charges no order made: the same lease and schedule columns,
-- by the same names, in each of their tables.
ALTER TABLE payment_attempts RENAME COLUMN next_recovery_at_ms TO next_attempt_at_ms;
ALTER TABLE orphan_refunds ADD COLUMN recovery_passes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orphan_refunds ADD COLUMN next_attempt_at_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orphan_refunds ADD COLUMN lease_until_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orphan_refunds ADD COLUMN lease_owner TEXT;
CREATE INDEX orphan_refunds_due ON orphan_refunds (next_attempt_at_ms) WHERE status = 'REQUESTED';
