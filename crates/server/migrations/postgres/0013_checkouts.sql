-- Shops' checkouts: an order a shop's backend created through the shop API.
-- The order itself is an ordinary row of `orders` (paid, settled and refunded
-- as any order); this row is what the shop gave beside it. Until a browser
-- opens its link, the order's customer_id is no customer's ('checkout:' and
-- the order id); the first browser becomes its customer.
CREATE TABLE checkouts (
    order_id        TEXT    PRIMARY KEY REFERENCES orders (order_id),
    shop_id         TEXT    NOT NULL,
    reference       TEXT    NOT NULL,
    -- The shop's Idempotency-Key, and the digest of the body it came with:
    -- the same key with another body is refused.
    idempotency_key TEXT    NOT NULL,
    request_digest  TEXT    NOT NULL,
    request         TEXT    NOT NULL, -- the create request as given (JSON)
    shop_name       TEXT    NOT NULL, -- the shop's names when it was created (JSON), for the way back
    expires_at_ms   BIGINT NOT NULL,
    claimed_at_ms   BIGINT,
    created_at_ms   BIGINT NOT NULL,
    UNIQUE (shop_id, idempotency_key)
);
CREATE INDEX checkouts_by_reference ON checkouts (shop_id, reference, created_at_ms DESC);
CREATE INDEX checkouts_by_creation ON checkouts (shop_id, created_at_ms DESC, order_id DESC);
CREATE INDEX checkouts_by_expiry ON checkouts (expires_at_ms);
