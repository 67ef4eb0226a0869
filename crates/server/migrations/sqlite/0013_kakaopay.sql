-- A second PG, KakaoPay, beside Toss. The PG is the attempt's: the customer
-- chooses it in the window they pay in, and everything after (the approve,
-- recovery's lookups, refunds) goes to that PG. Attempts made before this
-- migration are Toss's.
ALTER TABLE payment_attempts ADD COLUMN pg TEXT NOT NULL DEFAULT 'toss' CHECK (pg IN ('toss', 'kakaopay'));

-- A KakaoPay payment prepared for an order (`ready`), before the customer's
-- window: its tid, approved later under the window's pg_token, and where the
-- window is. One per order while it lasts; a ready after it expired replaces it.
-- A ready whose answer was lost leaves nothing here: its tid expires at KakaoPay
-- unapproved, and a new ready is made.
CREATE TABLE kakaopay_ready (
    order_id    TEXT   PRIMARY KEY REFERENCES orders (order_id),
    tid         TEXT   NOT NULL,
    pc_url      TEXT   NOT NULL,
    mobile_url  TEXT   NOT NULL,
    ready_at_ms INTEGER NOT NULL
);
