//! Refunding a charge: validate, store the refund (and move the order to
//! CANCEL_REQUESTED) before anything is sent, then send the cancel in a task
//! that outlives the request, and store what the PG answered. A refund whose
//! outcome is left unknown is recovery's (`refund_recovery`): it must go out.

use payonce_api::{Order, OrderStatus, Pg};
use payonce_rules::pg_reply::PgReply;

use crate::app::App;
use crate::customer::Customer;
use crate::db::{Actor, AuditEntry, JobKind, NewRefund, PgCaller, Refund, RefundOutcome, RequestedBy, Stored, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::PgPlace;
use crate::pg::adapters::{Canceled, PaymentAt, Sent};
use crate::resilience::lease;
use payonce_rules::settlement::{RefundStep, after_cancel};

/// The reason the PG is given for a customer's own cancel.
const CUSTOMER_REASON: &str = "cancelled by the customer";
/// The longest reason an operator may give (the PG's own limit).
const REASON_MAX_CHARS: usize = 200;

/// The customer cancels their own paid order in full, within the cancel window.
/// Returns the order as stored: refunded, or still CANCEL_REQUESTED when the PG
/// has not answered yet. The same request key answers with the same refund.
pub async fn cancel_for_customer(
    app: &App,
    customer: &Customer,
    order_id: &str,
    request_key: &str,
) -> Result<Order, AppError> {
    let order = app.db.customer_order(&customer.0, order_id).await?.ok_or(AppError::OrderNotFound)?;
    if app.db.refund_by_request(order_id, request_key).await?.is_some() {
        return Ok(order);
    }
    let order = refundable(order, RequestedBy::Customer)?;
    let window = app.config.cancel_window;
    let paid_at = app.db.paid_at_ms(order_id).await?.unwrap_or_else(now_ms);
    if now_ms() - paid_at > lease::millis(window) {
        return Err(AppError::CancelWindowPassed { window: humantime::format_duration(window).to_string() });
    }
    let ask = Ask {
        order_id: order_id.to_owned(),
        order_amount: order.amount,
        request_key: request_key.to_owned(),
        // A PAID order has had nothing refunded: a refund in part leaves it PARTIALLY_REFUNDED.
        amount: order.amount,
        balance_before: order.amount,
        reason: CUSTOMER_REASON.to_owned(),
        requested_by: RequestedBy::Customer,
        previous_status: order.status,
        operator: None,
    };
    run_detached(app, ask).await
}

/// An operator refunds `amount` of what is left of a paid order (all of it
/// without one), at any time. The refund and the audit line are stored together.
pub async fn cancel_for_operator(
    app: &App,
    operator: &str,
    order_id: &str,
    request_key: &str,
    amount: Option<u64>,
    reason: &str,
) -> Result<Order, AppError> {
    let reason = reason.trim();
    if reason.is_empty() || reason.chars().count() > REASON_MAX_CHARS {
        return Err(AppError::InvalidRequest { message: format!("reason must be 1 to {REASON_MAX_CHARS} characters") });
    }
    let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
    if app.db.refund_by_request(order_id, request_key).await?.is_some() {
        return Ok(order);
    }
    let order = refundable(order, RequestedBy::Operator)?;
    let balance = order.amount - order.refunded_amount;
    let amount = amount.unwrap_or(balance);
    if amount == 0 || amount > balance {
        return Err(AppError::InvalidCancelAmount(format!(
            "the amount must be from 1 to what is left of the payment, {balance} KRW; it was {amount}"
        )));
    }
    if amount < balance && refunded_only_in_full(app, &order).await? {
        return Err(AppError::PartialRefundNotAllowed { order: Box::new(order) });
    }
    let ask = Ask {
        order_id: order_id.to_owned(),
        order_amount: order.amount,
        request_key: request_key.to_owned(),
        amount,
        balance_before: balance,
        reason: reason.to_owned(),
        requested_by: RequestedBy::Operator,
        previous_status: order.status,
        operator: Some(operator.to_owned()),
    };
    run_detached(app, ask).await
}

/// The order, if `by` may refund it as it stands; why not, if not. A
/// customer cancels a whole paid order; an operator also refunds what is left
/// of one refunded in part (the customer's cancel does not finish what an
/// operator began).
fn refundable(order: Order, by: RequestedBy) -> Result<Order, AppError> {
    let order = Box::new(order);
    match order.status {
        OrderStatus::Paid => Ok(*order),
        OrderStatus::PartiallyRefunded if by == RequestedBy::Operator => Ok(*order),
        OrderStatus::Canceled | OrderStatus::PartiallyRefunded => Err(AppError::OrderAlreadyCanceled { order }),
        OrderStatus::CancelRequested => Err(AppError::CancelInProgress { order }),
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::Failed => {
            Err(AppError::OrderNotPaid { order })
        }
    }
}

/// Whether the PG shows the order's payment as one it refunds only in full
/// (an escrow order, a cash card), looked up before a partial refund is stored,
/// so that the operator hears it at once. A PG that says nothing of it before
/// a cancel, or a lookup that cannot be made now, says nothing: the refund
/// goes out, and the PG's refusal ends it.
async fn refunded_only_in_full(app: &App, order: &Order) -> Result<bool, AppError> {
    let Some(attempt) = app.db.sent_attempt_for_order(&order.order_id).await? else { return Ok(false) };
    let payment = PaymentAt { order_id: &order.order_id, payment_key: &attempt.payment_key, amount: order.amount };
    Ok(app.pgs.of(attempt.pg)?.refunded_only_in_full(payment).await)
}

/// A validated refund, owned so that it can outlive its request.
struct Ask {
    order_id: String,
    /// The order's whole amount (KakaoPay's cancel checks the balance against it).
    order_amount: u64,
    request_key: String,
    amount: u64,
    balance_before: u64,
    reason: String,
    requested_by: RequestedBy,
    previous_status: OrderStatus,
    operator: Option<String>,
}

/// Stores and sends the refund in a task detached from the request: a caller
/// who hangs up leaves either no refund, or one that goes out.
async fn run_detached(app: &App, ask: Ask) -> Result<Order, AppError> {
    let task = app.pg_tasks.spawn(ask.run(app.clone()));
    task.await.map_err(|error| AppError::Internal(format!("refund task failed: {error}")))?
}

impl Ask {
    async fn run(self, app: App) -> Result<Order, AppError> {
        // A refund goes to the PG that charged the order: one the shop no longer
        // takes is refused before anything is stored.
        if let Some(attempt) = app.db.sent_attempt_for_order(&self.order_id).await? {
            app.pgs.of(attempt.pg)?;
        }
        let refund_id = format!("rf_{}", uuid::Uuid::new_v4().simple());
        let pg_key = uuid::Uuid::new_v4().to_string();
        let holder = lease::holder(&app.worker_id);
        let audit_detail = format!("cancel {} KRW of {} left: {}", self.amount, self.balance_before, self.reason);
        let new = NewRefund {
            refund_id: &refund_id,
            order_id: &self.order_id,
            request_key: &self.request_key,
            pg_idempotency_key: &pg_key,
            amount: self.amount,
            balance_before: self.balance_before,
            full_cancel: self.amount == self.balance_before,
            reason: &self.reason,
            requested_by: self.requested_by,
            previous_status: self.previous_status,
            // This task owns the refund until its call could have ended; recovery takes over after that.
            lease_until_ms: now_ms() + lease::millis(lease::for_confirm(&app.config)),
            lease_owner: &holder,
            audit: self.operator.as_deref().map(|operator| AuditEntry {
                operator,
                action: "cancel",
                detail: &audit_detail,
            }),
        };
        match app.db.store_refund(&new).await? {
            Stored::Stored => {}
            Stored::SameRequest(_) => return current(&app, &self.order_id).await,
            Stored::OrderMoved => return Err(moved_error(current(&app, &self.order_id).await?, self.requested_by)),
        }
        metrics::refund_transition("REQUESTED");
        tracing::info!(
            order_id = self.order_id,
            refund_id,
            amount = self.amount,
            requested_by = self.requested_by.as_str(),
            operator = self.operator,
            "refund requested"
        );
        let refund = app.db.refund(&refund_id).await?.ok_or(AppError::OrderNotFound)?;
        let Some(place) = try_place(&app, refund.pg).await? else {
            // Every PG place is taken: recovery, which waits for one, sends it.
            metrics::refund_call(refund.pg, "first", "busy");
            app.db.release_job(JobKind::Refund, &refund.refund_id, &holder, None, false, None).await?;
            app.recovery_wake.notify_one();
            return current(&app, &self.order_id).await;
        };
        app.retry_budget.record_first_call();
        let caller = match self.requested_by {
            RequestedBy::Customer => PgCaller::Customer,
            RequestedBy::Operator => PgCaller::Operator,
        };
        let answer = send(&app, place, (&refund, self.order_amount), caller, Sent::First).await?;
        let settled = settle_by_answer(&app, &refund, &answer, (Actor::Cancel, &holder)).await?;
        metrics::refund_call(refund.pg, "first", settled.label());
        if !settled.is_settled() {
            let next_at = now_ms() + app.timings().first_check_delay_ms();
            let answer = answer.describe();
            app.db
                .release_job(JobKind::Refund, &refund.refund_id, &holder, Some(next_at), false, Some(&answer))
                .await?;
            app.recovery_wake.notify_one();
        }
        current(&app, &self.order_id).await
    }
}

async fn current(app: &App, order_id: &str) -> Result<Order, AppError> {
    app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)
}

