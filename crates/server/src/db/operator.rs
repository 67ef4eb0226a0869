//! What the operators' console reads: orders by how long they have waited,
//! unsettled ones first, and an attempt's full state.

use std::collections::HashMap;

use sqlx::FromRow;

use super::Db;

/// One order in the operators' list.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct OperatorOrderRow {
    pub order_id: String,
    pub amount: i64,
    /// `None` while the order has no attempt (CREATED).
    pub status: Option<String>,
    /// The PG its attempt went to; `None` while it has none.
    pub pg: Option<String>,
    pub refunded_amount: Option<i64>,
    pub created_at_ms: i64,
    /// When the order last changed (its attempt's last update, else its creation).
    pub changed_at_ms: i64,
    pub last_pg_answer: Option<String>,
    pub unknown_reason: Option<String>,
    pub recovery_passes: Option<i64>,
}

/// An attempt as operators see it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct AttemptDetail {
    pub pg: String,
    pub idempotency_key: Option<String>,
    pub pg_idempotency_key: Option<String>,
    pub payment_key: Option<String>,
    pub amount: i64,
    pub status: String,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub unknown_reason: Option<String>,
    pub last_pg_answer: Option<String>,
    pub recovery_passes: i64,
    pub next_attempt_at_ms: i64,
    pub lease_until_ms: i64,
    pub lease_owner: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl Db {
    /// Orders with `status` (any without; CREATED means no attempt) that last
    /// changed at or before `changed_before_ms`: UNKNOWN first, then
    /// CANCEL_REQUESTED, then the rest, each longest waiting first.
    pub async fn operator_orders(
        &self,
        status: Option<&str>,
        changed_before_ms: i64,
        limit: u32,
    ) -> Result<Vec<OperatorOrderRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT o.order_id, o.amount, a.status, a.pg, a.refunded_amount, o.created_at_ms, \
             COALESCE(a.updated_at_ms, o.created_at_ms) AS changed_at_ms, a.last_pg_answer, a.unknown_reason, \
             a.recovery_passes FROM orders o LEFT JOIN payment_attempts a ON a.order_id = o.order_id \
             WHERE (CAST($1 AS TEXT) IS NULL OR COALESCE(a.status, 'CREATED') = $2) \
             AND COALESCE(a.updated_at_ms, o.created_at_ms) <= $3 \
             ORDER BY CASE COALESCE(a.status, 'CREATED') WHEN 'UNKNOWN' THEN 0 WHEN 'CANCEL_REQUESTED' THEN 1 \
             WHEN 'PENDING' THEN 2 ELSE 3 END, COALESCE(a.updated_at_ms, o.created_at_ms), o.order_id LIMIT $4",
        )
        .bind(status)
        .bind(status)
        .bind(changed_before_ms)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
    }

    /// What the PG last said about each of the order's refunds that it has
    /// answered (as the cancel that sent it, or recovery, recorded it), by refund.
    pub async fn refund_answers(&self, order_id: &str) -> Result<HashMap<String, String>, sqlx::Error> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT refund_id, last_pg_answer FROM refunds WHERE order_id = $1 AND last_pg_answer IS NOT NULL",
        )
        .bind(order_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().collect())
    }

    /// The order's attempt in full, if it has one.
    pub async fn attempt_detail(&self, order_id: &str) -> Result<Option<AttemptDetail>, sqlx::Error> {
        sqlx::query_as(
            "SELECT pg, idempotency_key, pg_idempotency_key, payment_key, amount, status, failure_code, failure_message, unknown_reason, \
             last_pg_answer, recovery_passes, next_attempt_at_ms, lease_until_ms, lease_owner, created_at_ms, \
             updated_at_ms FROM payment_attempts WHERE order_id = $1",
        )
        .bind(order_id)
        .fetch_optional(&self.pool)
        .await
    }
}
