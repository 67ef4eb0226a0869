//! Sending requested refunds until they go out. A refund whose outcome is
//! unknown (a timeout, a reset, a 5xx, a 429, the PG's "one cancel a second")
//! or that never got its first call (no PG slot, a server that stopped) is
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

use super::backoff::{full_jitter, half_jitter};
use super::lease;
use super::recovery::{LOOKUP_TRIES, PASSES_BEFORE_ALERT, Recovered, Timings, note_health, refusal};
use super::refund::{Settled, expected, send, settle_by_answer, settle_refunded};
use crate::db::{Actor, PgCaller, Refund, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{PgAnswer, RefundLookupVerdict, describe, refund_lookup, refund_lookup_verdict};
use crate::state::AppState;

/// Takes the refund's lease and recovers it, releasing the lease however it ends.
pub(super) async fn recover(state: &AppState, refund_id: &str) -> Result<Recovered, AppError> {
    let now = now_ms();
    let until = now + lease::millis(lease::for_lookup(&state.config));
    let Some(refund) = state.db.claim_refund(refund_id, &state.worker_id, now, until).await? else {
        return Ok(Recovered::NotOurs);
    };
    let outcome = recover_claimed(state, &refund).await;
    let timings = Timings::new(state.config.recovery_interval);
    // As for payments: only a pass in which the PG answered backs off and counts
    // toward the alert; one held back by the breaker or the budget is due again.
    let (answered, next_at, last_answer) = match &outcome {
        Ok((Recovered::Settled | Recovered::NotOurs, _)) => return outcome.map(|(recovered, _)| recovered),
        Ok((Recovered::Unsettled, answer)) => {
            let backoff = half_jitter(timings.pass_backoff(refund.recovery_passes + 1), &mut rand::rng());
            (true, now_ms() + lease::millis(backoff), answer.as_deref())
        }
        Ok((Recovered::Unavailable, answer)) => {
            let backoff = half_jitter(timings.backoff_base, &mut rand::rng());
            (false, now_ms() + lease::millis(backoff), answer.as_deref())
        }
        Ok((Recovered::HeldBack | Recovered::OverBudget, answer)) => (false, now_ms(), answer.as_deref()),
        Err(_) => (false, now_ms() + lease::millis(timings.backoff_base), None),
    };
    let passes = state.db.release_refund(&refund.refund_id, &state.worker_id, next_at, answered, last_answer).await?;
    if answered && passes > 0 && passes % PASSES_BEFORE_ALERT == 0 {
        metrics::refund_alert();
        tracing::error!(
            order_id = refund.order_id,
            refund_id = refund.refund_id,
            idempotency_key = refund.pg_idempotency_key,
            passes,
            last_pg_answer = last_answer,
            "refund still not done after many passes; it is being sent again, and needs an operator's eye"
        );
    }
    outcome.map(|(recovered, _)| recovered)
}

/// One pass over a claimed refund: what it came to, and the PG's last answer.
async fn recover_claimed(state: &AppState, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    let order_amount = state.db.order(&refund.order_id).await?.ok_or(AppError::OrderNotFound)?.amount;
    let mut last = None;
    for retry in 0..LOOKUP_TRIES {
        if retry > 0 {
            metrics::recovery_retry();
            let wait = full_jitter(retry - 1, &mut rand::rng());
            tokio::time::sleep(wait).await;
        }
        if let Some(refused) = refusal(state) {
            return Ok((if last.is_some() { Recovered::Unavailable } else { refused }, last));
        }
        let slot = state.pg.slot().await?;
        let until = now_ms() + lease::millis(lease::for_lookup(&state.config));
        if !state.db.renew_refund_lease(&refund.refund_id, &state.worker_id, until).await? {
            return Ok((Recovered::NotOurs, None));
        }
        let answer = state.pg.lookup(slot, &refund.order_id, &refund.payment_key, PgCaller::Recovery).await;
        note_health(state, &answer);
        let verdict = refund_lookup_verdict(refund_lookup(&answer, expected(refund, order_amount)));
        metrics::refund_call("lookup", lookup_label(verdict));
        match verdict {
            RefundLookupVerdict::Refunded => {
                settle_refunded(state, refund, &answer, Actor::Recovery).await?;
                return Ok((Recovered::Settled, Some(describe(&answer))));
            }
            RefundLookupVerdict::Send => return resend(state, refund).await,
            RefundLookupVerdict::Nothing => return Ok((Recovered::Unsettled, Some(describe(&answer)))),
            RefundLookupVerdict::Retry => last = Some(describe(&answer)),
        }
    }
    Ok((Recovered::Unavailable, last))
}

/// Sends the cancel again with the refund's key, after a lookup showed it not done.
async fn resend(state: &AppState, refund: &Refund) -> Result<(Recovered, Option<String>), AppError> {
    if let Some(refused) = refusal(state) {
        return Ok((refused, None));
    }
    let slot = state.pg.slot().await?;
    // Held for as long as the cancel may take; renewing re-reads the refund too.
    let until = now_ms() + lease::millis(lease::for_confirm(&state.config));
    if !state.db.renew_refund_lease(&refund.refund_id, &state.worker_id, until).await? {
        return Ok((Recovered::NotOurs, None));
    }
    // The key may have changed since the claim (a refusal by the card company).
    let refund = state.db.refund(&refund.refund_id).await?.ok_or(AppError::OrderNotFound)?;
    let answer = send(state, slot, &refund, PgCaller::Recovery).await?;
    let until = now_ms() + lease::millis(lease::margin(&state.config));
    state.db.renew_refund_lease(&refund.refund_id, &state.worker_id, until).await?;
    note_health(state, &answer);
    let settled = settle_by_answer(state, &refund, &answer, Actor::Recovery).await?;
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
    use super::*;

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
