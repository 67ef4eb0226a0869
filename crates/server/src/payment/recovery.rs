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

use payonce_api::{Failure, OrderStatus, Pg};

use super::kakaopay;
use super::pass::{Job, Pass, Recovered, look_up, send_under_lease};
use super::settle;
use crate::app::App;
use crate::db::{Actor, Attempt, Lease, PgCaller, Writer, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{
    Expected, LookupBy, RESENDING, TossConfirm, TossReply, confirm_answer, customer_message, describe, failure_of,
    order_status_answer, refunded_total, resend_verdict, status_answer, status_verdict,
};
use crate::resilience::lease;
use payonce_rules::settlement::{
    AttemptAge, ConfirmVerdict, FailedBecause, PaymentStep, Shown, StatusVerdict, Transition, after_lookup,
    after_order_lookup, after_resend,
};

/// One pass over a payment whose lease the engine took for this pass.
pub(super) async fn pass(app: &App, job: Job<'_>) -> Result<Pass, AppError> {
    let Some(attempt) = app.db.sent_attempt_for_order(job.key).await? else { return Ok(Pass::not_ours()) };
    if attempt.status == OrderStatus::Pending {
        // Its confirm task is gone (its lease lapsed): from here on the outcome is unknown.
        // The worker keeps its lease: it goes on to ask the PG.
        let transition = Transition::Unknown("left pending by a confirm that did not finish (server stopped)".into());
        let (pending, writer) = (OrderStatus::Pending, Writer::holding(Actor::Recovery, job.holder));
        if let Some(moved) = app.db.transition(&attempt.order_id, pending, &transition, Lease::Keep, writer).await? {
            settle::log_transition(&attempt.order_id, &attempt.idempotency_key, moved, &transition);
        }
    }
    let (recovered, last_answer) = recover_claimed(app, job, &attempt).await?;
    let mut pass = Pass::came_to(recovered, last_answer, attempt.recovery_passes);
    if attempt.pg == Pg::KakaoPay {
        // Unapproved, it settles only once its time is over: look then, not a backoff later.
        pass.look_again_by_ms = kakaopay::session_over_at_ms(app, &attempt).filter(|at| *at > now_ms());
    }
    Ok(pass)
}

/// The steps of one pass over a claimed attempt. Returns what it came to and
/// the PG's last answer, for operators.
async fn recover_claimed(app: &App, job: Job<'_>, attempt: &Attempt) -> Result<(Recovered, Option<String>), AppError> {
    if attempt.pg == Pg::KakaoPay {
        return recover_at_kakaopay(app, job, attempt).await;
    }
    let expected = Expected { payment_key: &attempt.payment_key, order_id: &attempt.order_id, amount: attempt.amount };
    let usable = |answer: &TossReply| {
        let verdict = status_verdict(status_answer(answer, expected));
        metrics::recovery_call(attempt.pg, "lookup", status_label(verdict));
        tracing::debug!(
            order_id = attempt.order_id,
            answer = describe(answer),
            ?verdict,
            "recovery looked the payment up"
        );
        verdict != StatusVerdict::Retry
    };
    // Its age when the lookup goes out: only a lookup made past the session
    // (and the longest processing) shows what can no longer be charged.
    let age = AttemptAge::at(
        attempt.created_at_ms,
        now_ms(),
        lease::deadlines(&app.config, app.config.pg_session_lifetime).nothing_charges_after(RESENDING),
    );
    let ids = (attempt.order_id.as_str(), LookupBy::PaymentKey(&attempt.payment_key));
    let looked_up = look_up(app, job, ids, PgCaller::Recovery, usable).await?;
    let answer = match looked_up.answer() {
        Ok(answer) => answer,
        Err(ended) => return Ok(ended),
    };
    let described = Some(describe(&answer));
    let shown =
        Shown { verdict: status_verdict(status_answer(&answer, expected)), refunded_total: refunded_total(&answer) };
    match after_lookup(shown, age, RESENDING, |why| lookup_failure(why, &answer)) {
        PaymentStep::Settle(transition) => {
            settle_from_recovery(app, job, attempt, transition).await.map(|recovered| (recovered, described))
        }
        PaymentStep::Resend => resend(app, job, attempt, expected).await,
        PaymentStep::LookUpByOrder => look_up_by_order(app, job, attempt).await,
        PaymentStep::LookAgainLater => Ok((Recovered::Unsettled, described)),
    }
}

/// A pass over a KakaoPay attempt: a lookup by its tid, and what it settles.
/// Never an approve: KakaoPay takes no key that would make a second one safe.
async fn recover_at_kakaopay(
    app: &App,
    job: Job<'_>,
    attempt: &Attempt,
) -> Result<(Recovered, Option<String>), AppError> {
    let (step, verdict, described) = match kakaopay::look_up(app, job, attempt).await? {
        Ok(looked_up) => looked_up,
        Err(ended) => return Ok(ended),
    };
    metrics::recovery_call(attempt.pg, "lookup", status_label(verdict));
    match step {
        PaymentStep::Settle(transition) => {
            settle_from_recovery(app, job, attempt, transition).await.map(|recovered| (recovered, Some(described)))
        }
        PaymentStep::Resend | PaymentStep::LookUpByOrder => {
            tracing::error!(order_id = attempt.order_id, ?step, "the rules asked for a call KakaoPay cannot make");
            Ok((Recovered::Unsettled, Some(described)))
        }
        PaymentStep::LookAgainLater => Ok((Recovered::Unsettled, Some(described))),
    }
}

/// The lookup by paymentKey showed another order's payment: look the order up
/// by its id, and settle as that shows.
async fn look_up_by_order(app: &App, job: Job<'_>, attempt: &Attempt) -> Result<(Recovered, Option<String>), AppError> {
    let (order_id, amount) = (attempt.order_id.as_str(), attempt.amount);
    let usable =
        |answer: &TossReply| status_verdict(order_status_answer(answer, order_id, amount)) != StatusVerdict::Retry;
    let looked_up = look_up(app, job, (order_id, LookupBy::OrderId), PgCaller::Recovery, usable).await?;
    let answer = match looked_up.answer() {
        Ok(answer) => answer,
        Err(ended) => return Ok(ended),
    };
    let described = Some(describe(&answer));
    let verdict = status_verdict(order_status_answer(&answer, order_id, amount));
    tracing::warn!(
        order_id,
        payment_key = attempt.payment_key,
        ?verdict,
        "the paymentKey named another order's payment"
    );
    match after_order_lookup(verdict, |why| lookup_failure(why, &answer)) {
        PaymentStep::Settle(transition) => {
            settle_from_recovery(app, job, attempt, transition).await.map(|recovered| (recovered, described))
        }
        PaymentStep::Resend | PaymentStep::LookUpByOrder | PaymentStep::LookAgainLater => {
            Ok((Recovered::Unsettled, described))
        }
    }
}

/// The failure a lookup settles a payment with, by why it failed.
fn lookup_failure(why: FailedBecause, answer: &TossReply) -> Failure {
    let code = match why {
        FailedBecause::PgSaid => return failure_of(answer),
        FailedBecause::SessionOver => "EXPIRED_PAYMENT",
        // The PG has no payment of this order under the key it was confirmed with.
        FailedBecause::KeyOfAnotherOrder => "NOT_FOUND_PAYMENT",
    };
    Failure { code: code.to_owned(), message: customer_message(code, None) }
}

/// Resends the confirm with the attempt's own key, once, after a lookup showed
/// the payment unconfirmed.
async fn resend(
    app: &App,
    job: Job<'_>,
    attempt: &Attempt,
    expected: Expected<'_>,
) -> Result<(Recovered, Option<String>), AppError> {
    let call = TossConfirm {
        payment_key: &attempt.payment_key,
        order_id: &attempt.order_id,
        amount: attempt.amount,
        idempotency_key: &attempt.pg_idempotency_key,
    };
    let sent =
        send_under_lease(app, job, |place| async move { Ok(app.toss.confirm(place, call, PgCaller::Recovery).await) });
    let answer = match sent.await? {
        Ok(answer) => answer,
        Err(not_sent) => return Ok(not_sent),
    };
    let verdict = resend_verdict(confirm_answer(&answer, expected));
    metrics::recovery_call(attempt.pg, "resend", verdict_label(verdict));
    tracing::info!(order_id = attempt.order_id, answer = describe(&answer), ?verdict, "recovery resent the confirm");
    let described = Some(describe(&answer));
    match after_resend(verdict, || failure_of(&answer)) {
        PaymentStep::Settle(transition) => {
            settle_from_recovery(app, job, attempt, transition).await.map(|recovered| (recovered, described))
        }
        // The rules never resend twice in a pass: the next lookup decides.
        PaymentStep::Resend | PaymentStep::LookUpByOrder | PaymentStep::LookAgainLater => {
            let recovered = if answer.shows_pg_unavailable() { Recovered::Unavailable } else { Recovered::Unsettled };
            Ok((recovered, described))
        }
    }
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
