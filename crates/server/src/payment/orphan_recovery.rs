//! Sending the refund of a charge no order made until it goes out. A
//! reconciliation pass stores it and sends it once; when that send's outcome
//! is unknown, the refund is the job engine's, like any refund: a pass looks
//! the payment up, settles the refund if the PG shows it refunded in full, and
//! otherwise sends the cancel again under the refund's own key (derived from
//! the paymentKey), so the PG refunds it once, whether or not a later
//! reconciliation still lists the charge.

use super::pass::{Job, Pass, Recovered, look_up, send_under_lease};
use crate::app::App;
use crate::db::{OrphanRefund, PgCaller};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{
    Expected, ExpectedRefund, LookupBy, OrphanCancel, TossCancel, TossReply, describe, orphan_cancel, refund_lookup,
    refund_lookup_verdict,
};
use payonce_rules::settlement::{RefundLookupVerdict, RefundStep, after_refund_lookup};

/// One pass over a refund of a charge no order made, whose lease the engine
/// took for this worker.
pub(super) async fn pass(app: &App, job: Job<'_>) -> Result<Pass, AppError> {
    let Some(refund) = app.db.orphan_refund(job.key).await? else { return Ok(Pass::not_ours()) };
    if refund.status != "REQUESTED" {
        return Ok(Pass::not_ours());
    }
    let (recovered, last_answer) = recover_claimed(app, job, &refund).await?;
    let passes_before = u32::try_from(refund.recovery_passes).unwrap_or(u32::MAX);
    Ok(Pass::came_to(recovered, last_answer, passes_before))
}

async fn recover_claimed(
    app: &App,
    job: Job<'_>,
    refund: &OrphanRefund,
) -> Result<(Recovered, Option<String>), AppError> {
    let amount = u64::try_from(refund.amount).unwrap_or_default();
    // Refunded in full: nothing left of the charge.
    let expected = ExpectedRefund {
        payment: Expected { payment_key: &refund.payment_key, order_id: &refund.order_id, amount },
        balance_before: amount,
        balance_after: 0,
    };
    let usable = |answer: &TossReply| {
        let verdict = refund_lookup_verdict(refund_lookup(answer, expected));
        verdict != RefundLookupVerdict::Retry
    };
    // Reconciliation reads Toss's transactions: a charge no order made is Toss's.
    let toss = app.pgs.toss.as_ref();
    let (order_id, by) = (refund.order_id.as_str(), LookupBy::PaymentKey(&refund.payment_key));
    let lookup = |place| toss.gateway().lookup(place, order_id, by, PgCaller::Reconcile);
    let looked_up = look_up(app, toss, job, lookup, usable).await?;
    let answer = match looked_up.answer() {
        Ok(answer) => answer,
        Err(ended) => return Ok(ended),
    };
    let described = describe(&answer);
    match after_refund_lookup(refund_lookup_verdict(refund_lookup(&answer, expected))) {
        RefundStep::SettleRefunded => {
            settle(app, refund, &OrphanCancel::Refunded, &described).await?;
            Ok((Recovered::Settled, Some(described)))
        }
        RefundStep::Send => resend(app, job, refund, amount).await,
        RefundStep::SettleRefused | RefundStep::NewKey | RefundStep::LookAgainLater | RefundStep::LookUpTheRefusal => {
            Ok((Recovered::Unsettled, Some(described)))
        }
    }
}

/// Sends the cancel again with the refund's own key, after a lookup showed the charge not refunded.
async fn resend(
    app: &App,
    job: Job<'_>,
    refund: &OrphanRefund,
    amount: u64,
) -> Result<(Recovered, Option<String>), AppError> {
    let sent = send_under_lease(app, app.pgs.toss.as_ref(), job, |place| send(app, place, refund));
    let answer = match sent.await? {
        Ok(answer) => answer,
        Err(not_sent) => return Ok(not_sent),
    };
    let described = describe(&answer);
    let verdict = orphan_cancel(&answer, &refund.payment_key, &refund.order_id, amount);
    let recovered = match verdict {
        OrphanCancel::Refunded | OrphanCancel::Refused(_) => {
            settle(app, refund, &verdict, &described).await?;
            Recovered::Settled
        }
        OrphanCancel::Retry if answer.shows_pg_unavailable() => Recovered::Unavailable,
        OrphanCancel::Retry => Recovered::Unsettled,
    };
    Ok((recovered, Some(described)))
}

/// Sends the refund's cancel under `place` (given back once answered), in full,
/// with its own key. The caller holds its lease.
pub(super) async fn send(app: &App, place: crate::pg::PgPlace, refund: &OrphanRefund) -> Result<TossReply, AppError> {
    app.db.count_orphan_refund_call(&refund.payment_key).await?;
    let call = TossCancel {
        payment_key: &refund.payment_key,
        order_id: &refund.order_id,
        reason: &refund.reason,
        amount: None,
        idempotency_key: &refund.pg_idempotency_key,
    };
    let answer = app.pgs.toss.gateway().cancel(place, call, PgCaller::Reconcile).await;
    tracing::info!(
        order_id = refund.order_id,
        payment_key = refund.payment_key,
        idempotency_key = refund.pg_idempotency_key,
        answer = describe(&answer),
        "refund of a charge without an order sent"
    );
    Ok(answer)
}

/// Stores a refunded or refused outcome (once), with the PG's answer; a
/// `Retry` only keeps the answer.
pub(super) async fn settle(
    app: &App,
    refund: &OrphanRefund,
    verdict: &OrphanCancel,
    described: &str,
) -> Result<(), AppError> {
    let (status, code) = match verdict {
        OrphanCancel::Refunded => ("DONE", None),
        OrphanCancel::Refused(code) => ("FAILED", Some(code.as_str())),
        OrphanCancel::Retry => ("REQUESTED", None),
    };
    app.db.update_orphan_refund(&refund.payment_key, status, code, described).await?;
    if status != "REQUESTED" {
        metrics::refund_transition(status);
    }
    Ok(())
}
