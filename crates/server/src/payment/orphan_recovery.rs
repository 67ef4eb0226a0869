//! Sending the refund of a charge no order made until it goes out. A
//! reconciliation pass stores it and sends it once; when that send's outcome
//! is unknown, the refund is the job engine's, like any refund: a pass looks
//! the payment up, settles the refund if the PG shows it refunded in full, and
//! otherwise sends the cancel again under the refund's own key (derived from
//! the paymentKey), so the PG refunds it once, whether or not a later
//! reconciliation still lists the charge.

use super::pass::{Job, Pass, Recovered, left_open_by, look_up, send_under_lease};
use crate::app::App;
use crate::db::OrphanRefund;
use crate::error::AppError;
use crate::metrics;
use crate::pg::PgPlace;
use crate::pg::adapters::PgAdapter;
use crate::pg::adapters::ledger::{OrphanCanceled, OrphanLooked, PgLedger};
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{OrphanCancel, RefundLookupVerdict, RefundStep, after_refund_lookup};

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
    let adapter = app.pgs.of(refund.pg)?;
    let Some(ledger) = adapter.ledger() else {
        // Only a PG with a ledger lists a charge no order made, so only one has its refunds.
        return Err(AppError::Internal(format!("{} keeps no ledger: its refund is an operator's", refund.pg.as_str())));
    };
    let usable = |looked: &OrphanLooked| looked.verdict != RefundLookupVerdict::Retry;
    let lookup = |place| ledger.look_up_orphan_refund(place, refund);
    let looked_up = look_up(app, adapter, job, lookup, usable).await?;
    let looked = match looked_up.answer() {
        Ok(looked) => looked,
        Err(ended) => return Ok(ended),
    };
    let described = looked.reply.describe();
    match after_refund_lookup(looked.verdict) {
        RefundStep::SettleRefunded => {
            settle(app, refund, &OrphanCancel::Refunded, &described).await?;
            Ok((Recovered::Settled, Some(described)))
        }
        RefundStep::Send => resend(app, (adapter, ledger), job, refund).await,
        RefundStep::SettleRefused | RefundStep::NewKey | RefundStep::LookAgainLater | RefundStep::LookUpTheRefusal => {
            Ok((Recovered::Unsettled, Some(described)))
        }
    }
}

/// Sends the cancel again with the refund's own key, after a lookup showed the charge not refunded.
async fn resend(
    app: &App,
    (adapter, ledger): (&dyn PgAdapter, &dyn PgLedger),
    job: Job<'_>,
    refund: &OrphanRefund,
) -> Result<(Recovered, Option<String>), AppError> {
    let sent = send_under_lease(app, adapter, job, |place| send(app, ledger, place, refund));
    let canceled = match sent.await? {
        Ok(canceled) => canceled,
        Err(not_sent) => return Ok(not_sent),
    };
    let described = canceled.reply.describe();
    let recovered = match canceled.verdict {
        OrphanCancel::Refunded | OrphanCancel::Refused(_) => {
            settle(app, refund, &canceled.verdict, &described).await?;
            Recovered::Settled
        }
        OrphanCancel::Retry => left_open_by(&canceled.reply),
    };
    Ok((recovered, Some(described)))
}

/// Sends the refund's cancel through `ledger` under `place` (given back once
/// answered), in full, with its own key, counted first. The caller holds its lease.
pub(super) async fn send(
    app: &App,
    ledger: &dyn PgLedger,
    place: PgPlace,
    refund: &OrphanRefund,
) -> Result<OrphanCanceled, AppError> {
    app.db.count_orphan_refund_call(&refund.payment_key).await?;
    Ok(ledger.refund_orphan(place, refund).await)
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
