-- The key a confirm is sent to the PG under, made by the server for each
-- attempt. Toss scopes a key by merchant account, URL and method: every confirm
-- of the account shares one namespace, which the browser's key (the key of this
-- shop's own API, `idempotency_key`) must not enter. Attempts sent before this
-- went out under the browser's key, and a resend of one must reuse it.
ALTER TABLE payment_attempts ADD COLUMN pg_idempotency_key TEXT;
UPDATE payment_attempts SET pg_idempotency_key = idempotency_key WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX payment_attempts_pg_idempotency_key ON payment_attempts (pg_idempotency_key);
