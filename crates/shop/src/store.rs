//! The shop's own table of orders, in SQLite. The shop keeps its orders
//! whatever payonce says: an order is stored before its checkout is asked
//! for, so a create that fails or never answers leaves an order the customer
//! can pay again, under the same idempotency key (the order's id).
//!
//! An order's payment status is written from payonce's events only (see
//! `event_log`): what payonce answers to a call is shown, never stored.

mod event_log;

use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};

use crate::status::{PaymentState, PaymentStatus};

pub use event_log::{Applied, Delivery};

/// One line of a shop order, as sold: the names and price are copied from
/// the catalog when the order is placed, so a later change of the catalog
/// never changes an order, nor the checkout a retried create asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderLine {
    pub sku: String,
    pub name_en: String,
    pub name_ko: String,
    pub quantity: u32,
    /// KRW, whole won.
    pub unit_amount: u64,
}

impl OrderLine {
    pub fn total(&self) -> u64 {
        self.unit_amount * u64::from(self.quantity)
    }
}

/// An order as the shop stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShopOrder {
    /// A UUID v4: also the checkout's `reference` and its create's `Idempotency-Key`.
    pub id: String,
    pub lines: Vec<OrderLine>,
    /// KRW: the sum of the lines.
    pub amount: u64,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// payonce's checkout id, once a create answered (or an event told it).
    pub checkout_id: Option<String>,
    /// What payonce's events said last (`NEW` before any event).
    pub status: PaymentStatus,
    pub amount_refunded: u64,
    /// The `sequence` of the checkout's event that set `status`; 0 before
    /// any. An event with a sequence no higher is older news and changes nothing.
    pub event_sequence: u64,
    /// The refund's `Idempotency-Key`, stored before the refund is sent.
    pub refund_key: Option<String>,
}

