use payonce_api::{Failure, OrderStatus};
use sqlx::FromRow;

use super::events::{Actor, Change};
use super::{Db, now_ms};

/// A payment attempt that was sent (or is about to be) to the PG: what was sent,
/// under which key, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub order_id: String,
    pub idempotency_key: String,
    pub payment_key: String,
    pub amount: u64,
    pub status: OrderStatus,
    /// Recovery passes in which the PG answered without settling the attempt.
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
    /// Until when the confirm task owns it; recovery waits for this to lapse.
    pub lease_until_ms: i64,
}

/// A change of an attempt's status, with what explains it. The data lives in
/// the variant, so a paid transition cannot carry a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The customer was charged.
    Paid,
    /// Nothing was charged, for this reason.
    Failed(Failure),
    /// The outcome is not known; the reason is for operators.
    Unknown(String),
    /// Charged, then cancelled in full at the PG.
    Canceled,
    /// Charged, then cancelled in part at the PG.
    PartiallyRefunded,
}

impl Transition {
    /// The status the attempt moves to.
    pub fn status(&self) -> OrderStatus {
        match self {
            Transition::Paid => OrderStatus::Paid,
            Transition::Failed(_) => OrderStatus::Failed,
            Transition::Unknown(_) => OrderStatus::Unknown,
            Transition::Canceled => OrderStatus::Canceled,
            Transition::PartiallyRefunded => OrderStatus::PartiallyRefunded,
        }
    }

    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Transition::Failed(failure) => Some(failure),
            Transition::Paid | Transition::Unknown(_) | Transition::Canceled | Transition::PartiallyRefunded => None,
        }
    }

    pub fn unknown_reason(&self) -> Option<&str> {
        match self {
            Transition::Unknown(reason) => Some(reason),
            Transition::Paid | Transition::Failed(_) | Transition::Canceled | Transition::PartiallyRefunded => None,
        }
    }
}

#[derive(Debug, FromRow)]
struct AttemptRow {
    order_id: String,
    idempotency_key: Option<String>,
    payment_key: Option<String>,
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
        let (Some(idempotency_key), Some(payment_key)) = (row.idempotency_key, row.payment_key) else {
            return Err(sqlx::Error::Decode(
                format!("order {} was closed without a confirm; it has no sent attempt", row.order_id).into(),
            ));
        };
        Ok(Attempt {
            status: OrderStatus::parse(&row.status)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown payment status {:?}", row.status).into()))?,
            order_id: row.order_id,
            idempotency_key,
            payment_key,
            amount: u64::try_from(row.amount).map_err(decode)?,
            recovery_passes: u32::try_from(row.recovery_passes).map_err(decode)?,
            created_at_ms: row.created_at_ms,
            updated_at_ms: row.updated_at_ms,
        })
    }
}

fn encode_amount(amount: u64) -> Result<i64, sqlx::Error> {
    i64::try_from(amount).map_err(|error| sqlx::Error::Encode(Box::new(error)))
}

impl Db {
    pub async fn attempt_by_key(&self, idempotency_key: &str) -> Result<Option<Attempt>, sqlx::Error> {
        let query = format!("{SELECT_ATTEMPT} WHERE idempotency_key = $1");
        let row: Option<AttemptRow> = sqlx::query_as(&query).bind(idempotency_key).fetch_optional(&self.pool).await?;
        row.map(Attempt::try_from).transpose()
    }

    /// The order's sent attempt, if it has one that is still waiting for an outcome or was settled.
    pub async fn sent_attempt_for_order(&self, order_id: &str) -> Result<Option<Attempt>, sqlx::Error> {
        let query = format!("{SELECT_ATTEMPT} WHERE order_id = $1 AND idempotency_key IS NOT NULL");
        let row: Option<AttemptRow> = sqlx::query_as(&query).bind(order_id).fetch_optional(&self.pool).await?;
        row.map(Attempt::try_from).transpose()
    }

