-- Products with a stock (the catalog's `stock`): the units each cart order
-- takes of them, so that what is held can be counted: the units of every
-- order whose payment was sent and has not failed.
CREATE TABLE order_stock (
    order_id TEXT    NOT NULL REFERENCES orders (order_id),
    sku      TEXT    NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, sku)
);
CREATE INDEX order_stock_by_sku ON order_stock (sku);
-- One row per product with a stock, locked (PostgreSQL) while a payment of it
-- is stored, so that two servers never both sell the last unit.
CREATE TABLE stock_locks (
    sku TEXT PRIMARY KEY
);
