use payonce_api::{Failure, OrderStatus};
use sqlx::FromRow;

use super::{Db, now_ms};

/// A stored payment attempt: what was sent to the PG, under which key, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub order_id: String,
    pub idempotency_key: String,
    pub payment_key: String,
    pub amount: u64,
    pub status: OrderStatus,
    pub recovery_passes: u32,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// An attempt about to be stored, before anything is sent.
#[derive(Debug, Clone)]
pub struct NewAttempt<'a> {
    pub order_id: &'a str,
    pub idempotency_key: &'a str,
    pub payment_key: &'a str,
    pub amount: u64,
    pub status: OrderStatus,
    pub failure: Option<&'a Failure>,
}

/// A change of an attempt's status, with what explains it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub to: OrderStatus,
    pub failure: Option<Failure>,
    pub unknown_reason: Option<String>,
}

#[derive(Debug, FromRow)]
struct AttemptRow {
    order_id: String,
    idempotency_key: String,
    payment_key: String,
    amount: i64,
    status: String,
    recovery_passes: i64,
    created_at_ms: i64,
    updated_at_ms: i64,
}

const SELECT_ATTEMPT: &str = "SELECT order_id, idempotency_key, payment_key, amount, status, \
     recovery_passes, created_at_ms, updated_at_ms FROM payment_attempts";

impl TryFrom<AttemptRow> for Attempt {
    type Error = sqlx::Error;

    fn try_from(row: AttemptRow) -> Result<Self, Self::Error> {
        let decode = |error: std::num::TryFromIntError| sqlx::Error::Decode(Box::new(error));
        Ok(Attempt {
            status: OrderStatus::parse(&row.status)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown payment status {:?}", row.status).into()))?,
            order_id: row.order_id,
            idempotency_key: row.idempotency_key,
            payment_key: row.payment_key,
            amount: u64::try_from(row.amount).map_err(decode)?,
            recovery_passes: u32::try_from(row.recovery_passes).map_err(decode)?,
            created_at_ms: row.created_at_ms,
            updated_at_ms: row.updated_at_ms,
        })
    }
}

impl Db {
    pub async fn attempt_by_key(&self, idempotency_key: &str) -> Result<Option<Attempt>, sqlx::Error> {
        let query = format!("{SELECT_ATTEMPT} WHERE idempotency_key = ?");
        let row: Option<AttemptRow> = sqlx::query_as(&query).bind(idempotency_key).fetch_optional(&self.pool).await?;
        row.map(Attempt::try_from).transpose()
    }

    pub async fn attempt_for_order(&self, order_id: &str) -> Result<Option<Attempt>, sqlx::Error> {
        let query = format!("{SELECT_ATTEMPT} WHERE order_id = ?");
        let row: Option<AttemptRow> = sqlx::query_as(&query).bind(order_id).fetch_optional(&self.pool).await?;
        row.map(Attempt::try_from).transpose()
    }

    /// Stores the attempt unless the order or the key already has one; says whether it did.
    /// The constraints decide races between two confirms, so no lock is needed.
    pub async fn insert_attempt(&self, attempt: &NewAttempt<'_>) -> Result<bool, sqlx::Error> {
        let now = now_ms();
        let amount = i64::try_from(attempt.amount).map_err(|error| sqlx::Error::Encode(Box::new(error)))?;
        let result = sqlx::query(
            "INSERT INTO payment_attempts (order_id, idempotency_key, payment_key, amount, status, \
             failure_code, failure_message, created_at_ms, updated_at_ms) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(attempt.order_id)
        .bind(attempt.idempotency_key)
        .bind(attempt.payment_key)
        .bind(amount)
        .bind(attempt.status.as_str())
        .bind(attempt.failure.map(|failure| failure.code.as_str()))
        .bind(attempt.failure.map(|failure| failure.message.as_str()))
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Moves the attempt from `from` to the transition's status. Says whether it moved:
    /// it does not if someone else moved it first, so a transition is applied once.
    pub async fn transition(
        &self,
        order_id: &str,
        from: OrderStatus,
        transition: &Transition,
    ) -> Result<bool, sqlx::Error> {
        let result = sqlx::query(
            "UPDATE payment_attempts SET status = ?, failure_code = ?, failure_message = ?, \
             unknown_reason = ?, updated_at_ms = ? WHERE order_id = ? AND status = ?",
        )
        .bind(transition.to.as_str())
        .bind(transition.failure.as_ref().map(|failure| failure.code.as_str()))
        .bind(transition.failure.as_ref().map(|failure| failure.message.as_str()))
        .bind(transition.unknown_reason.as_deref())
        .bind(now_ms())
        .bind(order_id)
        .bind(from.as_str())
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Attempts recovery should settle now: UNKNOWN ones, and PENDING ones last touched
    /// before `pending_cutoff_ms` (their server died while waiting), whose next recovery
    /// time has come. Those waiting longest for their turn come first.
    pub async fn due_attempts(
        &self,
        now_ms: i64,
        pending_cutoff_ms: i64,
        limit: u32,
    ) -> Result<Vec<Attempt>, sqlx::Error> {
        let query = format!(
            "{SELECT_ATTEMPT} WHERE next_recovery_at_ms <= ? \
             AND (status = 'UNKNOWN' OR (status = 'PENDING' AND updated_at_ms < ?)) \
             ORDER BY next_recovery_at_ms, created_at_ms LIMIT ?"
        );
        let rows: Vec<AttemptRow> =
            sqlx::query_as(&query).bind(now_ms).bind(pending_cutoff_ms).bind(limit).fetch_all(&self.pool).await?;
        rows.into_iter().map(Attempt::try_from).collect()
    }

    /// When the oldest attempt still waiting for an outcome was made.
    pub async fn oldest_unsettled_ms(&self) -> Result<Option<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT MIN(created_at_ms) FROM payment_attempts WHERE status IN ('PENDING', 'UNKNOWN')")
            .fetch_one(&self.pool)
            .await
    }

    /// Notes one more recovery pass that did not settle the attempt, and when to try next.
    pub async fn postpone_recovery(&self, order_id: &str, next_at_ms: i64) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE payment_attempts SET recovery_passes = recovery_passes + 1, next_recovery_at_ms = ? \
             WHERE order_id = ?",
        )
        .bind(next_at_ms)
        .bind(order_id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