/// Why a refund could not be stored: the order moved since it was read. One
/// still refundable as it is now moved under it all the same (another refund
/// went through meanwhile): its balance is no longer the one this refund was for.
fn moved_error(order: Order, by: RequestedBy) -> AppError {
    match refundable(order, by) {
        Err(refused) => refused,
        Ok(order) => AppError::CancelInProgress { order: Box::new(order) },
    }
}

/// A place under the limit of the PG that charged the order, now or never.
async fn try_place(app: &App, pg: Pg) -> Result<Option<PgPlace>, AppError> {
    Ok(app.pgs.of(pg)?.try_place().await?)
}

/// Sends the refund's cancel under `place` (given back once answered) to the
/// PG that charged the order (of `order_amount` in all), as its `send`; the
/// adapter sends what that PG needs (Toss's key, the balance KakaoPay expects
/// before it). The caller holds its lease.
pub(super) async fn send(
    app: &App,
    place: PgPlace,
    (refund, order_amount): (&Refund, u64),
    caller: PgCaller,
    send: Sent,
) -> Result<Canceled, AppError> {
    let adapter = app.pgs.of(refund.pg)?;
    app.db.count_refund_call(&refund.refund_id).await?;
    let answer = adapter.cancel(place, refund, order_amount, caller, send).await;
    tracing::info!(
        order_id = refund.order_id,
        refund_id = refund.refund_id,
        idempotency_key = refund.pg_idempotency_key,
        answer = answer.describe(),
        ?send,
        verdict = ?answer.verdict,
        "cancel sent"
    );
    Ok(answer)
}

