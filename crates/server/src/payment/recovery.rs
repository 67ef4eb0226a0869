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

use std::sync::{Arc, Mutex};
use std::time::Duration;

use payonce_api::OrderStatus;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::backoff::full_jitter;
use super::{lease, settle};
use crate::db::{Actor, Attempt, PgCaller, Transition, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{
    ConfirmVerdict, Expected, PgAnswer, PgConfirm, StatusVerdict, confirm_answer, describe, failure_of, resend_verdict,
    status_answer, status_verdict,
};
use crate::state::AppState;

/// Lookups per attempt in one pass while the PG gives no usable answer.
pub(super) const LOOKUP_TRIES: u32 = 3;
/// Answered passes after which an attempt is reported as needing an operator.
pub(super) const PASSES_BEFORE_ALERT: u32 = 10;

/// Recovery's timings, each a fraction or a multiple of the recovery interval,
/// so a shop (or a test) that recovers faster keeps the same proportions. The
/// figures in the comments are those of the default 60 s interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// Before the first look at a new unknown outcome, and after an attempt's
    /// first answered-but-unsettled pass; it doubles with each further one (5 s).
    pub backoff_base: Duration,
    /// The longest wait between two passes over one attempt (15 min).
    pub backoff_cap: Duration,
    /// The shortest pause between two passes, so a busy table is not spun on (1 s).
    pub min_gap: Duration,
    /// How long a pass held back by the budget waits before trying again (10 s).
    pub budget_retry: Duration,
    /// How long the open breaker refuses calls before its probe (30 s).
    pub breaker_cool_down: Duration,
}

impl Timings {
    pub fn new(interval: Duration) -> Self {
        Self {
            backoff_base: interval / 12,
            backoff_cap: interval * 15,
            min_gap: interval / 60,
            budget_retry: interval / 6,
            breaker_cool_down: interval / 2,
        }
    }

    /// How long an attempt waits after its `passes`-th answered-but-unsettled
    /// pass: doubling from the base up to the cap, so one that the PG cannot
    /// settle yet is asked less and less often and never crowds out the others.
    pub(super) fn pass_backoff(&self, passes: u32) -> Duration {
        self.backoff_base.saturating_mul(2u32.saturating_pow(passes.saturating_sub(1))).min(self.backoff_cap)
    }
}

/// What recovery did since it last looked.
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
pub(super) enum Recovered {
    /// This worker settled it.
    Settled,
    /// The PG answered, but nothing settles it yet.
    Unsettled,
    /// The breaker refused the call: the PG was not asked.
    HeldBack,
    /// The PG was asked and gave no usable answer (no answer, 5xx, 429).
    Unavailable,
    /// The retry budget was spent.
    OverBudget,
    /// Someone else holds it, or settled it first.
    NotOurs,
}

/// Looks for due attempts at start, then again when the next one falls due (at
/// most `recovery_interval` later), when woken (a confirm ended unknown, a worker
/// finished), until cancelled. Each due attempt is recovered by a worker of its
/// own, so a slow one (a resend the PG takes a minute over) holds up no other.
pub async fn run(state: AppState, shutdown: CancellationToken) {
    let workers = Arc::new(Semaphore::new(worker_limit(&state)));
    let finished = Arc::new(Mutex::new(PassReport::default()));
    loop {
        if let Err(error) = start_due(&state, &workers, &finished).await {
            tracing::error!(?error, "recovery could not look for due payments");
        }
        let report = std::mem::take(&mut *finished.lock().expect("recovery report lock"));
        if report.settled + report.unsettled > 0 {
            tracing::info!(?report, "recovery");
        }
        let pause = pause_after(&state, &report).await;
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
            _ = state.recovery_wake.notified() => {}
        }
    }
}

/// Recovery workers at once: a quarter of the PG cap (of 40 at most), so
/// customers' confirms keep most of it. Each holds at most one PG slot.
fn worker_limit(state: &AppState) -> usize {
    (state.config.pg_max_concurrency.most().min(40) as usize / 4).max(1)
}

