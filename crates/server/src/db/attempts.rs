use payonce_api::{ErrorCode, Failure, OrderStatus, Pg};
use sqlx::{AnyConnection, FromRow};

use super::history::{Actor, Change};
use super::{Db, now_ms};

/// A payment attempt that was sent (or is about to be) to the PG: what was sent,
/// under which key, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub order_id: String,
    /// The browser's key: the key of this shop's API.
    pub idempotency_key: String,
    /// The key the confirm goes to the PG under, made by the server.
    pub pg_idempotency_key: String,
    /// The PG it went to; its payment there is `payment_key` (Toss's
    /// paymentKey, KakaoPay's tid).
    pub pg: Pg,
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
    pub pg_idempotency_key: &'a str,
    pub pg: Pg,
    pub payment_key: &'a str,
    pub amount: u64,
    pub status: OrderStatus,
    pub failure: Option<&'a Failure>,
    /// Until when the confirm task owns it; recovery waits for this to lapse.
    pub lease_until_ms: i64,
    /// The confirm task holding the lease (`resilience::lease::holder`).
    pub lease_owner: &'a str,
    /// The units a PENDING attempt takes of products with a stock: if they
    /// no longer fit, it is stored FAILED `OUT_OF_STOCK` instead.
    pub stock: &'a [super::StockLine],
}

/// A `NewAttempt` that owns its values, to wait for its write (see `Db::write`).
#[derive(Clone)]
struct OwnedAttempt {
    order_id: String,
    idempotency_key: String,
    pg_idempotency_key: String,
    pg: Pg,
    payment_key: String,
    amount: u64,
    status: OrderStatus,
    failure: Option<Failure>,
    lease_until_ms: i64,
    lease_owner: String,
    stock: Vec<super::StockLine>,
}

impl From<&NewAttempt<'_>> for OwnedAttempt {
    fn from(attempt: &NewAttempt<'_>) -> Self {
        Self {
            order_id: attempt.order_id.to_owned(),
            idempotency_key: attempt.idempotency_key.to_owned(),
            pg_idempotency_key: attempt.pg_idempotency_key.to_owned(),
            pg: attempt.pg,
            payment_key: attempt.payment_key.to_owned(),
            amount: attempt.amount,
            status: attempt.status,
            failure: attempt.failure.cloned(),
            lease_until_ms: attempt.lease_until_ms,
            lease_owner: attempt.lease_owner.to_owned(),
            stock: attempt.stock.to_vec(),
        }
    }
}

impl OwnedAttempt {
    fn borrowed(&self) -> NewAttempt<'_> {
        NewAttempt {
            order_id: &self.order_id,
            idempotency_key: &self.idempotency_key,
            pg_idempotency_key: &self.pg_idempotency_key,
            pg: self.pg,
            payment_key: &self.payment_key,
            amount: self.amount,
            status: self.status,
            failure: self.failure.as_ref(),
            lease_until_ms: self.lease_until_ms,
            lease_owner: &self.lease_owner,
            stock: &self.stock,
        }
    }
}

#[derive(Debug, FromRow)]
struct AttemptRow {
    order_id: String,
    idempotency_key: Option<String>,
    pg_idempotency_key: Option<String>,
    pg: String,
    payment_key: Option<String>,
    amount: i64,
    status: String,
    recovery_passes: i64,
    created_at_ms: i64,
    updated_at_ms: i64,
}

const SELECT_ATTEMPT: &str = "SELECT order_id, idempotency_key, pg_idempotency_key, pg, payment_key, amount, status, \
     recovery_passes, created_at_ms, updated_at_ms FROM payment_attempts";

impl TryFrom<AttemptRow> for Attempt {
    type Error = sqlx::Error;

