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

use super::pass::{Job, Pass, Recovered, left_open_by, look_up, send_under_lease};
use super::refund::{give_new_key, send, settle_refunded, settle_refused};
use crate::app::App;
use crate::db::{Actor, PgCaller, Refund, RefundStatus};
use crate::error::AppError;
use crate::metrics;
use crate::pg::PgPlace;
use crate::pg::adapters::{Canceled, RefundLooked, Sent};
use payonce_rules::settlement::{Next, RefundAnswer, RefundCall, RefundLookupVerdict, RefundPass, RefundStore};

/// One pass over a refund whose lease the engine took for this worker.
pub(super) async fn pass(app: &App, job: Job<'_>) -> Result<Pass, AppError> {
    let Some(refund) = app.db.refund(job.key).await? else { return Ok(Pass::not_ours()) };
    if refund.status != RefundStatus::Requested {
        return Ok(Pass::not_ours());
    }
    let (recovered, last_answer) = recover_claimed(app, job, &refund).await?;
    Ok(Pass::came_to(recovered, last_answer, refund.recovery_passes))
}

/// What one call of a refund's pass answered.
enum Answered {
    Looked(RefundLooked),
    /// The cancel, with the refund as it was sent (its key read again under the lease).
    Canceled(Canceled, Refund),
    LookedAfterRefusal(RefundLooked),
}

impl Answered {
    fn for_plan(&self) -> RefundAnswer {
        match self {
            Answered::Looked(looked) => RefundAnswer::Looked(looked.verdict),
            Answered::Canceled(canceled, _) => RefundAnswer::Canceled(canceled.verdict),
            Answered::LookedAfterRefusal(looked) => RefundAnswer::LookedAfterRefusal(looked.verdict),
        }
    }

    fn described(&self) -> String {
        match self {
            Answered::Looked(looked) | Answered::LookedAfterRefusal(looked) => looked.describe(),
            Answered::Canceled(canceled, _) => canceled.describe(),
        }
    }

    /// What the PG shows refunded in all, when it says.
    fn refunded_total(&self) -> Option<u64> {
        match self {
            Answered::Looked(looked) | Answered::LookedAfterRefusal(looked) => looked.refunded_total,
            Answered::Canceled(canceled, _) => canceled.refunded_total,
        }
    }
}

/// One pass over a claimed refund, as the rules plan it (`RefundPass`): each
/// call it asks for, until it says what to store or ends. Returns what it came
/// to and the PG's last answer, for operators.
async fn recover_claimed(app: &App, job: Job<'_>, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    // What KakaoPay's lookups and cancels check the balance against.
    let order_amount = app.db.order(&refund.order_id).await?.ok_or(AppError::OrderNotFound)?.amount;
    let mut call = RefundPass::FIRST;
    // The cancel a refusal came from, which a refusal stored keeps the code of.
    let mut refused: Option<Canceled> = None;
    loop {
        let answered = match call {
            RefundCall::LookUp | RefundCall::LookUpTheRefusal => {
                match look_up_refund(app, job, (refund, order_amount)).await? {
                    Ok(looked) if call == RefundCall::LookUp => Answered::Looked(looked),
                    Ok(looked) => Answered::LookedAfterRefusal(looked),
                    Err(ended) => return Ok(ended),
                }
            }
            RefundCall::Cancel => match resend(app, job, (refund, order_amount)).await? {
                Ok((canceled, sent)) => Answered::Canceled(canceled, sent),
                Err(not_sent) => return Ok(not_sent),
            },
        };
        let described = answered.described();
        let next = RefundPass::next(answered.for_plan());
        // A cancel's outcome is stored with the refund as it was sent.
        let mut stored_as = refund;
        if let Answered::Canceled(canceled, sent) = &answered {
            metrics::refund_call(refund.pg, "resend", resend_label(&next, canceled));
            if next == Next::Call(RefundCall::LookUpTheRefusal) {
                refused = Some(canceled.clone());
            }
            stored_as = sent;
        }
        match next {
            Next::Call(next) => call = next,
            Next::Store(store) => {
                return store_refund(app, job, stored_as, store, (&answered, refused.as_ref())).await;
            }
            Next::End => {
                // A usable lookup left it open; a cancel, as `left_open_by` its answer.
                let recovered = match &answered {
                    Answered::Looked(_) | Answered::LookedAfterRefusal(_) => Recovered::Unsettled,
                    Answered::Canceled(canceled, _) => left_open_by(canceled),
                };
                return Ok((recovered, Some(described)));
            }
        }
    }
}

