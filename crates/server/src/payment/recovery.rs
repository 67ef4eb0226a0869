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
//! Every call asks the shared circuit breaker and the retry budget first. A
//! pass they held back is not a failed pass: only passes in which the PG
//! answered count toward the attempt's backoff and the operator alert, so once
//! the PG answers again everything is settled at the next pass.

use std::time::Duration;

use futures::StreamExt;
use payonce_api::OrderStatus;
use tokio_util::sync::CancellationToken;

use super::backoff::full_jitter;
use super::settle;
use crate::db::{Actor, Attempt, Transition, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{
    ConfirmVerdict, Expected, PgAnswer, PgConfirm, StatusVerdict, confirm_answer, describe, failure_of, resend_verdict,
    status_answer, status_verdict,
};
use crate::state::AppState;

/// Lookups per attempt in one pass while the PG gives no usable answer.
const LOOKUP_TRIES: u32 = 3;
/// Attempts recovered at once; each holds at most one PG slot.
const PARALLEL_ATTEMPTS: usize = 4;
/// Most attempts looked at in one pass.
const PASS_LIMIT: u32 = 500;
/// Wait after an attempt's first answered-but-unsettled pass, and before the
/// first look at a new unknown outcome; it doubles with each further pass.
const PASS_BACKOFF_BASE: Duration = Duration::from_secs(5);
/// The longest wait between two passes over one attempt.
const PASS_BACKOFF_CAP: Duration = Duration::from_secs(15 * 60);
/// Answered passes after which an attempt is reported as needing an operator.
const PASSES_BEFORE_ALERT: u32 = 10;
/// Shortest pause between two passes, so a busy table is not spun on.
const MIN_GAP: Duration = Duration::from_secs(1);
/// How long a pass held back by the budget waits before trying again.
const BUDGET_RETRY: Duration = Duration::from_secs(10);

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassReport {
    pub settled: usize,
    pub unsettled: usize,
    /// Attempts left for later without an answer from the PG: the breaker
    /// refused the call, or the PG gave no usable answer.
    pub held_back: usize,
    /// Attempts left for later because the retry budget was spent.
    pub over_budget: usize,
}

/// What recovering one attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovered {
    /// This worker settled it.
    Settled,
    /// The PG answered, but nothing settles it yet.
    Unsettled,
    /// No answer from the PG: the breaker refused, or the PG gave none usable.
    HeldBack,
    /// The retry budget was spent.
    OverBudget,
    /// Someone else holds it, or settled it first.
    NotOurs,
}