    fn try_from(row: AttemptRow) -> Result<Self, Self::Error> {
        let decode = |error: std::num::TryFromIntError| sqlx::Error::Decode(Box::new(error));
        let (Some(idempotency_key), Some(pg_idempotency_key), Some(payment_key)) =
            (row.idempotency_key, row.pg_idempotency_key, row.payment_key)
        else {
            return Err(sqlx::Error::Decode(
                format!("order {} was closed without a confirm; it has no sent attempt", row.order_id).into(),
            ));
        };
        Ok(Attempt {
            status: OrderStatus::parse(&row.status)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown payment status {:?}", row.status).into()))?,
            pg: Pg::parse(&row.pg).ok_or_else(|| sqlx::Error::Decode(format!("unknown PG {:?}", row.pg).into()))?,
            order_id: row.order_id,
            idempotency_key,
            pg_idempotency_key,
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
    /// On SQLite, in one transaction with the other writes arriving meanwhile (see `group_commit`).
    /// Stores the attempt (see `write_attempt`); answers the status it was
    /// stored with, or `None` when the order or the key already had one.
    pub async fn insert_attempt(&self, attempt: &NewAttempt<'_>) -> Result<Option<OrderStatus>, sqlx::Error> {
        let (db, owned) = (self.clone(), OwnedAttempt::from(attempt));
        let stored = self
            .write(Box::new(move |transaction| {
                let (db, attempt) = (db.clone(), owned.clone());
                Box::pin(async move { db.write_attempt(transaction, &attempt.borrowed()).await })
            }))
            .await?;
        if stored.is_some() {
            self.changes.notify(attempt.order_id);
        }
        Ok(stored)
    }

    /// Inserts the attempt and its history line in `transaction`, unless the
    /// order or the key already has one; a PENDING one whose units of a
    /// product no longer fit its stock is stored FAILED `OUT_OF_STOCK`.
    async fn write_attempt(
        &self,
        transaction: &mut AnyConnection,
        attempt: &NewAttempt<'_>,
    ) -> Result<Option<OrderStatus>, sqlx::Error> {
        let out_of_stock = Failure {
            code: ErrorCode::OutOfStock.as_str().to_owned(),
            message: "Not enough of an item in your order is left, so the payment was not made. \
                      You have not been charged."
                .to_owned(),
        };
        let sold_out = attempt.status == OrderStatus::Pending
            && !attempt.stock.is_empty()
            && !self.stock_fits(transaction, attempt.stock).await?;
        let (status, failure) =
            if sold_out { (OrderStatus::Failed, Some(&out_of_stock)) } else { (attempt.status, attempt.failure) };
        let now = now_ms();
        let result = sqlx::query(
            "INSERT INTO payment_attempts (order_id, idempotency_key, pg_idempotency_key, pg, payment_key, amount, \
             status, failure_code, failure_message, lease_until_ms, lease_owner, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING",
        )
        .bind(attempt.order_id)
        .bind(attempt.idempotency_key)
        .bind(attempt.pg_idempotency_key)
        .bind(attempt.pg.as_str())
        .bind(attempt.payment_key)
        .bind(encode_amount(attempt.amount)?)
        .bind(status.as_str())
        .bind(failure.map(|failure| failure.code.as_str()))
        .bind(failure.map(|failure| failure.message.as_str()))
        .bind(attempt.lease_until_ms)
        .bind(attempt.lease_owner)
        .bind(now)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        if result.rows_affected() != 1 {
            return Ok(None);
        }
        let change = Change {
            order_id: attempt.order_id,
            actor: Actor::Confirm,
            from: OrderStatus::Created,
            to: status,
            code: failure.map(|failure| failure.code.as_str()),
            detail: None,
            amount: attempt.amount,
            refunded_before: 0,
            refunded_after: 0,
        };
        self.record_change(transaction, change).await?;
        Ok(Some(status))
    }

    /// Closes an order that never had a confirm: a FAILED attempt with no keys.
    /// Says whether it did; it does not if the order already has an attempt
    /// (a confirm won the race), which the primary key decides atomically.
    pub async fn close_unconfirmed(
        &self,
        order_id: &str,
        amount: u64,
        failure: &Failure,
        actor: Actor,
    ) -> Result<bool, sqlx::Error> {
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
            actor,
            from: OrderStatus::Created,
            to: OrderStatus::Failed,
            code: Some(&failure.code),
            detail: None,
            amount,
            refunded_before: 0,
            refunded_after: 0,
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