/// Stores what the plan says of `refund`, from the pass's last answer (and the
/// cancel a refusal came from). A refusal is stored only while this pass holds
/// the refund's lease; a new key only by it.
async fn store_refund(
    app: &App,
    job: Job<'_>,
    refund: &Refund,
    store: RefundStore,
    (answered, refused): (&Answered, Option<&Canceled>),
) -> Result<(Recovered, Option<String>), AppError> {
    let described = answered.described();
    let settled = match (store, answered) {
        (RefundStore::Refunded, _) => {
            settle_refunded(app, refund, answered.refunded_total(), &described, Actor::Recovery).await?
        }
        (RefundStore::Refused, Answered::Canceled(canceled, _)) => {
            settle_refused(app, refund, canceled, &described, (Actor::Recovery, job.holder)).await?
        }
        (RefundStore::Refused, _) => {
            let refusal =
                refused.ok_or_else(|| AppError::Internal("a refusal stored without its cancel".to_owned()))?;
            let described = format!("{}; then {described}", refusal.describe());
            settle_refused(app, refund, refusal, &described, (Actor::Recovery, job.holder)).await?
        }
        (RefundStore::NewKey, _) => give_new_key(app, refund, job.holder).await?,
    };
    let recovered = if settled.is_settled() { Recovered::Settled } else { Recovered::Unsettled };
    Ok((recovered, Some(described)))
}

/// What a lookup showed of a refund, or what the pass came to without one.
type RefundLookup = Result<RefundLooked, (Recovered, Option<String>)>;

async fn look_up_refund(
    app: &App,
    job: Job<'_>,
    (refund, order_amount): (&Refund, u64),
) -> Result<RefundLookup, AppError> {
    let adapter = app.pgs.of(refund.pg)?;
    let usable = |looked: &RefundLooked| {
        metrics::refund_call(refund.pg, "lookup", lookup_label(looked.verdict));
        looked.verdict != RefundLookupVerdict::Retry
    };
    let lookup = |place| adapter.look_up_refund(place, refund, order_amount, PgCaller::Recovery);
    Ok(look_up(app, adapter, job, lookup, usable).await?.answer())
}

/// Sends the cancel again, after a lookup showed it not done: with the refund
/// as it is stored when the lease is renewed (the key may have changed since
/// the claim: a refusal by the card company gives the refund a new one).
/// Returns the answer and the refund it was sent as.
async fn resend(
    app: &App,
    job: Job<'_>,
    (refund, order_amount): (&Refund, u64),
) -> Result<Result<(Canceled, Refund), (Recovered, Option<String>)>, AppError> {
    let mut sent_as = None;
    let sending = &mut sent_as;
    let sending_again = |place: PgPlace| async move {
        let current = app.db.refund(&refund.refund_id).await?.ok_or(AppError::OrderNotFound)?;
        let answer = send(app, place, (&current, order_amount), PgCaller::Recovery, Sent::Again).await;
        *sending = Some(current);
        answer
    };
    let answer = match send_under_lease(app, app.pgs.of(refund.pg)?, job, sending_again).await? {
        Ok(answer) => answer,
        Err(not_sent) => return Ok(Err(not_sent)),
    };
    let refund = sent_as.expect("a refund that was sent was read first");
    Ok(Ok((answer, refund)))
}

fn lookup_label(verdict: RefundLookupVerdict) -> &'static str {
    match verdict {
        RefundLookupVerdict::Refunded => "refunded",
        RefundLookupVerdict::Send => "not_refunded",
        RefundLookupVerdict::Retry => "unavailable",
        RefundLookupVerdict::Nothing => "nothing",
    }
}

fn resend_label(next: &Next<RefundCall, RefundStore>, answer: &Canceled) -> &'static str {
    match next {
        Next::Store(RefundStore::Refunded | RefundStore::Refused) => "settled",
        Next::Store(RefundStore::NewKey) => "new_key",
        Next::Call(_) => "refused_unless_done",
        Next::End if answer.shows_pg_unavailable() => "unavailable",
        Next::End => "unknown",
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
