//! Sending requested refunds until they go out. A refund whose outcome is
//! unknown (a timeout, a reset, a 5xx, a 429, the PG's "one cancel a second")
//! or that never got its first call (no PG place, a server that stopped) is
//! taken by a recovery worker, which for one pass:
//!
//! 1. takes the refund's lease, so no other worker sends it meanwhile;
//! 2. looks the payment up, retried with full jitter while the PG gives no
//!    usable answer;
//! 3. settles the refund if the payment's balance shows it done
//!    (`REFUND_LOOKUP_VERDICTS`), or else sends the cancel again with the
//!    refund's own key: the PG then refunds it (the first never arrived, or
//!    refunded nothing), or replays its first answer. Neither refunds twice.
//!
//! A pass that settles nothing backs off (with jitter) and counts toward the
//! operator alert; there is no last pass. Every call asks the shared breaker
//! and retry budget first, as recovery's payment lookups do.

use super::pass::{Job, Pass, Recovered, look_up, send_under_lease};
use super::refund::{Settled, expected, send, settle_by_answer, settle_refunded};
use crate::app::App;
use crate::db::{Actor, PgCaller, Refund, RefundStatus};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{LookupBy, PgAnswer, describe, refund_lookup, refund_lookup_verdict};
use payonce_rules::settlement::{RefundLookupVerdict, RefundStep, after_refund_lookup};

/// One pass over a refund whose lease the engine took for this worker.
pub(super) async fn pass(app: &App, job: Job<'_>) -> Result<Pass, AppError> {
    let Some(refund) = app.db.refund(job.key).await? else { return Ok(Pass::not_ours()) };
    if refund.status != RefundStatus::Requested {
        return Ok(Pass::not_ours());
    }
    let (recovered, last_answer) = recover_claimed(app, job, &refund).await?;
    Ok(Pass { recovered, last_answer, passes_before: refund.recovery_passes })
}

/// One pass over a claimed refund: what it came to, and the PG's last answer.
async fn recover_claimed(app: &App, job: Job<'_>, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    let order_amount = app.db.order(&refund.order_id).await?.ok_or(AppError::OrderNotFound)?.amount;
    let expected = expected(refund, order_amount);
    let usable = |answer: &PgAnswer| {
        let verdict = refund_lookup_verdict(refund_lookup(answer, expected));
        metrics::refund_call("lookup", lookup_label(verdict));
        verdict != RefundLookupVerdict::Retry
    };
    let ids = (refund.order_id.as_str(), LookupBy::PaymentKey(&refund.payment_key));
    let looked_up = look_up(app, job, ids, PgCaller::Recovery, usable).await?;
    let answer = match looked_up.answer() {
        Ok(answer) => answer,
        Err(ended) => return Ok(ended),
    };
    let described = Some(describe(&answer));
    match after_refund_lookup(refund_lookup_verdict(refund_lookup(&answer, expected))) {
        RefundStep::SettleRefunded => {
            settle_refunded(app, refund, &answer, Actor::Recovery).await?;
            Ok((Recovered::Settled, described))
        }
        RefundStep::Send => resend(app, job, refund).await,
        RefundStep::SettleRefused | RefundStep::NewKey | RefundStep::LookAgainLater => {
            Ok((Recovered::Unsettled, described))
        }
    }
}

/// Sends the cancel again with the refund's key, after a lookup showed it not done.
async fn resend(app: &App, job: Job<'_>, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    let mut sent_as = None;
    let sending = &mut sent_as;
    let sent = send_under_lease(app, job, |place| async move {
        // Read again under the renewed lease: the key may have changed since the
        // claim (a refusal by the card company gives the refund a new one).
        let current = app.db.refund(&refund.refund_id).await?.ok_or(AppError::OrderNotFound)?;
        let answer = send(app, place, &current, PgCaller::Recovery).await;
        *sending = Some(current);
        answer
    });
    let answer = match sent.await? {
        Ok(answer) => answer,
        Err(not_sent) => return Ok(not_sent),
    };
    let refund = sent_as.expect("a refund that was sent was read first");
    let settled = settle_by_answer(app, &refund, &answer, (Actor::Recovery, job.holder)).await?;
    metrics::refund_call("resend", resend_label(settled, &answer));
    let recovered = match settled {
        Settled::Done => Recovered::Settled,
        Settled::NewKey => Recovered::Unsettled,
        Settled::Unknown if answer.shows_pg_unavailable() => Recovered::Unavailable,
        Settled::Unknown => Recovered::Unsettled,
    };
    Ok((recovered, Some(describe(&answer))))
}

fn lookup_label(verdict: RefundLookupVerdict) -> &'static str {
    match verdict {
        RefundLookupVerdict::Refunded => "refunded",
        RefundLookupVerdict::Send => "not_refunded",
        RefundLookupVerdict::Retry => "unavailable",
        RefundLookupVerdict::Nothing => "nothing",
    }
}

fn resend_label(settled: Settled, answer: &PgAnswer) -> &'static str {
    match settled {
        Settled::Done => "settled",
        Settled::NewKey => "new_key",
        Settled::Unknown if answer.shows_pg_unavailable() => "unavailable",
        Settled::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use crate::resilience::backoff::half_jitter;
    use payonce_rules::settlement::Timings;

    #[test]
    fn passes_over_a_refund_back_off_with_jitter_below_the_cap() {
        let timings = Timings::new(std::time::Duration::from_secs(60));
        let mut rng = rand::rng();
        for passes in 1..40 {
            let wait = half_jitter(timings.pass_backoff(passes), &mut rng);
            assert!(wait <= timings.backoff_cap && wait >= timings.backoff_base / 2, "{passes}: {wait:?}");
        }
    }
}
