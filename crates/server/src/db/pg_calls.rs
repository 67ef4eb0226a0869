//! The log of calls to the PG about each order, for operators. Rows are
//! written after a call has returned (see `pg::gateway`), and kept bounded:
//! each insert deletes the order's calls older than its newest `KEPT_PER_ORDER`.

use std::future::Future;

use sqlx::{AnyConnection, FromRow};

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

/// A call's record on its way to the database (see `group_commit`).
#[derive(Debug, Clone)]
struct StoredCall {
    order_id: String,
    kind: PgCallKind,
    caller: PgCaller,
    idempotency_key: Option<String>,
    server: String,
    started_at_ms: i64,
    took_ms: i64,
    answer: String,
}

impl From<&NewPgCall<'_>> for StoredCall {
    fn from(call: &NewPgCall<'_>) -> Self {
        Self {
            order_id: call.order_id.to_owned(),
            kind: call.kind,
            caller: call.caller,
            idempotency_key: call.idempotency_key.map(str::to_owned),
            server: call.server.to_owned(),
            started_at_ms: call.started_at_ms,
            took_ms: call.took_ms,
            answer: call.answer.to_owned(),
        }
    }
}

impl Db {
    /// Records a call, and deletes the order's calls older than the newest
    /// `KEPT_PER_ORDER`, in one transaction. On SQLite the record is queued
    /// before this returns (see `Db::write`): any write made after it is
    /// committed with it or later. The future gives the outcome once committed.
    pub fn record_pg_call(
        &self,
        call: &NewPgCall<'_>,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send + 'static {
        let call = StoredCall::from(call);
        self.write(Box::new(move |transaction| {
            let call = call.clone();
            Box::pin(async move { insert_pg_call(transaction, &call).await })
        }))
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

async fn insert_pg_call(connection: &mut AnyConnection, call: &StoredCall) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO pg_calls (order_id, kind, caller, idempotency_key, server, started_at_ms, took_ms, answer) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&call.order_id)
    .bind(call.kind.as_str())
    .bind(call.caller.as_str())
    .bind(&call.idempotency_key)
    .bind(&call.server)
    .bind(call.started_at_ms)
    .bind(call.took_ms)
    .bind(&call.answer)
    .execute(&mut *connection)
    .await?;
    sqlx::query(
        "DELETE FROM pg_calls WHERE order_id = $1 AND id < \
         (SELECT MIN(id) FROM (SELECT id FROM pg_calls WHERE order_id = $2 ORDER BY id DESC LIMIT $3) AS kept)",
    )
    .bind(&call.order_id)
    .bind(&call.order_id)
    .bind(KEPT_PER_ORDER)
    .execute(connection)
    .await?;
    Ok(())
}