/// What settling a refund by an answer came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// Refunded, or refused for good: the refund is settled (by this call or another).
    Done,
    /// Still requested; the next send goes under a new key.
    NewKey,
    /// Still requested; a lookup decides.
    Unknown,
    /// Refused, to a cancel sent again: a lookup made now decides whether an
    /// earlier send refunded it or the refusal ends it.
    RefusedUnlessDone,
}

impl Settled {
    pub(super) fn is_settled(self) -> bool {
        self == Settled::Done
    }

    fn label(self) -> &'static str {
        match self {
            Settled::Done => "settled",
            Settled::NewKey => "new_key",
            Settled::Unknown => "unknown",
            Settled::RefusedUnlessDone => "refused_unless_done",
        }
    }
}

/// Stores what a cancel's answer proves (see each PG's `CANCEL_VERDICTS`),
/// for `actor` holding the refund's lease as `holder` (only the holder gives it
/// a new key).
pub(super) async fn settle_by_answer(
    app: &App,
    refund: &Refund,
    answer: &Canceled,
    (actor, holder): (Actor, &str),
) -> Result<Settled, AppError> {
    match after_cancel(answer.verdict) {
        RefundStep::SettleRefunded => {
            settle_refunded(app, refund, answer.refunded_total, &answer.describe(), actor).await
        }
        RefundStep::SettleRefused => settle_refused(app, refund, answer, &answer.describe(), (actor, holder)).await,
        RefundStep::NewKey => give_new_key(app, refund, holder).await,
        RefundStep::LookUpTheRefusal => Ok(Settled::RefusedUnlessDone),
        RefundStep::Send | RefundStep::LookAgainLater => Ok(Settled::Unknown),
    }
}

