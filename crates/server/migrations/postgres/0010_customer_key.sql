-- The key that signs customers' cookies when no key file is given: made once
-- by the first server that needs it, from the operating system's randomness,
-- and shared by every server on this database so a customer stays who they
-- are across restarts and servers. A key file (--customer-key-file) replaces it.
CREATE TABLE signing_keys (
    name TEXT PRIMARY KEY,
    key_hex TEXT NOT NULL
);
