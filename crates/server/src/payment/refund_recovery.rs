//! Sending requested refunds until they go out. A refund whose outcome is
//! unknown (a timeout, a reset, a 5xx, a 429, the PG's "one cancel a second")
//! or that never got its first call (no PG place, a server that stopped) is
//! taken by a recovery worker, which for one pass:
//!
//! 1. takes the refund's lease, so no other worker sends it meanwhile;
//! 2. looks the payment up, retried with full jitter while the PG gives no
//!    usable answer;
//! 3. settles the refund if the payment's balance shows it done
//!    (`REFUND_LOOKUP_VERDICTS`), or else sends the cancel again: to Toss
//!    with the refund's own key (Toss then refunds it, the first never
//!    arrived or refunded nothing, or replays its first answer), to KakaoPay,
//!    which has no keys, with the balance it should have before it, and only
//!    once the first cancel's whole wait is over (the lease covers it).
//!    Neither refunds twice.
//!
//! A pass that settles nothing backs off (with jitter) and counts toward the
//! operator alert; there is no last pass. Every call asks the shared breaker
//! and retry budget first, as recovery's payment lookups do.

use payonce_rules::pg_reply::PgReply;

use super::pass::{Job, Pass, Recovered, look_up, send_under_lease};
use super::refund::{Settled, send, settle_by_answer, settle_refunded, settle_refused};
use crate::app::App;
use crate::db::{Actor, PgCaller, Refund, RefundStatus};
use crate::error::AppError;
use crate::metrics;
use crate::pg::PgPlace;
use crate::pg::adapters::{Canceled, RefundLooked, Sent};
use payonce_rules::settlement::{RefundLookupVerdict, RefundStep, after_refund_lookup, after_refund_lookup_of_refusal};

/// One pass over a refund whose lease the engine took for this worker.
pub(super) async fn pass(app: &App, job: Job<'_>) -> Result<Pass, AppError> {
    let Some(refund) = app.db.refund(job.key).await? else { return Ok(Pass::not_ours()) };
    if refund.status != RefundStatus::Requested {
        return Ok(Pass::not_ours());
    }
    let (recovered, last_answer) = recover_claimed(app, job, &refund).await?;
    Ok(Pass::came_to(recovered, last_answer, refund.recovery_passes))
}

/// One pass over a claimed refund: what it came to, and the PG's last answer.
async fn recover_claimed(app: &App, job: Job<'_>, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    let looked = match look_up_refund(app, job, refund).await? {
        Ok(looked) => looked,
        Err(ended) => return Ok(ended),
    };
    let described = looked.describe();
    match after_refund_lookup(looked.verdict) {
        RefundStep::SettleRefunded => {
            settle_refunded(app, refund, looked.refunded_total, &described, Actor::Recovery).await?;
            Ok((Recovered::Settled, Some(described)))
        }
        RefundStep::Send => resend(app, job, refund).await,
        RefundStep::SettleRefused | RefundStep::NewKey | RefundStep::LookAgainLater | RefundStep::LookUpTheRefusal => {
            Ok((Recovered::Unsettled, Some(described)))
        }
    }
}

/// What a lookup showed of a refund, or what the pass came to without one.
type RefundLookup = Result<RefundLooked, (Recovered, Option<String>)>;

async fn look_up_refund(app: &App, job: Job<'_>, refund: &Refund) -> Result<RefundLookup, AppError> {
    let adapter = app.pgs.of(refund.pg)?;
    let order_amount = app.db.order(&refund.order_id).await?.ok_or(AppError::OrderNotFound)?.amount;
    let usable = |looked: &RefundLooked| {
        metrics::refund_call(refund.pg, "lookup", lookup_label(looked.verdict));
        looked.verdict != RefundLookupVerdict::Retry
    };
    let lookup = |place| adapter.look_up_refund(place, refund, order_amount, PgCaller::Recovery);
    Ok(look_up(app, adapter, job, lookup, usable).await?.answer())
}

/// Sends the cancel again with the refund's key, after a lookup showed it not done.
async fn resend(app: &App, job: Job<'_>, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    let mut sent_as = None;
    let sending = &mut sent_as;
    let sending_again = |place: PgPlace| async move {
        // Read again under the renewed lease: the key may have changed since the
        // claim (a refusal by the card company gives the refund a new one).
        let current = app.db.refund(&refund.refund_id).await?.ok_or(AppError::OrderNotFound)?;
        let answer = send(app, place, &current, PgCaller::Recovery, Sent::Again).await;
        *sending = Some(current);
        answer
    };
    let answer = match send_under_lease(app, app.pgs.of(refund.pg)?, job, sending_again).await? {
        Ok(answer) => answer,
        Err(not_sent) => return Ok(not_sent),
    };
    let refund = sent_as.expect("a refund that was sent was read first");
    let settled = settle_by_answer(app, &refund, &answer, (Actor::Recovery, job.holder)).await?;
    metrics::refund_call(refund.pg, "resend", resend_label(settled, &answer));
    let recovered = match settled {
        Settled::Done => Recovered::Settled,
        Settled::RefusedUnlessDone => return look_up_the_refusal(app, job, &refund, &answer).await,
        Settled::NewKey => Recovered::Unsettled,
        Settled::Unknown if answer.shows_pg_unavailable() => Recovered::Unavailable,
        Settled::Unknown => Recovered::Unsettled,
    };
    Ok((recovered, Some(answer.describe())))
}

/// A cancel sent again was refused: looks the payment up at once, under the
/// same lease, and settles the refund as the balance shows (the rules'
/// `after_refund_lookup_of_refusal`). Without this a refusal of a send after
/// the first would be looked up, sent again and refused for ever.
async fn look_up_the_refusal(
    app: &App,
    job: Job<'_>,
    refund: &Refund,
    refusal: &Canceled,
) -> Result<(Recovered, Option<String>), AppError> {
    let looked = match look_up_refund(app, job, refund).await? {
        Ok(looked) => looked,
        Err(ended) => return Ok(ended),
    };
    let described = looked.describe();
    let recovered = match after_refund_lookup_of_refusal(looked.verdict) {
        RefundStep::SettleRefunded => {
            settle_refunded(app, refund, looked.refunded_total, &described, Actor::Recovery).await?;
            Recovered::Settled
        }
        RefundStep::SettleRefused => {
            let described = format!("{}; then {described}", refusal.describe());
            match settle_refused(app, refund, refusal, &described, (Actor::Recovery, job.holder)).await? {
                Settled::Unknown => Recovered::Unsettled,
                _ => Recovered::Settled,
            }
        }
        RefundStep::Send | RefundStep::NewKey | RefundStep::LookAgainLater | RefundStep::LookUpTheRefusal => {
            Recovered::Unsettled
        }
    };
    Ok((recovered, Some(described)))
}

fn lookup_label(verdict: RefundLookupVerdict) -> &'static str {
    match verdict {
        RefundLookupVerdict::Refunded => "refunded",
        RefundLookupVerdict::Send => "not_refunded",
        RefundLookupVerdict::Retry => "unavailable",
        RefundLookupVerdict::Nothing => "nothing",
    }
}

fn resend_label(settled: Settled, answer: &Canceled) -> &'static str {
    match settled {
        Settled::Done => "settled",
        Settled::NewKey => "new_key",
        Settled::RefusedUnlessDone => "refused_unless_done",
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