impl ShopOrder {
    /// The payment as the shop recorded it from payonce's events.
    pub fn recorded(&self) -> PaymentState {
        PaymentState { status: self.status, amount_refunded: self.amount_refunded }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the shop's database failed: {0}")]
    Database(#[from] sqlx::Error),
    #[error("the shop's database holds an order it cannot read: {0}")]
    Unreadable(String),
}

// Tables created if missing rather than migrations: the sample's schema is
// a few tables, and a shop adopting payonce would put these columns in its own.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY NOT NULL,
    lines TEXT NOT NULL,
    amount INTEGER NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    checkout_id TEXT NULL,
    status TEXT NOT NULL DEFAULT 'NEW',
    amount_refunded INTEGER NOT NULL DEFAULT 0,
    refund_key TEXT NULL,
    event_sequence INTEGER NOT NULL DEFAULT 0
)";

/// Added to a database made before the shop took events: its orders have
/// had none applied yet.
const ADD_EVENT_SEQUENCE: &str = "ALTER TABLE orders ADD COLUMN event_sequence INTEGER NOT NULL DEFAULT 0";

const COLUMNS: &str = "id, lines, amount, created_at, checkout_id, status, amount_refunded, refund_key, event_sequence";

#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens the database at `path`, creating the file and the tables if missing.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite:")?.filename(path).create_if_missing(true);
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
        sqlx::query(SCHEMA).execute(&pool).await?;
        let has_event_sequence: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info('orders') WHERE name = 'event_sequence'")
                .fetch_one(&pool)
                .await?;
        if has_event_sequence == 0 {
            sqlx::query(ADD_EVENT_SEQUENCE).execute(&pool).await?;
        }
        for table in event_log::SCHEMA {
            sqlx::query(table).execute(&pool).await?;
        }
        Ok(Store { pool })
    }

    /// Stores a new order of `lines` (status `NEW`, no checkout) and gives it back.
    pub async fn insert_new_order(&self, lines: &[OrderLine]) -> Result<ShopOrder, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let amount: u64 = lines.iter().map(OrderLine::total).sum();
        let lines_json = serde_json::to_string(lines).map_err(|error| StoreError::Unreadable(error.to_string()))?;
        sqlx::query("INSERT INTO orders (id, lines, amount) VALUES (?, ?, ?)")
            .bind(&id)
            .bind(lines_json)
            .bind(to_sql(amount)?)
            .execute(&self.pool)
            .await?;
        self.order(&id).await?.ok_or_else(|| StoreError::Unreadable(format!("order {id} vanished once stored")))
    }

    pub async fn order(&self, id: &str) -> Result<Option<ShopOrder>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM orders WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(order_of_row).transpose()
    }

    /// Every order, newest first.
    pub async fn orders(&self) -> Result<Vec<ShopOrder>, StoreError> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM orders ORDER BY created_at DESC, rowid DESC"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(order_of_row).collect()
    }

    /// Keeps the id of the order's checkout, the first time payonce names
    /// it: the events about it are matched to the order by it, and a refund
    /// is asked for with it. Only the id: the status payonce answered with
    /// is not stored, as the order's status comes from events alone. Never
    /// moves an order to another checkout: one shop order has one checkout,
    /// as its idempotency key is its id. Gives back the order as stored.
    pub async fn record_checkout_id(&self, order_id: &str, checkout_id: &str) -> Result<Option<ShopOrder>, StoreError> {
        sqlx::query("UPDATE orders SET checkout_id = ? WHERE id = ? AND checkout_id IS NULL")
            .bind(checkout_id)
            .bind(order_id)
            .execute(&self.pool)
            .await?;
        self.order(order_id).await
    }

    /// The key of the order's refund: the one stored already (a refund sent
    /// before, whose outcome is unknown or known: sending it again is the same
    /// refund, never a second), or else `fresh`, stored before it is sent.
    pub async fn refund_key(&self, order_id: &str, fresh: &str) -> Result<Option<String>, StoreError> {
        sqlx::query("UPDATE orders SET refund_key = ? WHERE id = ? AND refund_key IS NULL")
            .bind(fresh)
            .bind(order_id)
            .execute(&self.pool)
            .await?;
        Ok(self.order(order_id).await?.and_then(|order| order.refund_key))
    }

    /// Forgets a refund key whose refund payonce refused before doing
    /// anything, so the next click is a new refund and not the refused one again.
    pub async fn forget_refund_key(&self, order_id: &str, key: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE orders SET refund_key = NULL WHERE id = ? AND refund_key = ?")
            .bind(order_id)
            .bind(key)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// An amount or a sequence as SQLite's integer.
fn to_sql(number: u64) -> Result<i64, StoreError> {
    i64::try_from(number).map_err(|_| StoreError::Unreadable(format!("{number} is too large for the database")))
}

fn order_of_row(row: &SqliteRow) -> Result<ShopOrder, StoreError> {
    let id: String = row.try_get("id")?;
    let unreadable = |what: &str| StoreError::Unreadable(format!("order {id}: {what}"));
    let lines: String = row.try_get("lines")?;
    let status: String = row.try_get("status")?;
    let amount: i64 = row.try_get("amount")?;
    let amount_refunded: i64 = row.try_get("amount_refunded")?;
    let event_sequence: i64 = row.try_get("event_sequence")?;
    Ok(ShopOrder {
        lines: serde_json::from_str(&lines).map_err(|error| unreadable(&format!("lines: {error}")))?,
        amount: u64::try_from(amount).map_err(|_| unreadable("negative amount"))?,
        created_at: row.try_get("created_at")?,
        checkout_id: row.try_get("checkout_id")?,
        status: PaymentStatus::parse(&status).ok_or_else(|| unreadable(&format!("status {status:?}")))?,
        amount_refunded: u64::try_from(amount_refunded).map_err(|_| unreadable("negative refund"))?,
        refund_key: row.try_get("refund_key")?,
        event_sequence: u64::try_from(event_sequence).map_err(|_| unreadable("negative event sequence"))?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(sku: &str, quantity: u32, unit_amount: u64) -> OrderLine {
        OrderLine { sku: sku.into(), name_en: sku.into(), name_ko: format!("{sku} (ko)"), quantity, unit_amount }
    }

    async fn store_in(dir: &tempfile::TempDir) -> Store {
        Store::open(&dir.path().join("shop.sqlite3")).await.unwrap()
    }

    #[tokio::test]
    async fn a_new_order_is_stored_with_its_lines_and_total_and_no_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir).await;
        let order = store.insert_new_order(&[line("a", 2, 13_500), line("b", 1, 500)]).await.unwrap();
        assert!(uuid::Uuid::parse_str(&order.id).is_ok_and(|id| id.get_version_num() == 4));
        assert_eq!(order.amount, 27_500);
        assert_eq!(order.lines, [line("a", 2, 13_500), line("b", 1, 500)]);
        assert_eq!((order.checkout_id.as_deref(), order.status), (None, PaymentStatus::New));
        assert!(order.created_at.ends_with('Z') && order.created_at.contains('T'), "{}", order.created_at);
        assert_eq!(store.order(&order.id).await.unwrap(), Some(order));
        assert_eq!(store.order("no-such-order").await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_file_is_created_and_orders_outlive_a_restart_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.sqlite3");
        let (first, second) = {
            let store = Store::open(&path).await.unwrap();
            (
                store.insert_new_order(&[line("a", 1, 1_000)]).await.unwrap(),
                store.insert_new_order(&[line("b", 1, 2_000)]).await.unwrap(),
            )
        };
        assert!(path.exists());
        let reopened = Store::open(&path).await.unwrap();
        let ids: Vec<_> = reopened.orders().await.unwrap().into_iter().map(|order| order.id).collect();
        assert_eq!(ids, [second.id, first.id]);
    }

    #[tokio::test]
    async fn an_order_keeps_its_checkouts_id_but_not_its_status_and_never_moves_to_another_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir).await;
        let order = store.insert_new_order(&[line("a", 1, 27_500)]).await.unwrap();
        let stored = store.record_checkout_id(&order.id, "po_1").await.unwrap().unwrap();
        assert_eq!((stored.checkout_id.as_deref(), stored.status), (Some("po_1"), PaymentStatus::New));
        assert_eq!(stored.event_sequence, 0);

        let stored = store.record_checkout_id(&order.id, "po_2").await.unwrap().unwrap();
        assert_eq!(stored.checkout_id.as_deref(), Some("po_1"));
        assert_eq!(store.record_checkout_id("no-such-order", "po_3").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_database_from_before_events_gets_the_sequence_column_and_keeps_its_orders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.sqlite3");
        {
            let options = SqliteConnectOptions::from_str("sqlite:").unwrap().filename(&path).create_if_missing(true);
            let pool = SqlitePoolOptions::new().connect_with(options).await.unwrap();
            let old_schema = SCHEMA.replace(",\n    event_sequence INTEGER NOT NULL DEFAULT 0", "");
            assert!(!old_schema.contains("event_sequence"));
            sqlx::query(&old_schema).execute(&pool).await.unwrap();
            sqlx::query("INSERT INTO orders (id, lines, amount, status) VALUES ('o1', '[]', 1000, 'PAID')")
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        let store = Store::open(&path).await.unwrap();
        let order = store.order("o1").await.unwrap().unwrap();
        assert_eq!((order.status.as_str(), order.event_sequence), ("PAID", 0));
        // Opening it again finds the column there.
        drop(store);
        assert!(Store::open(&path).await.is_ok());
    }

    #[tokio::test]
    async fn a_refund_key_is_stored_once_and_forgotten_only_when_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir).await;
        let order = store.insert_new_order(&[line("a", 1, 1_000)]).await.unwrap();
        assert_eq!(store.refund_key(&order.id, "k1").await.unwrap().as_deref(), Some("k1"));
        // A second click, or the same one sent again: the same refund.
        assert_eq!(store.refund_key(&order.id, "k2").await.unwrap().as_deref(), Some("k1"));
        store.forget_refund_key(&order.id, "not-the-key").await.unwrap();
        assert_eq!(store.refund_key(&order.id, "k3").await.unwrap().as_deref(), Some("k1"));
        store.forget_refund_key(&order.id, "k1").await.unwrap();
        assert_eq!(store.refund_key(&order.id, "k4").await.unwrap().as_deref(), Some("k4"));
        assert_eq!(store.refund_key("no-such-order", "k5").await.unwrap(), None);
    }
}
