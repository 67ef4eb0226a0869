//! Settling payments whose outcome is unknown (the first call timed out, was
//! reset, got a 5xx) and ones a stopped server left pending, by asking the PG
//! what became of them, never by paying again.
//!
//! For each attempt that is due, one pass:
//! 1. takes the attempt's lease, so no other worker acts on it meanwhile;
//! 2. looks the payment up (`GET /v1/payments/{paymentKey}`), retried with
//!    exponential backoff and full jitter while the PG gives no usable answer;
//! 3. settles on what the lookup shows (`STATUS_VERDICTS`), or, when it shows
//!    the payment never confirmed, resends the confirm with the attempt's own
//!    idempotency key, once. The PG then processes it (the first request never
//!    arrived), says it is still processing, or replays the first answer; none
//!    of these can charge twice. Past the PG's session (`AttemptAge`), a
//!    payment never confirmed settles FAILED instead; when the paymentKey
//!    names another order's payment, a lookup by the order's id decides.
//!
//! Refunds whose outcome is unknown are recovered beside them, by the same
//! workers under the same breaker and budget (see `refund_recovery`): unlike a
//! confirm, a refund is sent again until it goes out.
//!
//! Every call asks the shared circuit breaker and the retry budget first. A
//! pass they held back is not a failed pass: only passes in which the PG
//! answered count toward the attempt's backoff and the operator alert, so once
//! the PG answers again everything is settled at the next pass.

use payonce_api::OrderStatus;
use payonce_rules::pg_reply::PgReply;