    /// Whether the order has an attempt of any kind (sent, or closed without one).
    pub async fn has_attempt(&self, order_id: &str) -> Result<bool, sqlx::Error> {
        let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM payment_attempts WHERE order_id = $1")
            .bind(order_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(found.is_some())
    }

    /// Stores the attempt unless the order or the key already has one; says whether it did.
    /// The constraints decide races between two confirms, so no lock is needed.
    pub async fn insert_attempt(&self, attempt: &NewAttempt<'_>) -> Result<bool, sqlx::Error> {
        let now = now_ms();
        let mut transaction = self.writer.begin().await?;
        let result = sqlx::query(
            "INSERT INTO payment_attempts (order_id, idempotency_key, payment_key, amount, status, \
             failure_code, failure_message, lease_until_ms, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
        )
        .bind(attempt.order_id)
        .bind(attempt.idempotency_key)
        .bind(attempt.payment_key)
        .bind(encode_amount(attempt.amount)?)
        .bind(attempt.status.as_str())
        .bind(attempt.failure.map(|failure| failure.code.as_str()))
        .bind(attempt.failure.map(|failure| failure.message.as_str()))
        .bind(attempt.lease_until_ms)
        .bind(now)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        if result.rows_affected() != 1 {
            return Ok(false);
        }
        let change = Change {
            order_id: attempt.order_id,
            actor: Actor::Confirm,
            from: OrderStatus::Created,
            to: attempt.status,
            code: attempt.failure.map(|failure| failure.code.as_str()),
            detail: None,
        };
        self.record_change(&mut transaction, change).await?;
        transaction.commit().await?;
        self.changes.notify(attempt.order_id);
        Ok(true)
    }

    /// Closes an order that never had a confirm: a FAILED attempt with no keys.
    /// Says whether it did; it does not if the order already has an attempt
    /// (a confirm won the race), which the primary key decides atomically.
    pub async fn close_unconfirmed(&self, order_id: &str, amount: u64, failure: &Failure) -> Result<bool, sqlx::Error> {
        let now = now_ms();
        let mut transaction = self.writer.begin().await?;
        let result = sqlx::query(
            "INSERT INTO payment_attempts (order_id, amount, status, failure_code, failure_message, \
             created_at_ms, updated_at_ms) VALUES ($1, $2, 'FAILED', $3, $4, $5, $6) ON CONFLICT DO NOTHING",
        )
        .bind(order_id)
        .bind(encode_amount(amount)?)
        .bind(&failure.code)
        .bind(&failure.message)
        .bind(now)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        if result.rows_affected() != 1 {
            return Ok(false);
        }
        let change = Change {
            order_id,
            actor: Actor::Abandon,
            from: OrderStatus::Created,
            to: OrderStatus::Failed,
            code: Some(&failure.code),
            detail: None,
        };
        self.record_change(&mut transaction, change).await?;
        transaction.commit().await?;
        self.changes.notify(order_id);
        Ok(true)
    }

    /// Moves the attempt from `from` to the transition's status, releases its
    /// lease, and sets when recovery should look at it next (for an unsettled
    /// status). Says whether it moved: it does not if someone else moved it
    /// first, so a transition is applied once.
    pub async fn transition(
        &self,
        order_id: &str,
        from: OrderStatus,
        transition: &Transition,
        next_recovery_at_ms: i64,
        actor: Actor,
    ) -> Result<bool, sqlx::Error> {
        let mut transaction = self.writer.begin().await?;
        let result = sqlx::query(
            // A payment the PG shows cancelled in full is refunded in full.
            "UPDATE payment_attempts SET status = $1, failure_code = $2, failure_message = $3, \
             unknown_reason = $4, lease_until_ms = 0, next_recovery_at_ms = $5, updated_at_ms = $6, \
             refunded_amount = CASE WHEN $1 = 'CANCELED' THEN amount ELSE refunded_amount END \
             WHERE order_id = $7 AND status = $8",
        )
        .bind(transition.status().as_str())
        .bind(transition.failure().map(|failure| failure.code.as_str()))
        .bind(transition.failure().map(|failure| failure.message.as_str()))
        .bind(transition.unknown_reason())
        .bind(next_recovery_at_ms)
        .bind(now_ms())
        .bind(order_id)
        .bind(from.as_str())
        .execute(&mut *transaction)
        .await?;
        if result.rows_affected() != 1 {
            return Ok(false);
        }
        let change = Change {
            order_id,
            actor,
            from,
            to: transition.status(),
            code: transition.failure().map(|failure| failure.code.as_str()),
            detail: transition.unknown_reason(),
        };
        self.record_change(&mut transaction, change).await?;
        transaction.commit().await?;
        self.changes.notify(order_id);
        Ok(true)
    }

    /// Orders of unsettled attempts recovery may take now: UNKNOWN or PENDING,
    /// whose lease has lapsed (a PENDING one's confirm task is gone) and whose
    /// next recovery time has come. Those waiting longest for their turn come first.
    pub async fn due_attempts(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, sqlx::Error> {
        sqlx::query_scalar(
            "SELECT order_id FROM payment_attempts WHERE status IN ('PENDING', 'UNKNOWN') \
             AND next_recovery_at_ms <= $1 AND lease_until_ms <= $2 \
             ORDER BY next_recovery_at_ms, created_at_ms LIMIT $3",
        )
        .bind(now_ms)
        .bind(now_ms)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
    }

    /// When recovery should look next: the earliest time an unsettled attempt
    /// becomes due (its next recovery time, or its lease's end if later).
    pub async fn next_due_ms(&self) -> Result<Option<i64>, sqlx::Error> {
        sqlx::query_scalar(
            "SELECT MIN(CASE WHEN next_recovery_at_ms > lease_until_ms THEN next_recovery_at_ms \
             ELSE lease_until_ms END) FROM payment_attempts \
             WHERE status IN ('PENDING', 'UNKNOWN')",
        )
        .fetch_one(&self.pool)
        .await
    }

    /// Takes the lease of an unsettled attempt whose lease has lapsed, and returns
    /// the attempt as it is now. `None` if it is settled or someone else holds it:
    /// only the holder of the lease calls the PG about it.
    pub async fn claim_for_recovery(
        &self,
        order_id: &str,
        worker: &str,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> Result<Option<Attempt>, sqlx::Error> {
        let claimed = sqlx::query(
            "UPDATE payment_attempts SET lease_until_ms = $1, lease_owner = $2 WHERE order_id = $3 \
             AND status IN ('PENDING', 'UNKNOWN') AND lease_until_ms <= $4 AND idempotency_key IS NOT NULL",
        )
        .bind(lease_until_ms)
        .bind(worker)
        .bind(order_id)
        .bind(now_ms)
        .execute(&self.writer)
        .await?;
        if claimed.rows_affected() != 1 {
            return Ok(None);
        }
        self.sent_attempt_for_order(order_id).await
    }

    /// Hands an unsettled attempt to recovery at once: ends whoever's lease it
    /// is under and makes it due now. For an operator's "ask the PG now", and
    /// for a worker frozen past its lease. Says whether the attempt is unsettled.
    pub async fn recover_now(&self, order_id: &str) -> Result<bool, sqlx::Error> {
        let result = sqlx::query(
            "UPDATE payment_attempts SET lease_until_ms = 0, next_recovery_at_ms = 0 \
             WHERE order_id = $1 AND status IN ('PENDING', 'UNKNOWN')",
        )
        .bind(order_id)
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Renews `worker`'s lease of an unsettled attempt until `until_ms`. Says
    /// whether it did: not if the attempt was settled, or another worker took
    /// it over (the lease had lapsed), and then this worker must not call the PG.
    pub async fn renew_lease(&self, order_id: &str, worker: &str, until_ms: i64) -> Result<bool, sqlx::Error> {
        let result = sqlx::query(
            "UPDATE payment_attempts SET lease_until_ms = $1 WHERE order_id = $2 AND lease_owner = $3 \
             AND status IN ('PENDING', 'UNKNOWN')",
        )
        .bind(until_ms)
        .bind(order_id)
        .bind(worker)
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Ends a recovery worker's hold without settling the attempt. `next_at_ms`
    /// is when to look again; `answered` says the PG answered this pass (only
    /// those passes count toward backoff and the operator alert). Returns the
    /// number of answered passes so far.
    pub async fn release_unsettled(
        &self,
        order_id: &str,
        worker: &str,
        next_at_ms: Option<i64>,
        answered: bool,
        last_pg_answer: Option<&str>,
    ) -> Result<u32, sqlx::Error> {
        let passes: Option<i64> = sqlx::query_scalar(
            "UPDATE payment_attempts SET lease_until_ms = 0, \
             next_recovery_at_ms = COALESCE($1, next_recovery_at_ms), \
             recovery_passes = recovery_passes + $2, last_pg_answer = COALESCE($3, last_pg_answer) \
             WHERE order_id = $4 AND lease_owner = $5 RETURNING recovery_passes",
        )
        .bind(next_at_ms)
        .bind(i64::from(answered))
        .bind(last_pg_answer)
        .bind(order_id)
        .bind(worker)
        .fetch_optional(&self.writer)
        .await?;
        // Not ours any more (taken over after our lease lapsed): nothing to release.
        Ok(passes.map_or(0, |passes| u32::try_from(passes).unwrap_or(u32::MAX)))
    }

    /// Moves a PENDING attempt whose confirm task is gone to UNKNOWN, keeping the
    /// lease of the worker that found it. Says whether it moved.
    pub async fn mark_pending_unknown(&self, order_id: &str, reason: &str) -> Result<bool, sqlx::Error> {
        let mut transaction = self.writer.begin().await?;
        let result = sqlx::query(
            "UPDATE payment_attempts SET status = 'UNKNOWN', unknown_reason = $1, updated_at_ms = $2 \
             WHERE order_id = $3 AND status = 'PENDING'",
        )
        .bind(reason)
        .bind(now_ms())
        .bind(order_id)
        .execute(&mut *transaction)
        .await?;
        if result.rows_affected() != 1 {
            return Ok(false);
        }
        let change = Change {
            order_id,
            actor: Actor::Recovery,
            from: OrderStatus::Pending,
            to: OrderStatus::Unknown,
            code: None,
            detail: Some(reason),
        };
        self.record_change(&mut transaction, change).await?;
        transaction.commit().await?;
        self.changes.notify(order_id);
        Ok(true)
    }

    /// How many attempts are still waiting for an outcome.
    pub async fn count_unsettled(&self) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT COUNT(*) FROM payment_attempts WHERE status IN ('PENDING', 'UNKNOWN')")
            .fetch_one(&self.pool)
            .await
    }

    /// When the oldest attempt still waiting for an outcome was made.
    pub async fn oldest_unsettled_ms(&self) -> Result<Option<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT MIN(created_at_ms) FROM payment_attempts WHERE status IN ('PENDING', 'UNKNOWN')")
            .fetch_one(&self.pool)
            .await
    }
}
