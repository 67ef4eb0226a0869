//! The one writer of an order's status. Every change of `payment_attempts.status`
//! after the attempt is first stored goes through [`Db::write_status`]: the new
//! status computed by `settlement` from the status it leaves, one guard, one
//! `updated_at_ms`, one history line, one announcement.

use payonce_api::OrderStatus;
use sqlx::AnyConnection;

use super::history::{Actor, Change};
use super::{Db, now_ms};
use payonce_rules::settlement::{Moved, Transition};

/// What a status write does to the attempt's recovery lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// Left as it is: its holder goes on (a worker that found a PENDING
    /// attempt unknown), or no worker holds it (refunds keep their own).
    Keep,
    /// Ended, and recovery looks again at `next_attempt_at_ms` (for a status
    /// that is still unsettled).
    Release { next_attempt_at_ms: i64 },
}

/// Who writes a status: the actor, and the lease it holds on the attempt, if
/// any. A transition that needs the lease (`Transition::needs_lease`) is
/// stored only by the lease's current holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writer<'a> {
    pub actor: Actor,
    pub holder: Option<&'a str>,
}

impl<'a> Writer<'a> {
    /// A writer holding no lease of the attempt (refunds hold their own).
    pub fn without_lease(actor: Actor) -> Self {
        Writer { actor, holder: None }
    }

    /// The holder of the attempt's lease `holder`.
    pub fn holding(actor: Actor, holder: &'a str) -> Self {
        Writer { actor, holder: Some(holder) }
    }
}

impl Db {
    /// Moves the order's attempt from `from` as `transition` says, in
    /// `transaction`, and returns where it went: `None` when the attempt is no
    /// longer `from` (someone moved it first), or the lifecycle refuses the
    /// move, or the transition needs the lease and `writer` does not hold it.
    /// The caller commits, then calls `announced` (see below).
    #[expect(
        clippy::too_many_arguments,
        reason = "the move, its two guards and its audit detail, each named where the three callers pass them"
    )]
    pub(super) async fn write_status(
        &self,
        transaction: &mut AnyConnection,
        order_id: &str,
        from: OrderStatus,
        transition: &Transition,
        lease: Lease,
        writer: Writer<'_>,
        detail: Option<&str>,
    ) -> Result<Option<Moved>, sqlx::Error> {
        let holder = match (transition.needs_lease(), writer.holder) {
            (false, _) => None,
            (true, Some(holder)) => Some(holder),
            (true, None) => return Ok(None),
        };
        let found: Option<(i64, i64)> =
            sqlx::query_as("SELECT amount, refunded_amount FROM payment_attempts WHERE order_id = $1 AND status = $2")
                .bind(order_id)
                .bind(from.as_str())
                .fetch_optional(&mut *transaction)
                .await?;
        let Some((amount, refunded)) = found else { return Ok(None) };
        let decode = |value: i64| u64::try_from(value).map_err(|error| sqlx::Error::Decode(Box::new(error)));
        let Some(moved) = transition.from(from, decode(amount)?, decode(refunded)?) else { return Ok(None) };
        let (release, next_attempt_at_ms) = match lease {
            Lease::Keep => (0, 0),
            Lease::Release { next_attempt_at_ms } => (1, next_attempt_at_ms),
        };
        let written = sqlx::query(
            "UPDATE payment_attempts SET status = $1, refunded_amount = $2, failure_code = $3, \
             failure_message = $4, unknown_reason = $5, updated_at_ms = $6, \
             lease_until_ms = CASE WHEN $7 = 1 THEN 0 ELSE lease_until_ms END, \
             next_attempt_at_ms = CASE WHEN $7 = 1 AND pg_hinted = 1 THEN 0 WHEN $7 = 1 THEN $8 \
             ELSE next_attempt_at_ms END \
             WHERE order_id = $9 AND status = $10 AND refunded_amount = $11 \
             AND ($12 = 0 OR lease_owner = $13)",
        )
        .bind(moved.to.as_str())
        .bind(i64::try_from(moved.refunded).map_err(|error| sqlx::Error::Encode(Box::new(error)))?)
        .bind(transition.failure().map(|failure| failure.code.as_str()))
        .bind(transition.failure().map(|failure| failure.message.as_str()))
        .bind(transition.unknown_reason())
        .bind(now_ms())
        .bind(release)
        .bind(next_attempt_at_ms)
        .bind(order_id)
        .bind(from.as_str())
        .bind(refunded)
        .bind(i64::from(holder.is_some()))
        .bind(holder.unwrap_or_default())
        .execute(&mut *transaction)
        .await?;
        if written.rows_affected() != 1 {
            return Ok(None);
        }
        let change = Change {
            order_id,
            actor: writer.actor,
            from,
            to: moved.to,
            code: transition.code(),
            detail: detail.or(transition.unknown_reason()),
            amount: decode(amount)?,
            refunded_before: decode(refunded)?,
            refunded_after: moved.refunded,
        };
        self.record_change(transaction, change).await?;
        Ok(Some(moved))
    }

    /// Moves the order's attempt in a write of its own (see `write_status` and
    /// `Db::write`), and wakes the checks waiting on it once committed.
    pub async fn transition(
        &self,
        order_id: &str,
        from: OrderStatus,
        transition: &Transition,
        lease: Lease,
        writer: Writer<'_>,
    ) -> Result<Option<Moved>, sqlx::Error> {
        let db = self.clone();
        let (order, transition, actor) = (order_id.to_owned(), transition.clone(), writer.actor);
        let holder = writer.holder.map(str::to_owned);
        let moved = self
            .write(Box::new(move |transaction| {
                let (db, order, transition, holder) = (db.clone(), order.clone(), transition.clone(), holder.clone());
                Box::pin(async move {
                    let writer = Writer { actor, holder: holder.as_deref() };
                    db.write_status(transaction, &order, from, &transition, lease, writer, None).await
                })
            }))
            .await?;
        if moved.is_some() {
            self.changes.notify(order_id);
        }
        Ok(moved)
    }
}
