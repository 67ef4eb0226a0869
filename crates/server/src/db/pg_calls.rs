//! The log of calls to the PG about each order, for operators. Rows are
//! written after a call has returned (see `pg::gateway`), and kept bounded:
//! each insert deletes the order's calls older than its newest `KEPT_PER_ORDER`.

use sqlx::FromRow;

use super::Db;

/// The most calls kept per order; older ones are deleted as new ones come.
pub const KEPT_PER_ORDER: i64 = 200;

/// What a call asked the PG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgCallKind {
    Confirm,
    Lookup,
    Cancel,
}

impl PgCallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PgCallKind::Confirm => "confirm",
            PgCallKind::Lookup => "lookup",
            PgCallKind::Cancel => "cancel",
        }
    }
}

/// Who made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgCaller {
    /// The customer's confirm task, or the refund a customer asked for.
    Customer,
    /// The recovery job (of attempts, or of refunds).
    Recovery,
    /// A refund an operator asked for.
    Operator,
    /// A reconciliation pass.
    Reconcile,
}

impl PgCaller {
    pub fn as_str(self) -> &'static str {
        match self {
            PgCaller::Customer => "customer",
            PgCaller::Recovery => "recovery",
            PgCaller::Operator => "operator",
            PgCaller::Reconcile => "reconcile",
        }
    }
}

/// One call, as the gateway records it once it has returned.
#[derive(Debug, Clone, Copy)]
pub struct NewPgCall<'a> {
    pub order_id: &'a str,
    pub kind: PgCallKind,
    pub caller: PgCaller,
    pub idempotency_key: Option<&'a str>,
    pub server: &'a str,
    pub started_at_ms: i64,
    pub took_ms: i64,
    pub answer: &'a str,
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct PgCallRow {
    pub kind: String,
    pub caller: String,
    pub idempotency_key: Option<String>,
    pub server: String,
    pub started_at_ms: i64,
    pub took_ms: i64,
    pub answer: String,
}

impl Db {
    /// Records a call, and deletes the order's calls older than the newest `KEPT_PER_ORDER`, in one transaction.
    pub async fn record_pg_call(&self, call: &NewPgCall<'_>) -> Result<(), sqlx::Error> {
        let mut transaction = self.writer.begin().await?;
        sqlx::query(
            "INSERT INTO pg_calls (order_id, kind, caller, idempotency_key, server, started_at_ms, took_ms, answer) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(call.order_id)
        .bind(call.kind.as_str())
        .bind(call.caller.as_str())
        .bind(call.idempotency_key)
        .bind(call.server)
        .bind(call.started_at_ms)
        .bind(call.took_ms)
        .bind(call.answer)
        .execute(&mut *transaction)
        .await?;
        sqlx::query(
            "DELETE FROM pg_calls WHERE order_id = $1 AND id < \
             (SELECT MIN(id) FROM (SELECT id FROM pg_calls WHERE order_id = $2 ORDER BY id DESC LIMIT $3) AS kept)",
        )
        .bind(call.order_id)
        .bind(call.order_id)
        .bind(KEPT_PER_ORDER)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await
    }

    /// The order's recorded calls, oldest first.
    pub async fn pg_calls(&self, order_id: &str) -> Result<Vec<PgCallRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT kind, caller, idempotency_key, server, started_at_ms, took_ms, answer FROM pg_calls \
             WHERE order_id = $1 ORDER BY id",
        )
        .bind(order_id)
        .fetch_all(&self.pool)
        .await
    }
}