use super::pass::{Job, Pass, Recovered, left_open_by, look_up, send_under_lease};
use super::settle;
use crate::app::App;
use crate::db::{Actor, Attempt, Lease, PgCaller, Writer, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::adapters::{ConfirmCall, Confirmed, Looked, PaymentAt, PgAdapter, Sent};
use crate::resilience::lease;
use payonce_api::Failure;
use payonce_rules::settlement::{
    AttemptAge, ConfirmVerdict, FailedBecause, Next, PaymentAnswer, PaymentCall, PaymentPass, StatusVerdict, Transition,
};

/// One pass over a payment whose lease the engine took for this pass.
pub(super) async fn pass(app: &App, job: Job<'_>) -> Result<Pass, AppError> {
    let Some(attempt) = app.db.sent_attempt_for_order(job.key).await? else { return Ok(Pass::not_ours()) };
    let adapter = app.pgs.of(attempt.pg).map_err(|_| {
        AppError::Internal(format!(
            "order {} was paid with {:?}, which is no longer configured",
            attempt.order_id, attempt.pg
        ))
    })?;
    if attempt.status == OrderStatus::Pending {
        // Its confirm task is gone (its lease lapsed): from here on the outcome is unknown.
        // The worker keeps its lease: it goes on to ask the PG.
        let transition = Transition::Unknown("left pending by a confirm that did not finish (server stopped)".into());
        let (pending, writer) = (OrderStatus::Pending, Writer::holding(Actor::Recovery, job.holder));
        if let Some(moved) = app.db.transition(&attempt.order_id, pending, &transition, Lease::Keep, writer).await? {
            settle::log_transition(&attempt.order_id, &attempt.idempotency_key, moved, &transition);
        }
    }
    let (recovered, last_answer) = recover_claimed(app, adapter, job, &attempt).await?;
    let mut pass = Pass::came_to(recovered, last_answer, attempt.recovery_passes);
    // At a PG without keys a payment never confirmed settles only once its
    // time is over: look then, not a backoff later.
    let promises = adapter.promises();
    let deadlines = lease::deadlines(&app.config, promises.session_lifetime);
    let margin = lease::margin(&app.config);
    pass.look_again_by_ms = deadlines.look_again_by_ms(attempt.created_at_ms, now_ms(), promises.resending, margin);
    Ok(pass)
}

/// What one call of a pass answered, kept for the failure it may store and
/// the words operators see.
enum Answered {
    Looked(Looked),
    LookedByOrder(Looked),
    Resent(Confirmed),
}

impl Answered {
    /// The answer as the plan reads it.
    fn for_plan(&self) -> PaymentAnswer {
        match self {
            Answered::Looked(looked) => PaymentAnswer::Looked(looked.shown),
            Answered::LookedByOrder(looked) => PaymentAnswer::LookedByOrder(looked.shown.verdict),
            Answered::Resent(confirmed) => PaymentAnswer::Resent(confirmed.verdict),
        }
    }

    /// The failure a FAILED stores, by why: a lookup's by its PG's words, a resend's its own.
    fn failure(&self, adapter: &dyn PgAdapter, why: FailedBecause) -> Failure {
        match self {
            Answered::Looked(looked) | Answered::LookedByOrder(looked) => adapter.failure_because(why, looked),
            Answered::Resent(confirmed) => confirmed.failure.clone(),
        }
    }

    fn described(&self) -> String {
        match self {
            Answered::Looked(looked) | Answered::LookedByOrder(looked) => looked.describe(),
            Answered::Resent(confirmed) => confirmed.describe(),
        }
    }

    /// What a pass the plan ended came to: a usable lookup left it open; a
    /// resend, as `left_open_by` its answer.
    fn ended(&self) -> Recovered {
        match self {
            Answered::Looked(_) | Answered::LookedByOrder(_) => Recovered::Unsettled,
            Answered::Resent(confirmed) => left_open_by(confirmed),
        }
    }
}

/// One pass over a claimed attempt, as the rules plan it (`PaymentPass`):
/// each call it asks for, until it says what to store or ends. Returns what it
/// came to and the PG's last answer, for operators.
async fn recover_claimed(
    app: &App,
    adapter: &dyn PgAdapter,
    job: Job<'_>,
    attempt: &Attempt,
) -> Result<(Recovered, Option<String>), AppError> {
    // Its age when the lookup goes out: only a lookup made past the session
    // (and the longest processing) shows what can no longer be charged.
    let promises = adapter.promises();
    let age = AttemptAge::at(
        attempt.created_at_ms,
        now_ms(),
        lease::deadlines(&app.config, promises.session_lifetime).nothing_charges_after(promises.resending),
    );
    let plan = PaymentPass { age, resending: promises.resending, lookup_by_order: promises.lookup_by_order };
    let mut call = PaymentPass::FIRST;
    loop {
        let answered = match make(app, adapter, job, attempt, call).await? {
            Ok(answered) => answered,
            Err(ended) => return Ok(ended),
        };
        let described = Some(answered.described());
        match plan.next(answered.for_plan(), |why| answered.failure(adapter, why)) {
            Next::Call(next) => call = next,
            Next::Store(transition) => {
                return settle_from_recovery(app, job, attempt, transition)
                    .await
                    .map(|recovered| (recovered, described));
            }
            Next::End => return Ok((answered.ended(), described)),
        }
    }
}

/// Makes one call of the pass: a lookup (retried while the PG gives no usable
/// answer) or the resend, under the attempt's lease. `Err` is what the pass
/// came to when the call could not be made or answered nothing usable.
async fn make(
    app: &App,
    adapter: &dyn PgAdapter,
    job: Job<'_>,
    attempt: &Attempt,
    call: PaymentCall,
) -> Result<Result<Answered, (Recovered, Option<String>)>, AppError> {
    let payment = PaymentAt { order_id: &attempt.order_id, payment_key: &attempt.payment_key, amount: attempt.amount };
    Ok(match call {
        PaymentCall::LookUp => {
            let usable = |looked: &Looked| {
                let verdict = looked.shown.verdict;
                metrics::recovery_call(attempt.pg, "lookup", status_label(verdict));
                tracing::debug!(
                    order_id = attempt.order_id,
                    answer = looked.describe(),
                    ?verdict,
                    "recovery looked the payment up"
                );
                verdict != StatusVerdict::Retry
            };
            let lookup = |place| adapter.look_up(place, payment, PgCaller::Recovery);
            look_up(app, adapter, job, lookup, usable).await?.answer().map(Answered::Looked)
        }
        PaymentCall::LookUpByOrder => {
            let (order_id, amount) = (payment.order_id, payment.amount);
            let usable = |looked: &Looked| looked.shown.verdict != StatusVerdict::Retry;
            let lookup = |place| adapter.look_up_by_order(place, order_id, amount, PgCaller::Recovery);
            let looked = look_up(app, adapter, job, lookup, usable).await?.answer();
            if let Ok(looked) = &looked {
                let verdict = looked.shown.verdict;
                tracing::warn!(
                    order_id,
                    payment_key = attempt.payment_key,
                    ?verdict,
                    "the paymentKey named another order's payment"
                );
            }
            looked.map(Answered::LookedByOrder)
        }
        PaymentCall::Resend => resend(app, adapter, job, attempt).await?.map(Answered::Resent),
    })
}

/// Resends the confirm with the attempt's own key, once, after a lookup showed
/// the payment unconfirmed (the rules ask it only of a PG that takes keys).
async fn resend(
    app: &App,
    adapter: &dyn PgAdapter,
    job: Job<'_>,
    attempt: &Attempt,
) -> Result<Result<Confirmed, (Recovered, Option<String>)>, AppError> {
    let call = ConfirmCall {
        order_id: &attempt.order_id,
        customer_id: None,
        payment_key: &attempt.payment_key,
        token: None,
        amount: attempt.amount,
        idempotency_key: &attempt.pg_idempotency_key,
    };
    let sending = |place| async move { Ok(adapter.confirm(place, call, PgCaller::Recovery, Sent::Again).await) };
    let confirmed = send_under_lease(app, adapter, job, sending).await?;
    if let Ok(confirmed) = &confirmed {
        let verdict = confirmed.verdict;
        metrics::recovery_call(attempt.pg, "resend", verdict_label(verdict));
        tracing::info!(
            order_id = attempt.order_id,
            answer = confirmed.describe(),
            ?verdict,
            "recovery resent the confirm"
        );
    }
    Ok(confirmed)
}

async fn settle_from_recovery(
    app: &App,
    job: Job<'_>,
    attempt: &Attempt,
    transition: Transition,
) -> Result<Recovered, AppError> {
    let from = [OrderStatus::Pending, OrderStatus::Unknown];
    let writer = Writer::holding(Actor::Recovery, job.holder);
    let applied = settle::apply(app, writer, &attempt.order_id, &attempt.idempotency_key, &from, transition).await?;
    Ok(if applied.moved { Recovered::Settled } else { Recovered::NotOurs })
}

fn verdict_label(verdict: ConfirmVerdict) -> &'static str {
    match verdict {
        ConfirmVerdict::Paid => "paid",
        ConfirmVerdict::Failed => "failed",
        ConfirmVerdict::Unreachable | ConfirmVerdict::Unknown | ConfirmVerdict::Nothing => "nothing",
    }
}

fn status_label(verdict: StatusVerdict) -> &'static str {
    match verdict {
        StatusVerdict::Paid => "paid",
        StatusVerdict::Failed => "failed",
        StatusVerdict::Canceled => "canceled",
        StatusVerdict::PartiallyRefunded => "partially_refunded",
        StatusVerdict::NotConfirmed => "not_confirmed",
        StatusVerdict::OtherPayment => "other_payment",
        StatusVerdict::Nothing => "nothing",
        StatusVerdict::Retry => "unavailable",
    }
}
