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
//!    of these can charge twice.
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

use super::pass::{Pass, Recovered, look_up, send_under_lease};
use super::settle;
use crate::app::App;
use crate::db::{Actor, Attempt, JobKind, Lease, PgCaller};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{
    Expected, PgAnswer, PgConfirm, confirm_answer, describe, failure_of, resend_verdict, status_answer, status_verdict,
};
use crate::settlement::{ConfirmVerdict, PaymentStep, StatusVerdict, Transition, after_lookup, after_resend};

/// One pass over a payment whose lease the engine took for this worker.
pub(super) async fn pass(app: &App, order_id: &str) -> Result<Pass, AppError> {
    let Some(attempt) = app.db.sent_attempt_for_order(order_id).await? else { return Ok(Pass::not_ours()) };
    if attempt.status == OrderStatus::Pending {
        // Its confirm task is gone (its lease lapsed): from here on the outcome is unknown.
        // The worker keeps its lease: it goes on to ask the PG.
        let transition = Transition::Unknown("left pending by a confirm that did not finish (server stopped)".into());
        let (pending, actor) = (OrderStatus::Pending, Actor::Recovery);
        if let Some(moved) = app.db.transition(&attempt.order_id, pending, &transition, Lease::Keep, actor).await? {
            settle::log_transition(&attempt.order_id, &attempt.idempotency_key, moved, &transition);
        }
    }
    let (recovered, last_answer) = recover_claimed(app, &attempt).await?;
    Ok(Pass { recovered, last_answer, passes_before: attempt.recovery_passes })
}

/// The steps of one pass over a claimed attempt. Returns what it came to and
/// the PG's last answer, for operators.
async fn recover_claimed(app: &App, attempt: &Attempt) -> Result<(Recovered, Option<String>), AppError> {
    let expected = Expected { payment_key: &attempt.payment_key, order_id: &attempt.order_id, amount: attempt.amount };
    let usable = |answer: &PgAnswer| {
        let verdict = status_verdict(status_answer(answer, expected));
        metrics::recovery_call("lookup", status_label(verdict));
        tracing::debug!(
            order_id = attempt.order_id,
            answer = describe(answer),
            ?verdict,
            "recovery looked the payment up"
        );
        verdict != StatusVerdict::Retry
    };
    let ids = (attempt.order_id.as_str(), attempt.payment_key.as_str());
    let looked_up = look_up(app, JobKind::Payment, &attempt.order_id, ids, PgCaller::Recovery, usable).await?;
    let answer = match looked_up.answer() {
        Ok(answer) => answer,
        Err(ended) => return Ok(ended),
    };
    let described = Some(describe(&answer));
    match after_lookup(status_verdict(status_answer(&answer, expected)), || failure_of(&answer)) {
        PaymentStep::Settle(transition) => {
            settle_from_recovery(app, attempt, transition).await.map(|recovered| (recovered, described))
        }
        PaymentStep::Resend => resend(app, attempt, expected).await,
        PaymentStep::LookAgainLater => Ok((Recovered::Unsettled, described)),
    }
}

/// Resends the confirm with the attempt's own key, once, after a lookup showed
/// the payment unconfirmed.
async fn resend(app: &App, attempt: &Attempt, expected: Expected<'_>) -> Result<(Recovered, Option<String>), AppError> {
    let call = PgConfirm {
        payment_key: &attempt.payment_key,
        order_id: &attempt.order_id,
        amount: attempt.amount,
        idempotency_key: &attempt.idempotency_key,
    };
    let sent = send_under_lease(app, JobKind::Payment, &attempt.order_id, |place| async move {
        Ok(app.pg.confirm(place, call, PgCaller::Recovery).await)
    });
    let answer = match sent.await? {
        Ok(answer) => answer,
        Err(not_sent) => return Ok(not_sent),
    };
    let verdict = resend_verdict(confirm_answer(&answer, expected));
    metrics::recovery_call("resend", verdict_label(verdict));
    tracing::info!(order_id = attempt.order_id, answer = describe(&answer), ?verdict, "recovery resent the confirm");
    let described = Some(describe(&answer));
    match after_resend(verdict, || failure_of(&answer)) {
        PaymentStep::Settle(transition) => {
            settle_from_recovery(app, attempt, transition).await.map(|recovered| (recovered, described))
        }
        // The rules never resend twice in a pass: the next lookup decides.
        PaymentStep::Resend | PaymentStep::LookAgainLater => {
            let recovered = if answer.shows_pg_unavailable() { Recovered::Unavailable } else { Recovered::Unsettled };
            Ok((recovered, described))
        }
    }
}

async fn settle_from_recovery(app: &App, attempt: &Attempt, transition: Transition) -> Result<Recovered, AppError> {
    let from = [OrderStatus::Pending, OrderStatus::Unknown];
    let applied =
        settle::apply(app, Actor::Recovery, &attempt.order_id, &attempt.idempotency_key, &from, transition).await?;
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
        StatusVerdict::Nothing => "nothing",
        StatusVerdict::Retry => "unavailable",
    }
}