/// Gives the refund a new key, as `holder` of its lease (only the holder's
/// change is stored): the PG refunded nothing and replays that answer for the
/// old one, so only a new key goes out.
pub(super) async fn give_new_key(app: &App, refund: &Refund, holder: &str) -> Result<Settled, AppError> {
    let new_key = uuid::Uuid::new_v4().to_string();
    app.db.replace_refund_key(&refund.refund_id, holder, &new_key).await?;
    Ok(Settled::NewKey)
}

/// Settles a refund the PG shows done (in a cancel's answer or a lookup), with
/// how much of the payment it shows refunded in all, and what it said.
pub(super) async fn settle_refunded(
    app: &App,
    refund: &Refund,
    refunded_total: Option<u64>,
    described: &str,
    actor: Actor,
) -> Result<Settled, AppError> {
    let refunded_total =
        refunded_total.ok_or_else(|| AppError::Internal("a refunded answer without a balance".to_owned()))?;
    // A refund shown done is done, whoever reads it.
    settle(app, refund, &RefundOutcome::Done { refunded_total }, described, (actor, None)).await?;
    Ok(Settled::Done)
}

/// Settles a refund refused for good, with the refusing cancel's code and
/// what the PG said last, while `holder` still holds its lease: a refusal
/// read after the lease was taken over may be of a cancel sent before
/// another that went through (KakaoPay, without keys, refuses the older one
/// once the balance moved), and is then the new holder's to decide. Not
/// stored so, the refund is still unknown.
pub(super) async fn settle_refused(
    app: &App,
    refund: &Refund,
    refusal: &Canceled,
    described: &str,
    (actor, holder): (Actor, &str),
) -> Result<Settled, AppError> {
    let outcome = RefundOutcome::Refused { code: refusal.refusal_code.clone() };
    match settle(app, refund, &outcome, described, (actor, Some(holder))).await? {
        true => Ok(Settled::Done),
        // Not this holder's to store (its lease lapsed, or another settled it
        // first): to this caller the refund is as unknown as before the answer.
        false => Ok(Settled::Unknown),
    }
}

/// Stores the outcome (`held_by`: only while that holder holds the lease);
/// says whether this call settled it.
async fn settle(
    app: &App,
    refund: &Refund,
    outcome: &RefundOutcome,
    described: &str,
    held_by: (Actor, Option<&str>),
) -> Result<bool, AppError> {
    let Some(to) = app.db.settle_refund(refund, outcome, described, held_by).await? else { return Ok(false) };
    let (label, code) = match outcome {
        RefundOutcome::Done { .. } => ("DONE", None),
        RefundOutcome::Refused { code } => ("FAILED", Some(code.as_str())),
    };
    metrics::refund_transition(label);
    metrics::order_transition(to);
    tracing::info!(
        order_id = refund.order_id,
        refund_id = refund.refund_id,
        idempotency_key = refund.pg_idempotency_key,
        refund = label,
        to = to.as_str(),
        code,
        answer = described,
        "refund settled"
    );
    if let RefundOutcome::Refused { code } = outcome {
        // Nothing was refunded and the customer was promised a refund: a person decides now.
        metrics::refund_alert();
        tracing::error!(
            order_id = refund.order_id,
            refund_id = refund.refund_id,
            amount = refund.amount,
            code,
            "the PG refused a refund for good: nothing was refunded, an operator must act"
        );
    }
    Ok(true)
}
