//! Refunds: one row per refund asked for, stored with the order's move to
//! CANCEL_REQUESTED before the PG is called, settled by the PG's answer (or by
//! recovery's lookup) in one transaction with the order's status and history.
//! An operator's request is written to the audit log in the same transaction.

use payonce_api::{OrderStatus, Pg};
use sqlx::{AnyConnection, FromRow};

use super::history::Actor;
use super::status::{Lease, Writer};
use super::{Db, now_ms};
use payonce_rules::settlement::{Moved, Transition};

/// Who asked for a refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestedBy {
    Customer,
    Operator,
}

impl RequestedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestedBy::Customer => "customer",
            RequestedBy::Operator => "operator",
        }
    }

    fn actor(self) -> Actor {
        match self {
            RequestedBy::Customer => Actor::Customer,
            RequestedBy::Operator => Actor::Operator,
        }
    }
}

/// Where a refund stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundStatus {
    /// Stored; the PG has not (knowingly) refunded it yet.
    Requested,
    /// The PG refunded it.
    Done,
    /// The PG refused it; the order went back to where it was.
    Failed,
}

impl RefundStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Requested => "REQUESTED",
            RefundStatus::Done => "DONE",
            RefundStatus::Failed => "FAILED",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [RefundStatus::Requested, RefundStatus::Done, RefundStatus::Failed].into_iter().find(|s| s.as_str() == text)
    }
}

/// A stored refund, with the payment it refunds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    pub refund_id: String,
    pub order_id: String,
    /// The PG the order was paid through, and its payment there.
    pub pg: Pg,
    pub payment_key: String,
    /// The key every send of this refund to the PG carries.
    pub pg_idempotency_key: String,
    pub amount: u64,
    /// What was left of the payment before this refund.
    pub balance_before: u64,
    /// Sent without `cancelAmount`: everything that is left.
    pub full_cancel: bool,
    pub reason: String,
    pub previous_status: OrderStatus,
    pub status: RefundStatus,
    pub failure_code: Option<String>,
    pub calls: u32,
    pub recovery_passes: u32,
}

impl Refund {
    /// What the PG's balance is once this refund is done.
    pub fn balance_after(&self) -> u64 {
        self.balance_before - self.amount
    }
}

/// A refund about to be stored, before anything is sent.
#[derive(Debug, Clone)]
pub struct NewRefund<'a> {
    pub refund_id: &'a str,
    pub order_id: &'a str,
    pub request_key: &'a str,
    pub pg_idempotency_key: &'a str,
    pub amount: u64,
    pub balance_before: u64,
    pub full_cancel: bool,
    pub reason: &'a str,
    pub requested_by: RequestedBy,
    /// PAID or PARTIALLY_REFUNDED: where the order is, and goes back to if the PG refuses.
    pub previous_status: OrderStatus,
    /// The request's own call holds the refund until then; recovery waits for it.
    pub lease_until_ms: i64,
    pub lease_owner: &'a str,
    /// The operator's action for the audit log (an operator's request only).
    pub audit: Option<AuditEntry<'a>>,
}

/// One line of the audit log.
#[derive(Debug, Clone, Copy)]
pub struct AuditEntry<'a> {
    pub operator: &'a str,
    pub action: &'a str,
    pub detail: &'a str,
}

/// A stored line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct AuditLine {
    pub at_ms: i64,
    pub operator: String,
    pub action: String,
    pub order_id: Option<String>,
    pub detail: Option<String>,
}

/// What storing a refund came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// Stored, and the order moved to CANCEL_REQUESTED.
    Stored,
    /// This request key already has a refund for the order (a double click).
    SameRequest(Refund),
    /// The order is no longer where the refund expected it: nothing was stored.
    OrderMoved,
}

/// How the PG settled a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundOutcome {
    /// Refunded: the payment's refunded total is now `refunded_total`.
    Done { refunded_total: u64 },
    /// Refused with this code: nothing refunded, the order goes back.
    Refused { code: String },
}

