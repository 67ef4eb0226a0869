//! The history of every attempt: one line per status change, written in the
//! same transaction as the change.

use payonce_api::OrderStatus;
use sqlx::AnyConnection;
use sqlx::FromRow;

use super::{Db, Engine, now_ms};

/// Who changed an attempt's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// The customer's confirm and its PG call.
    Confirm,
    /// The recovery job.
    Recovery,
    /// The page closing an order that never got a confirm.
    Abandon,
    /// A customer asking for a refund.
    Customer,
    /// An operator asking for a refund.
    Operator,
    /// A refund's own call to the PG.
    Cancel,
    /// Closing a shop's checkout whose time ran out unpaid.
    Expiry,
    /// A shop asking for a refund through the shop API.
    Shop,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Confirm => "confirm",
            Actor::Recovery => "recovery",
            Actor::Abandon => "abandon",
            Actor::Customer => "customer",
            Actor::Operator => "operator",
            Actor::Cancel => "cancel",
            Actor::Expiry => "expiry",
            Actor::Shop => "shop",
        }
    }
}

/// One status change of an attempt.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct HistoryLine {
    pub at_ms: i64,
    pub actor: String,
    pub from_status: String,
    pub to_status: String,
    pub code: Option<String>,
    pub detail: Option<String>,
}

/// A change about to be recorded.
pub(super) struct Change<'a> {
    pub order_id: &'a str,
    pub actor: Actor,
    pub from: OrderStatus,
    pub to: OrderStatus,
    pub code: Option<&'a str>,
    pub detail: Option<&'a str>,
    /// The charge, and how much of it was refunded before and after the
    /// change: what the shop's event says (see `shop_events`).
    pub amount: u64,
    pub refunded_before: u64,
    pub refunded_after: u64,
}

impl Db {
    /// Records a status change in the history, in the transaction that makes
    /// it, writes the event it makes for its shop if it is a checkout's (see
    /// `shop_events`), and announces it to the other servers (`change_feed`).
    pub(super) async fn record_change(
        &self,
        transaction: &mut AnyConnection,
        change: Change<'_>,
    ) -> Result<(), sqlx::Error> {
        if self.engine == Engine::Postgres {
            super::change_feed::announce(transaction, change.order_id).await?;
        }
        self.tell_shop_of(transaction, &change).await?;
        record(transaction, change).await
    }
}

/// Records a change inside the transaction that made it.
async fn record(connection: &mut AnyConnection, change: Change<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO payment_events (order_id, at_ms, actor, from_status, to_status, code, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(change.order_id)
    .bind(now_ms())
    .bind(change.actor.as_str())
    .bind(change.from.as_str())
    .bind(change.to.as_str())
    .bind(change.code)
    .bind(change.detail)
    .execute(connection)
    .await?;
    Ok(())
}

/// How one payment went, from its history: for experiments and reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentSummary {
    pub order_id: String,
    pub status: String,
    pub failure_code: Option<String>,
    /// When its attempt was first stored, and when it last changed (ms since the epoch).
    pub first_ms: i64,
    pub last_ms: i64,
    /// Whether it went through UNKNOWN.
    pub went_through_unknown: bool,
}

/// A summary as both engines can return it: a flag as 0 or 1.
#[derive(FromRow)]
struct SummaryRow {
    order_id: String,
    status: String,
    failure_code: Option<String>,
    first_ms: i64,
    last_ms: i64,
    went_through_unknown: i64,
}

impl From<SummaryRow> for PaymentSummary {
    fn from(row: SummaryRow) -> Self {
        Self {
            order_id: row.order_id,
            status: row.status,
            failure_code: row.failure_code,
            first_ms: row.first_ms,
            last_ms: row.last_ms,
            went_through_unknown: row.went_through_unknown != 0,
        }
    }
}

impl Db {
    /// Every payment attempt, summed up from its history.
    pub async fn payment_summaries(&self) -> Result<Vec<PaymentSummary>, sqlx::Error> {
        let rows: Vec<SummaryRow> = sqlx::query_as(
            "SELECT a.order_id, a.status, a.failure_code, \
             COALESCE((SELECT MIN(at_ms) FROM payment_events e WHERE e.order_id = a.order_id), a.created_at_ms) \
             AS first_ms, \
             COALESCE((SELECT MAX(at_ms) FROM payment_events e WHERE e.order_id = a.order_id), a.updated_at_ms) \
             AS last_ms, \
             CASE WHEN EXISTS (SELECT 1 FROM payment_events e WHERE e.order_id = a.order_id \
             AND e.to_status = 'UNKNOWN') THEN 1 ELSE 0 END AS went_through_unknown FROM payment_attempts a ORDER BY a.created_at_ms, a.order_id",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(PaymentSummary::from).collect())
    }

    /// How many attempts are in each status now.
    pub async fn status_counts(&self) -> Result<Vec<(String, i64)>, sqlx::Error> {
        sqlx::query_as("SELECT status, COUNT(*) FROM payment_attempts GROUP BY status").fetch_all(&self.pool).await
    }

    /// An order's payment history, oldest first.
    pub async fn history(&self, order_id: &str) -> Result<Vec<HistoryLine>, sqlx::Error> {
        sqlx::query_as(
            "SELECT at_ms, actor, from_status, to_status, code, detail FROM payment_events \
             WHERE order_id = $1 ORDER BY id",
        )
        .bind(order_id)
        .fetch_all(&self.pool)
        .await
    }
}