/// Starts a worker for each due attempt, as many as are free.
async fn start_due(
    state: &AppState,
    workers: &Arc<Semaphore>,
    finished: &Arc<Mutex<PassReport>>,
) -> Result<(), AppError> {
    let free = workers.available_permits();
    if free == 0 || state.breaker.refuses_for().is_some() {
        // Nothing is claimed, counted or postponed while the breaker is open.
        return Ok(());
    }
    let due = state.db.due_attempts(now_ms(), u32::try_from(free).unwrap_or(u32::MAX)).await?;
    for order_id in due {
        let Ok(permit) = workers.clone().try_acquire_owned() else { break };
        let (state, finished) = (state.clone(), finished.clone());
        state.pg_tasks.clone().spawn(async move {
            let outcome = recover(&state, &order_id).await;
            drop(permit);
            finished.lock().expect("recovery report lock").count(outcome);
            // A worker is free, and the report has news: look again.
            state.recovery_wake.notify_one();
        });
    }
    // Refunds share the workers: a refund must go out, but not at the cost of
    // settling customers' payments.
    let free = workers.available_permits();
    let due = state.db.due_refunds(now_ms(), u32::try_from(free).unwrap_or(u32::MAX)).await?;
    for refund_id in due {
        let Ok(permit) = workers.clone().try_acquire_owned() else { break };
        let (state, finished) = (state.clone(), finished.clone());
        state.pg_tasks.clone().spawn(async move {
            let outcome = super::refund_recovery::recover(&state, &refund_id).await;
            drop(permit);
            finished.lock().expect("recovery report lock").count(outcome);
            state.recovery_wake.notify_one();
        });
    }
    let oldest_age = state.db.oldest_unsettled_ms().await?.map_or(0, |created| now_ms() - created);
    metrics::unknown_oldest_age(oldest_age as f64 / 1000.0);
    Ok(())
}

impl PassReport {
    pub(super) fn count(&mut self, outcome: Result<Recovered, AppError>) {
        match outcome {
            Ok(Recovered::Settled) => self.settled += 1,
            Ok(Recovered::Unsettled) => self.unsettled += 1,
            Ok(Recovered::HeldBack | Recovered::Unavailable) => self.held_back += 1,
            Ok(Recovered::OverBudget) => self.over_budget += 1,
            Ok(Recovered::NotOurs) => {}
            Err(error) => {
                self.unsettled += 1;
                tracing::error!(?error, "recovering a payment failed");
            }
        }
    }
}

/// Until the next look: when the next attempt falls due, within bounds.
async fn pause_after(state: &AppState, report: &PassReport) -> Duration {
    let interval = state.config.recovery_interval;
    let timings = Timings::new(interval);
    let min_gap = timings.min_gap;
    if let Some(cool_down) = state.breaker.refuses_for() {
        return cool_down.clamp(min_gap, interval);
    }
    if report.over_budget > 0 {
        return timings.budget_retry;
    }
    let next_due = match (state.db.next_due_ms().await, state.db.next_refund_due_ms().await) {
        (Ok(payment), Ok(refund)) => Ok(payment.into_iter().chain(refund).min()),
        (Err(error), _) | (_, Err(error)) => Err(error),
    };
    match next_due {
        Ok(Some(due)) => {
            let until_due = u64::try_from(due - now_ms()).unwrap_or(0);
            Duration::from_millis(until_due).clamp(min_gap, interval)
        }
        Ok(None) | Err(_) => interval,
    }
}

/// How long after a first unknown outcome recovery first looks: soon, but not
/// at once (the PG may still be processing what timed out).
pub fn first_check_delay_ms(state: &AppState) -> i64 {
    lease::millis(Timings::new(state.config.recovery_interval).backoff_base)
}