#[derive(Debug, FromRow)]
struct RefundRow {
    refund_id: String,
    order_id: String,
    pg: Option<String>,
    payment_key: Option<String>,
    pg_idempotency_key: String,
    amount: i64,
    balance_before: i64,
    full_cancel: i64,
    reason: String,
    previous_status: String,
    status: String,
    failure_code: Option<String>,
    calls: i64,
    recovery_passes: i64,
}

const SELECT_REFUND: &str = "SELECT r.refund_id, r.order_id, a.pg, a.payment_key, r.pg_idempotency_key, r.amount, \
     r.balance_before, r.full_cancel, r.reason, r.previous_status, r.status, r.failure_code, r.calls, \
     r.recovery_passes FROM refunds r JOIN payment_attempts a ON a.order_id = r.order_id";

impl TryFrom<RefundRow> for Refund {
    type Error = sqlx::Error;

    fn try_from(row: RefundRow) -> Result<Self, Self::Error> {
        let decode = |what: String| sqlx::Error::Decode(what.into());
        let number = |value: i64| u64::try_from(value).map_err(|error| sqlx::Error::Decode(Box::new(error)));
        Ok(Refund {
            pg: row
                .pg
                .as_deref()
                .and_then(Pg::parse)
                .ok_or_else(|| decode(format!("refund {} has no PG", row.refund_id)))?,
            payment_key: row.payment_key.ok_or_else(|| decode(format!("refund {} has no payment", row.refund_id)))?,
            previous_status: OrderStatus::parse(&row.previous_status)
                .ok_or_else(|| decode(format!("unknown status {:?}", row.previous_status)))?,
            status: RefundStatus::parse(&row.status)
                .ok_or_else(|| decode(format!("unknown refund status {:?}", row.status)))?,
            amount: number(row.amount)?,
            balance_before: number(row.balance_before)?,
            full_cancel: row.full_cancel != 0,
            calls: u32::try_from(row.calls).unwrap_or(u32::MAX),
            recovery_passes: u32::try_from(row.recovery_passes).unwrap_or(u32::MAX),
            refund_id: row.refund_id,
            order_id: row.order_id,
            pg_idempotency_key: row.pg_idempotency_key,
            reason: row.reason,
            failure_code: row.failure_code,
        })
    }
}

fn encode(amount: u64) -> Result<i64, sqlx::Error> {
    i64::try_from(amount).map_err(|error| sqlx::Error::Encode(Box::new(error)))
}

impl Db {
    /// The refund this request key asked for on this order, if any.
    pub async fn refund_by_request(&self, order_id: &str, request_key: &str) -> Result<Option<Refund>, sqlx::Error> {
        let query = format!("{SELECT_REFUND} WHERE r.order_id = $1 AND r.request_key = $2");
        let row: Option<RefundRow> =
            sqlx::query_as(&query).bind(order_id).bind(request_key).fetch_optional(&self.pool).await?;
        row.map(Refund::try_from).transpose()
    }

    pub async fn refund(&self, refund_id: &str) -> Result<Option<Refund>, sqlx::Error> {
        let query = format!("{SELECT_REFUND} WHERE r.refund_id = $1");
        let row: Option<RefundRow> = sqlx::query_as(&query).bind(refund_id).fetch_optional(&self.pool).await?;
        row.map(Refund::try_from).transpose()
    }

    /// Every refund of the order, oldest first.
    pub async fn refunds(&self, order_id: &str) -> Result<Vec<Refund>, sqlx::Error> {
        let query = format!("{SELECT_REFUND} WHERE r.order_id = $1 ORDER BY r.created_at_ms, r.refund_id");
        let rows: Vec<RefundRow> = sqlx::query_as(&query).bind(order_id).fetch_all(&self.pool).await?;
        rows.into_iter().map(Refund::try_from).collect()
    }

