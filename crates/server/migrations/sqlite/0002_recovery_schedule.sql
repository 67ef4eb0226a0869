-- Each unsettled attempt has its own next recovery time, backing off pass after
-- pass, so attempts the PG cannot settle yet do not crowd out the others.
ALTER TABLE payment_attempts ADD COLUMN next_recovery_at_ms INTEGER NOT NULL DEFAULT 0;
DROP INDEX payment_attempts_unsettled;
CREATE INDEX payment_attempts_due ON payment_attempts (next_recovery_at_ms)
    WHERE status IN ('PENDING', 'UNKNOWN');
