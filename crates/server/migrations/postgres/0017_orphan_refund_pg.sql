-- The PG whose ledger listed the charge an orphan refund gives back: the
-- refund is sent to, and looked up at, that PG. Every refund stored before
-- was Toss's, the one PG whose ledger reconciliation reads.
ALTER TABLE orphan_refunds ADD COLUMN pg TEXT NOT NULL DEFAULT 'toss';
