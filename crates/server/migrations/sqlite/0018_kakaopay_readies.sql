-- Every KakaoPay payment prepared for an order, not only the latest. A new
-- ready replaces the order's window after half the old one's life, but a
-- customer may still finish in the older window (another tab, a phone that
-- kept it open): that window's pg_token approves only its own tid. The return
-- URL names its ready (`ready=<ready_id>`), and the confirm approves that
-- ready's tid. Readies prepared before this migration have no id (''): a
-- return that names none approves the order's latest, as before.
CREATE TABLE kakaopay_readies (
    order_id    TEXT   NOT NULL REFERENCES orders (order_id),
    ready_id    TEXT   NOT NULL,
    tid         TEXT   NOT NULL,
    pc_url      TEXT   NOT NULL,
    mobile_url  TEXT   NOT NULL,
    ready_at_ms INTEGER NOT NULL,
    PRIMARY KEY (order_id, ready_id)
);

INSERT INTO kakaopay_readies (order_id, ready_id, tid, pc_url, mobile_url, ready_at_ms)
SELECT order_id, '', tid, pc_url, mobile_url, ready_at_ms FROM kakaopay_ready;

DROP TABLE kakaopay_ready;