/// Runs a pass at start, then again when the next attempt is due (at most
/// `recovery_interval` later), or when woken, until cancelled.
pub async fn run(state: AppState, shutdown: CancellationToken) {
    loop {
        let report = tokio::select! {
            _ = shutdown.cancelled() => return,
            report = run_pass(&state) => report,
        };
        let pause = match report {
            Ok(report) => {
                if report != PassReport::default() {
                    tracing::info!(?report, "recovery pass");
                }
                pause_after(&state, &report).await
            }
            Err(error) => {
                tracing::error!(?error, "recovery pass failed");
                state.config.recovery_interval
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
            _ = state.recovery_wake.notified() => {}
        }
    }
}

/// Until the next pass: when the next attempt falls due, within bounds.
async fn pause_after(state: &AppState, report: &PassReport) -> Duration {
    let interval = state.config.recovery_interval;
    let min_gap = MIN_GAP.min(interval / 4);
    if let Some(cool_down) = state.breaker.refuses_for() {
        return cool_down.clamp(min_gap, interval);
    }
    if report.over_budget > 0 {
        return BUDGET_RETRY.clamp(min_gap, interval);
    }
    match state.db.next_due_ms().await {
        Ok(Some(due)) => {
            let until_due = u64::try_from(due - now_ms()).unwrap_or(0);
            Duration::from_millis(until_due).clamp(min_gap, interval)
        }
        Ok(None) | Err(_) => interval,
    }
}

/// One pass over every attempt whose recovery is due.
pub async fn run_pass(state: &AppState) -> Result<PassReport, AppError> {
    let mut report = PassReport::default();
    let due = state.db.due_attempts(now_ms(), PASS_LIMIT).await?;
    if state.breaker.refuses_for().is_some() {
        // Not a pass at all: nothing is claimed, counted or postponed.
        report.held_back = due.len();
        return Ok(report);
    }
    let outcomes: Vec<Result<Recovered, AppError>> = futures::stream::iter(due)
        .map(|order_id| async move { recover(state, &order_id).await })
        .buffer_unordered(PARALLEL_ATTEMPTS)
        .collect()
        .await;
    for outcome in outcomes {
        match outcome {
            Ok(Recovered::Settled) => report.settled += 1,
            Ok(Recovered::Unsettled) => report.unsettled += 1,
            Ok(Recovered::HeldBack) => report.held_back += 1,
            Ok(Recovered::OverBudget) => report.over_budget += 1,
            Ok(Recovered::NotOurs) => {}
            Err(error) => {
                report.unsettled += 1;
                tracing::error!(?error, "recovering an attempt failed");
            }
        }
    }
    let oldest_age = state.db.oldest_unsettled_ms().await?.map_or(0, |created| now_ms() - created);
    metrics::unknown_oldest_age(oldest_age as f64 / 1000.0);
    Ok(report)
}

/// How long after a first unknown outcome recovery first looks: soon, but not
/// at once (the PG may still be processing what timed out).
pub fn first_check_delay_ms(state: &AppState) -> i64 {
    millis(pass_backoff(1, backoff_base(state)))
}

/// Takes the attempt's lease and recovers it, releasing the lease however it ends.
async fn recover(state: &AppState, order_id: &str) -> Result<Recovered, AppError> {
    let now = now_ms();
    let Some(attempt) = state.db.claim_for_recovery(order_id, now, now + millis(lease(state))).await? else {
        return Ok(Recovered::NotOurs);
    };
    if attempt.status == OrderStatus::Pending {
        // Its confirm task is gone (its lease lapsed): from here on the outcome is unknown.
        let reason = "left pending by a confirm that did not finish (server stopped)";
        if state.db.mark_pending_unknown(&attempt.order_id, reason).await? {
            let transition = Transition::Unknown(reason.to_owned());
            settle::log_transition(&attempt.order_id, &attempt.idempotency_key, OrderStatus::Pending, &transition);
        }
    }
    let outcome = recover_claimed(state, &attempt).await;
    let (answered, last_answer) = match &outcome {
        Ok((Recovered::Settled | Recovered::NotOurs, _)) => return outcome.map(|(recovered, _)| recovered),
        Ok((Recovered::Unsettled, answer)) => (true, answer.as_deref()),
        Ok((Recovered::HeldBack | Recovered::OverBudget, answer)) => (false, answer.as_deref()),
        Err(_) => (false, None),
    };
    let next_at = answered.then(|| now_ms() + millis(pass_backoff(attempt.recovery_passes + 1, backoff_base(state))));
    let passes = state.db.release_unsettled(&attempt.order_id, next_at, answered, last_answer).await?;
    if answered {
        metrics::recovery_exhausted();
        if passes == PASSES_BEFORE_ALERT {
            metrics::recovery_alert();
            tracing::error!(
                order_id = attempt.order_id,
                idempotency_key = attempt.idempotency_key,
                passes,
                last_pg_answer = last_answer,
                "payment still unsettled after many recovery passes; it needs an operator"
            );
        }
    }
    outcome.map(|(recovered, _)| recovered)
}

/// The steps of one pass over a claimed attempt. Returns what it came to and
/// the PG's last answer, for operators.
async fn recover_claimed(state: &AppState, attempt: &Attempt) -> Result<(Recovered, Option<String>), AppError> {
    let expected = Expected { payment_key: &attempt.payment_key, order_id: &attempt.order_id, amount: attempt.amount };
    let answer = match look_up(state, attempt, expected).await? {
        Call::Answered(answer) => answer,
        Call::Refused(refused) => return Ok((refused, None)),
        Call::Unavailable(answer) => return Ok((Recovered::HeldBack, Some(describe(&answer)))),
        Call::SettledMeanwhile => return Ok((Recovered::NotOurs, None)),
    };
    let transition = match status_verdict(status_answer(&answer, expected)) {
        StatusVerdict::Paid => Transition::Paid,
        StatusVerdict::Failed => Transition::Failed(failure_of(&answer)),
        StatusVerdict::Canceled => Transition::Canceled,
        StatusVerdict::PartiallyRefunded => Transition::PartiallyRefunded,
        StatusVerdict::NotConfirmed => return resend(state, attempt, expected).await,
        StatusVerdict::Nothing | StatusVerdict::Retry => return Ok((Recovered::Unsettled, Some(describe(&answer)))),
    };
    settle_from_recovery(state, attempt, transition).await.map(|recovered| (recovered, Some(describe(&answer))))
}

/// Resends the confirm with the attempt's own key, once, after a lookup showed
/// the payment unconfirmed.
async fn resend(
    state: &AppState,
    attempt: &Attempt,
    expected: Expected<'_>,
) -> Result<(Recovered, Option<String>), AppError> {
    if !state.db.is_unsettled(&attempt.order_id).await? {
        return Ok((Recovered::NotOurs, None));
    }
    if let Some(refused) = refusal(state) {
        return Ok((refused, None));
    }
    let slot = state.pg.slot().await;
    let call = PgConfirm {
        payment_key: &attempt.payment_key,
        order_id: &attempt.order_id,
        amount: attempt.amount,
        idempotency_key: &attempt.idempotency_key,
    };
    let answer = state.pg.client().confirm(call).await;
    drop(slot);
    note_health(state, &answer);
    let verdict = resend_verdict(confirm_answer(&answer, expected));
    metrics::recovery_call("resend", verdict_label(verdict));
    tracing::info!(order_id = attempt.order_id, answer = describe(&answer), ?verdict, "recovery resent the confirm");
    let transition = match verdict {
        ConfirmVerdict::Paid => Transition::Paid,
        ConfirmVerdict::Failed => Transition::Failed(failure_of(&answer)),
        ConfirmVerdict::Unreachable | ConfirmVerdict::Unknown | ConfirmVerdict::Nothing => {
            let recovered = if answer.shows_pg_unavailable() { Recovered::HeldBack } else { Recovered::Unsettled };
            return Ok((recovered, Some(describe(&answer))));
        }
    };
    settle_from_recovery(state, attempt, transition).await.map(|recovered| (recovered, Some(describe(&answer))))
}

async fn settle_from_recovery(
    state: &AppState,
    attempt: &Attempt,
    transition: Transition,
) -> Result<Recovered, AppError> {
    let from = [OrderStatus::Pending, OrderStatus::Unknown];
    let applied =
        settle::apply(state, Actor::Recovery, &attempt.order_id, &attempt.idempotency_key, &from, transition).await?;
    Ok(if applied.moved { Recovered::Settled } else { Recovered::NotOurs })
}

/// How a call recovery wanted to make went.
enum Call {
    Answered(PgAnswer),
    /// Every try got no usable answer (the last one is kept).
    Unavailable(PgAnswer),
    /// The breaker or the budget refused the call.
    Refused(Recovered),
    /// The attempt was settled by someone else before the call.
    SettledMeanwhile,
}

/// Looks the payment up, retrying with backoff and full jitter while the PG
/// gives no usable answer. Re-reads the attempt before every call.
async fn look_up(state: &AppState, attempt: &Attempt, expected: Expected<'_>) -> Result<Call, AppError> {
    let mut last = None;
    for retry in 0..LOOKUP_TRIES {
        if retry > 0 {
            metrics::recovery_retry();
            let wait = full_jitter(retry - 1, &mut rand::rng());
            tokio::time::sleep(wait).await;
        }
        if !state.db.is_unsettled(&attempt.order_id).await? {
            return Ok(Call::SettledMeanwhile);
        }
        if let Some(refused) = refusal(state) {
            return Ok(last.map_or(Call::Refused(refused), Call::Unavailable));
        }
        let slot = state.pg.slot().await;
        let answer = state.pg.client().payment(&attempt.payment_key).await;
        drop(slot);
        note_health(state, &answer);
        let verdict = status_verdict(status_answer(&answer, expected));
        metrics::recovery_call("lookup", status_label(verdict));
        tracing::debug!(
            order_id = attempt.order_id,
            answer = describe(&answer),
            ?verdict,
            "recovery looked the payment up"
        );
        if verdict != StatusVerdict::Retry {
            return Ok(Call::Answered(answer));
        }
        last = Some(answer);
    }
    Ok(Call::Unavailable(last.expect("at least one try")))
}

/// Why the breaker or the budget does not let one more recovery call go now,
/// or `None` when it may go (and is counted against the budget).
fn refusal(state: &AppState) -> Option<Recovered> {
    // The budget first: a half-open breaker lets one probe through, and a probe
    // granted but never sent would leave it half-open for good.
    if !state.budget.has_room() {
        metrics::recovery_over_budget();
        return Some(Recovered::OverBudget);
    }
    if !state.breaker.allows_call() {
        return Some(Recovered::HeldBack);
    }
    // Another worker may have taken the last call since; going over by one is fine.
    state.budget.try_recovery_call();
    None
}

/// Feeds the breaker: only a PG that gives no usable answer counts against it.
fn note_health(state: &AppState, answer: &PgAnswer) {
    if answer.shows_pg_unavailable() {
        state.breaker.record_failure();
    } else if state.breaker.record_answer() {
        // What the open breaker held back can go now.
        state.recovery_wake.notify_one();
    }
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

/// How long a worker holds an attempt: long enough for every call of one pass
/// (the lookups with their backoff, then a resend that may take a whole
/// confirm timeout), with a margin. A killed worker's attempts are free again after it.
pub fn lease(state: &AppState) -> Duration {
    let config = &state.config;
    let lookups = (config.pg_connect_timeout + config.pg_read_timeout.min(Duration::from_secs(10))) * LOOKUP_TRIES;
    lookups + super::backoff::CAP + config.max_processing() * 3 / 2
}

/// The first backoff step: [`PASS_BACKOFF_BASE`], or the recovery interval if shorter.
fn backoff_base(state: &AppState) -> Duration {
    PASS_BACKOFF_BASE.min(state.config.recovery_interval)
}

/// How long an attempt waits after its `passes`-th answered-but-unsettled pass:
/// doubling from `base` up to [`PASS_BACKOFF_CAP`], so one that the PG cannot
/// settle yet is asked less and less often and never crowds out the others.
fn pass_backoff(passes: u32, base: Duration) -> Duration {
    base.saturating_mul(2u32.saturating_pow(passes.saturating_sub(1))).min(PASS_BACKOFF_CAP)
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_the_pg_cannot_settle_is_asked_less_and_less_often() {
        let waits: Vec<u64> = (1..=10).map(|passes| pass_backoff(passes, PASS_BACKOFF_BASE).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 900, 900]);
        assert_eq!(pass_backoff(u32::MAX, PASS_BACKOFF_BASE), PASS_BACKOFF_CAP);
    }
}
