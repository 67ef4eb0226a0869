-- What payonce tells shops: one row per event, inserted by the status writer
-- in the transaction of the change it reports (a change that did not commit
-- has none), and delivered to the shop's endpoint by the job engine, under
-- the same lease and schedule columns as its other jobs.
CREATE TABLE shop_events (
    -- The feed's order, which is commit order: an event's position is drawn
    -- under a transaction-level advisory lock held until its commit (see
    -- db/shop_events.rs), so no position is visible before a smaller one.
    position           BIGSERIAL PRIMARY KEY,
    event_id           TEXT    NOT NULL UNIQUE,
    shop_id            TEXT    NOT NULL,
    order_id           TEXT    NOT NULL REFERENCES orders (order_id),
    sequence           BIGINT  NOT NULL, -- 1, 2, ... per checkout
    type               TEXT    NOT NULL,
    body               TEXT    NOT NULL, -- the JSON sent and signed, the same bytes every time
    created_at_ms      BIGINT  NOT NULL,
    -- When its retry window started: its creation, or an operator's resend.
    retry_from_ms      BIGINT  NOT NULL,
    -- PENDING until the shop's endpoint answers 2xx (DELIVERED), or the retry
    -- window ends (FAILED); NO_ENDPOINT for a shop that takes the feed only.
    delivery           TEXT    NOT NULL DEFAULT 'PENDING'
                       CHECK (delivery IN ('PENDING', 'DELIVERED', 'FAILED', 'NO_ENDPOINT')),
    delivered_at_ms    BIGINT,
    -- The job engine's columns (see db/leases.rs): pg_hinted is never set
    -- for an event; recovery_passes counts its failed sends; last_pg_answer
    -- is the shop's last answer.
    next_attempt_at_ms BIGINT  NOT NULL DEFAULT 0,
    lease_until_ms     BIGINT  NOT NULL DEFAULT 0,
    lease_owner        TEXT,
    pg_hinted          BIGINT  NOT NULL DEFAULT 0,
    recovery_passes    BIGINT  NOT NULL DEFAULT 0,
    last_pg_answer     TEXT,
    UNIQUE (order_id, sequence)
);
-- Each shop's events due, in the order they go out.
CREATE INDEX shop_events_due ON shop_events (shop_id, delivery, next_attempt_at_ms);
CREATE INDEX shop_events_feed ON shop_events (shop_id, position);

-- Every send of an event, for operators.
CREATE TABLE shop_event_sends (
    id        BIGSERIAL PRIMARY KEY,
    event_id  TEXT    NOT NULL REFERENCES shop_events (event_id),
    at_ms     BIGINT  NOT NULL,
    took_ms   BIGINT  NOT NULL,
    -- The HTTP status the shop answered, or none (timeout, refused, reset).
    http_status BIGINT,
    outcome   TEXT    NOT NULL
);
CREATE INDEX shop_event_sends_of_event ON shop_event_sends (event_id, id);
