//! Products with a stock: the units each cart order takes, written with the
//! order, and whether a payment's units still fit, decided in the transaction
//! that stores its attempt. Units are held from the moment a payment is
//! stored until it fails: a payment that would pass the stock is stored
//! FAILED `OUT_OF_STOCK` instead, and never reaches the PG.

use sqlx::AnyConnection;

use super::{Db, Engine};

/// A line of an order whose product has a stock: how many units it takes, of how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockLine {
    pub sku: String,
    pub quantity: u32,
    pub stock: u32,
}

/// Units of `sku` held now: those of every order whose payment was stored and did not fail
/// (cast: PostgreSQL sums a BIGINT into a NUMERIC, which the Any driver cannot read).
const HELD: &str = "SELECT CAST(COALESCE(SUM(s.quantity), 0) AS BIGINT) FROM order_stock s \
     JOIN payment_attempts a ON a.order_id = s.order_id WHERE s.sku = $1 AND a.status <> 'FAILED'";

impl Db {
    /// How many units of `sku` are held now.
    pub async fn units_held(&self, sku: &str) -> Result<u64, sqlx::Error> {
        let held: i64 = sqlx::query_scalar(HELD).bind(sku).fetch_one(&self.pool).await?;
        u64::try_from(held).map_err(|error| sqlx::Error::Decode(Box::new(error)))
    }

    /// Whether every line's units fit beside those already held, in the
    /// transaction that will store the payment. On PostgreSQL each product's
    /// lock row is held until that transaction ends (in one order, so two
    /// payments never wait on each other); SQLite has one writer anyway.
    pub(super) async fn stock_fits(
        &self,
        transaction: &mut AnyConnection,
        lines: &[StockLine],
    ) -> Result<bool, sqlx::Error> {
        let mut lines: Vec<&StockLine> = lines.iter().collect();
        lines.sort_by(|a, b| a.sku.cmp(&b.sku));
        for line in lines {
            if self.engine == Engine::Postgres {
                sqlx::query("INSERT INTO stock_locks (sku) VALUES ($1) ON CONFLICT DO NOTHING")
                    .bind(&line.sku)
                    .execute(&mut *transaction)
                    .await?;
                sqlx::query("SELECT sku FROM stock_locks WHERE sku = $1 FOR UPDATE")
                    .bind(&line.sku)
                    .fetch_one(&mut *transaction)
                    .await?;
            }
            let held: i64 = sqlx::query_scalar(HELD).bind(&line.sku).fetch_one(&mut *transaction).await?;
            if held + i64::from(line.quantity) > i64::from(line.stock) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Writes the units an order takes, with the order.
pub(super) async fn insert_order_stock(
    connection: &mut AnyConnection,
    order_id: &str,
    lines: &[StockLine],
) -> Result<(), sqlx::Error> {
    for line in lines {
        sqlx::query("INSERT INTO order_stock (order_id, sku, quantity) VALUES ($1, $2, $3)")
            .bind(order_id)
            .bind(&line.sku)
            .bind(i64::from(line.quantity))
            .execute(&mut *connection)
            .await?;
    }
    Ok(())
}