    /// When the order was first paid (its first move to PAID), if it was.
    pub async fn paid_at_ms(&self, order_id: &str) -> Result<Option<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT MIN(at_ms) FROM payment_events WHERE order_id = $1 AND to_status = 'PAID'")
            .bind(order_id)
            .fetch_one(&self.pool)
            .await
    }

    /// Stores the refund and moves the order from its paid status to
    /// CANCEL_REQUESTED, with its history line (and the audit line), in one
    /// transaction. The unique request key decides a double click, and the
    /// order's status a race between two refunds, so no lock is needed.
    pub async fn store_refund(&self, refund: &NewRefund<'_>) -> Result<Stored, sqlx::Error> {
        let now = now_ms();
        let mut transaction = self.writer.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO refunds (refund_id, order_id, request_key, pg_idempotency_key, amount, balance_before, \
             full_cancel, reason, requested_by, previous_status, status, lease_until_ms, lease_owner, \
             created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'REQUESTED', $11, $12, $13, $14) \
             ON CONFLICT DO NOTHING",
        )
        .bind(refund.refund_id)
        .bind(refund.order_id)
        .bind(refund.request_key)
        .bind(refund.pg_idempotency_key)
        .bind(encode(refund.amount)?)
        .bind(encode(refund.balance_before)?)
        .bind(i64::from(refund.full_cancel))
        .bind(refund.reason)
        .bind(refund.requested_by.as_str())
        .bind(refund.previous_status.as_str())
        .bind(refund.lease_until_ms)
        .bind(refund.lease_owner)
        .bind(now)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        if inserted.rows_affected() != 1 {
            // The request key's refund, or another refund of the order being sent.
            drop(transaction);
            return match self.refund_by_request(refund.order_id, refund.request_key).await? {
                Some(existing) => Ok(Stored::SameRequest(existing)),
                None => Ok(Stored::OrderMoved),
            };
        }
        let detail = format!("refund {} of {} KRW: {}", refund.refund_id, refund.amount, refund.reason);
        let transition = Transition::CancelRequested { balance_before: refund.balance_before };
        let actor = refund.requested_by.actor();
        let from = refund.previous_status;
        let moved = self
            .write_status(
                &mut transaction,
                refund.order_id,
                from,
                &transition,
                Lease::Keep,
                Writer::without_lease(actor),
                Some(&detail),
            )
            .await?;
        if moved.is_none() {
            return Ok(Stored::OrderMoved);
        }
        if let Some(audit) = refund.audit {
            sqlx::query(
                "INSERT INTO audit_log (at_ms, operator, action, order_id, detail) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(now)
            .bind(audit.operator)
            .bind(audit.action)
            .bind(refund.order_id)
            .bind(audit.detail)
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        self.changes.notify(refund.order_id);
        Ok(Stored::Stored)
    }

    /// Settles a requested refund as the PG answered, and moves its order out of
    /// CANCEL_REQUESTED: to CANCELED or PARTIALLY_REFUNDED when refunded, back to
    /// where it was when refused. Says whether it did: not if someone settled
    /// it first, so a refund is settled once; and, `held_by` a lease holder,
    /// not unless it still holds the refund's lease. A refusal is stored only
    /// so: a cancel's refusal proves nothing was refunded only while no other
    /// send of the refund went out, which only a takeover of the lease does.
    pub async fn settle_refund(
        &self,
        refund: &Refund,
        outcome: &RefundOutcome,
        last_pg_answer: &str,
        (actor, held_by): (Actor, Option<&str>),
    ) -> Result<Option<OrderStatus>, sqlx::Error> {
        // In the ordered writes (`Db::write`), as every status change is: the
        // cancel's PG call, queued when the PG answered, is then committed with
        // this change or before it, never after a reader could see the refund.
        let db = self.clone();
        let (refund_row, outcome, answer) = (refund.clone(), outcome.clone(), last_pg_answer.to_owned());
        let held_by = held_by.map(str::to_owned);
        let settled = self
            .write(Box::new(move |transaction| {
                let (db, refund, outcome, answer) = (db.clone(), refund_row.clone(), outcome.clone(), answer.clone());
                let held_by = held_by.clone();
                Box::pin(async move {
                    db.settle_refund_in(transaction, &refund, &outcome, &answer, (actor, held_by.as_deref())).await
                })
            }))
            .await?;
        if settled.is_some() {
            self.changes.notify(&refund.order_id);
        }
        Ok(settled)
    }

    /// `settle_refund`'s writes, in `transaction`.
    async fn settle_refund_in(
        &self,
        transaction: &mut AnyConnection,
        refund: &Refund,
        outcome: &RefundOutcome,
        last_pg_answer: &str,
        (actor, held_by): (Actor, Option<&str>),
    ) -> Result<Option<OrderStatus>, sqlx::Error> {
        let now = now_ms();
        let (status, failure_code) = match outcome {
            RefundOutcome::Done { .. } => (RefundStatus::Done, None),
            RefundOutcome::Refused { code } => (RefundStatus::Failed, Some(code.as_str())),
        };
        const SETTLE: &str = "UPDATE refunds SET status = $1, failure_code = $2, last_pg_answer = $3, \
                              lease_until_ms = 0, updated_at_ms = $4 WHERE refund_id = $5 AND status = 'REQUESTED'";
        let guarded = format!("{SETTLE} AND lease_owner = $6");
        let sql = if held_by.is_some() { guarded.as_str() } else { SETTLE };
        let mut query = sqlx::query(sql)
            .bind(status.as_str())
            .bind(failure_code)
            .bind(last_pg_answer)
            .bind(now)
            .bind(&refund.refund_id);
        if let Some(holder) = held_by {
            query = query.bind(holder);
        }
        let settled = query.execute(&mut *transaction).await?;
        if settled.rows_affected() != 1 {
            return Ok(None);
        }
        // Refunded: CANCELED once nothing is left, else PARTIALLY_REFUNDED.
        // Refused: back to where the order was.
        let transition = match outcome {
            RefundOutcome::Done { refunded_total } => Transition::RefundSettled { refunded_total: *refunded_total },
            RefundOutcome::Refused { code } => {
                Transition::RefundRefused { back_to: refund.previous_status, code: code.clone() }
            }
        };
        let order_id = &refund.order_id;
        let from = OrderStatus::CancelRequested;
        let moved = self
            .write_status(
                transaction,
                order_id,
                from,
                &transition,
                Lease::Keep,
                Writer::without_lease(actor),
                Some(last_pg_answer),
            )
            .await?;
        let Some(Moved { to, .. }) = moved else {
            return Err(sqlx::Error::Protocol(format!(
                "refund {} was requested but its order {} is not CANCEL_REQUESTED",
                refund.refund_id, refund.order_id
            )));
        };
        Ok(Some(to))
    }

    /// Counts a cancel request about to go to the PG.
    pub async fn count_refund_call(&self, refund_id: &str) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE refunds SET calls = calls + 1 WHERE refund_id = $1")
            .bind(refund_id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// Gives the refund a new PG idempotency key: for when the PG processed a
    /// send, refunded nothing, and will replay that answer for the old key.
    pub async fn replace_refund_key(&self, refund_id: &str, worker: &str, new_key: &str) -> Result<bool, sqlx::Error> {
        let result = sqlx::query(
            "UPDATE refunds SET pg_idempotency_key = $1 WHERE refund_id = $2 AND lease_owner = $3 \
             AND status = 'REQUESTED'",
        )
        .bind(new_key)
        .bind(refund_id)
        .bind(worker)
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// The audit log of an order, oldest first.
    pub async fn audit_log(&self, order_id: &str) -> Result<Vec<AuditLine>, sqlx::Error> {
        sqlx::query_as(
            "SELECT at_ms, operator, action, order_id, detail FROM audit_log WHERE order_id = $1 ORDER BY id",
        )
        .bind(order_id)
        .fetch_all(&self.pool)
        .await
    }
}