/// Takes the attempt's lease and recovers it, releasing the lease however it ends.
async fn recover(state: &AppState, order_id: &str) -> Result<Recovered, AppError> {
    let now = now_ms();
    let until = now + lease::millis(lease::for_lookup(&state.config));
    let Some(attempt) = state.db.claim_for_recovery(order_id, &state.worker_id, now, until).await? else {
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
    let timings = Timings::new(state.config.recovery_interval);
    // Only a pass in which the PG answered backs off and counts toward the alert.
    // One it answered with nothing usable waits a first step, so as not to spin
    // on it; one the breaker or the budget held back is due again at once.
    let (answered, next_at, last_answer) = match &outcome {
        Ok((Recovered::Settled | Recovered::NotOurs, _)) => return outcome.map(|(recovered, _)| recovered),
        Ok((Recovered::Unsettled, answer)) => {
            let backoff = timings.pass_backoff(attempt.recovery_passes + 1);
            (true, Some(now_ms() + lease::millis(backoff)), answer.as_deref())
        }
        Ok((Recovered::Unavailable, answer)) => {
            (false, Some(now_ms() + lease::millis(timings.backoff_base)), answer.as_deref())
        }
        Ok((Recovered::HeldBack | Recovered::OverBudget, answer)) => (false, None, answer.as_deref()),
        Err(_) => (false, None, None),
    };
    let passes =
        state.db.release_unsettled(&attempt.order_id, &state.worker_id, next_at, answered, last_answer).await?;
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
        Lookup::Answered(answer) => answer,
        Lookup::Refused(refused) => return Ok((refused, None)),
        Lookup::Unavailable(answer) => return Ok((Recovered::Unavailable, Some(describe(&answer)))),
        Lookup::SettledMeanwhile => return Ok((Recovered::NotOurs, None)),
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
    if let Some(refused) = refusal(state) {
        return Ok((refused, None));
    }
    let slot = state.pg.slot().await?;
    // Held for as long as the confirm may take; renewing re-reads the attempt too.
    let until = now_ms() + lease::millis(lease::for_confirm(&state.config));
    if !state.db.renew_lease(&attempt.order_id, &state.worker_id, until).await? {
        return Ok((Recovered::NotOurs, None));
    }
    let call = PgConfirm {
        payment_key: &attempt.payment_key,
        order_id: &attempt.order_id,
        amount: attempt.amount,
        idempotency_key: &attempt.idempotency_key,
    };
    let answer = state.pg.confirm(slot, call, PgCaller::Recovery).await;
    // The answer is in: a worker that dies now should not hold the attempt for a whole confirm.
    let until = now_ms() + lease::millis(lease::margin(&state.config));
    state.db.renew_lease(&attempt.order_id, &state.worker_id, until).await?;
    note_health(state, &answer);
    let verdict = resend_verdict(confirm_answer(&answer, expected));
    metrics::recovery_call("resend", verdict_label(verdict));
    tracing::info!(order_id = attempt.order_id, answer = describe(&answer), ?verdict, "recovery resent the confirm");
    let transition = match verdict {
        ConfirmVerdict::Paid => Transition::Paid,
        ConfirmVerdict::Failed => Transition::Failed(failure_of(&answer)),
        ConfirmVerdict::Unreachable | ConfirmVerdict::Unknown | ConfirmVerdict::Nothing => {
            let recovered = if answer.shows_pg_unavailable() { Recovered::Unavailable } else { Recovered::Unsettled };
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

/// How a lookup recovery wanted to make went.
enum Lookup {
    Answered(PgAnswer),
    /// Every try got no usable answer (the last one is kept).
    Unavailable(PgAnswer),
    /// The breaker or the budget refused the call.
    Refused(Recovered),
    /// The attempt was settled, or taken over, by someone else before the call.
    SettledMeanwhile,
}

/// Looks the payment up, retrying with backoff and full jitter while the PG
/// gives no usable answer. Re-reads the attempt before every call.
async fn look_up(state: &AppState, attempt: &Attempt, expected: Expected<'_>) -> Result<Lookup, AppError> {
    let mut last = None;
    for retry in 0..LOOKUP_TRIES {
        if retry > 0 {
            metrics::recovery_retry();
            let wait = full_jitter(retry - 1, &mut rand::rng());
            tokio::time::sleep(wait).await;
        }
        if let Some(refused) = refusal(state) {
            return Ok(last.map_or(Lookup::Refused(refused), Lookup::Unavailable));
        }
        let slot = state.pg.slot().await?;
        // Renewing re-reads the attempt: one settled meanwhile is not looked up.
        let until = now_ms() + lease::millis(lease::for_lookup(&state.config));
        if !state.db.renew_lease(&attempt.order_id, &state.worker_id, until).await? {
            return Ok(Lookup::SettledMeanwhile);
        }
        let answer = state.pg.lookup(slot, &attempt.order_id, &attempt.payment_key, PgCaller::Recovery).await;
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
            return Ok(Lookup::Answered(answer));
        }
        last = Some(answer);
    }
    Ok(Lookup::Unavailable(last.expect("at least one try")))
}

/// Why the breaker or the budget does not let one more recovery call go now,
/// or `None` when it may go (and is counted against the budget).
pub(super) fn refusal(state: &AppState) -> Option<Recovered> {
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
pub(super) fn note_health(state: &AppState, answer: &PgAnswer) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_the_pg_cannot_settle_is_asked_less_and_less_often() {
        let timings = Timings::new(Duration::from_secs(60));
        let waits: Vec<u64> = (1..=10).map(|passes| timings.pass_backoff(passes).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 900, 900]);
        assert_eq!(timings.pass_backoff(u32::MAX), timings.backoff_cap);
    }

    #[test]
    fn timings_keep_their_proportions_to_the_interval() {
        let shipped = Timings::new(Duration::from_secs(60));
        assert_eq!(
            (shipped.min_gap, shipped.budget_retry, shipped.breaker_cool_down),
            (Duration::from_secs(1), Duration::from_secs(10), Duration::from_secs(30))
        );
        let tenfold = Timings::new(Duration::from_secs(6));
        assert_eq!(tenfold.backoff_base, Duration::from_millis(500));
        assert_eq!(tenfold.pass_backoff(3), Duration::from_secs(2));
    }
}
