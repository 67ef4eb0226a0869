//! Settling payments the PG left unknown, and ones a stopped server left pending,
//! by asking the PG again with the attempt's own idempotency key: the PG replays
//! the first result, says it is still processing, or processes it now if the first
//! request never arrived. It never creates a second payment.

use std::time::Duration;

use futures::StreamExt;
use payonce_api::OrderStatus;
use tokio_util::sync::CancellationToken;

use super::backoff::full_jitter;
use super::settle;
use crate::db::{Attempt, Transition, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{PgAnswer, PgConfirm, PgVerdict, verdict_for};
use crate::state::AppState;

/// Calls per attempt in one pass before it waits for the next pass.
const TRIES_PER_PASS: u32 = 4;
/// Attempts recovered at once; each holds at most one PG slot.
const PARALLEL_ATTEMPTS: usize = 4;
/// Most attempts looked at in one pass.
const PASS_LIMIT: u32 = 500;
/// Extra time before a PENDING attempt counts as abandoned by its server.
const PENDING_GRACE: Duration = Duration::from_secs(5);
/// Wait after an attempt's first unsettled pass; it doubles with each further one.
const PASS_BACKOFF_BASE: Duration = Duration::from_secs(5);
/// The longest wait between two passes over one attempt.
const PASS_BACKOFF_CAP: Duration = Duration::from_secs(15 * 60);
/// Unsettled passes after which an attempt is reported as needing an operator.
const PASSES_BEFORE_ALERT: u32 = 10;

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassReport {
    pub settled: usize,
    pub unsettled: usize,
}

/// Runs a pass at start, then every `recovery_interval` or when woken, until cancelled.
pub async fn run(state: AppState, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            report = run_pass(&state) => match report {
                Ok(report) if report != PassReport::default() => tracing::info!(?report, "recovery pass"),
                Ok(_) => {}
                Err(error) => tracing::error!(?error, "recovery pass failed"),
            },
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(state.config.recovery_interval) => {}
            _ = state.recovery_wake.notified() => {}
        }
    }
}

/// One pass over every attempt whose recovery is due.
pub async fn run_pass(state: &AppState) -> Result<PassReport, AppError> {
    let now = now_ms();
    let abandoned_before = now - millis(state.config.max_processing() + PENDING_GRACE);
    let attempts = state.db.due_attempts(now, abandoned_before, PASS_LIMIT).await?;
    let outcomes: Vec<Result<bool, AppError>> = futures::stream::iter(attempts)
        .map(|attempt| recover(state, attempt))
        .buffer_unordered(PARALLEL_ATTEMPTS)
        .collect()
        .await;
    let mut report = PassReport::default();
    for outcome in outcomes {
        match outcome {
            Ok(true) => report.settled += 1,
            Ok(false) => report.unsettled += 1,
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

/// Tries to settle one attempt; says whether it did. If not, schedules its next pass.
async fn recover(state: &AppState, attempt: Attempt) -> Result<bool, AppError> {
    if attempt.status == OrderStatus::Pending {
        // Its server stopped waiting long ago: from here on the outcome is unknown.
        let transition = Transition::unknown("left pending by a server that stopped");
        settle::apply(state, &attempt.order_id, &attempt.idempotency_key, &[OrderStatus::Pending], transition).await?;
    }
    for retry in 0..TRIES_PER_PASS {
        if retry > 0 {
            metrics::recovery_retry();
            let wait = full_jitter(retry - 1, &mut rand::rng());
            tokio::time::sleep(wait).await;
        }
        if !state.breaker.allows_call() {
            break;
        }
        if let Some(transition) = ask_pg(state, &attempt).await {
            let from = [OrderStatus::Unknown];
            settle::apply(state, &attempt.order_id, &attempt.idempotency_key, &from, transition).await?;
            return Ok(true);
        }
    }
    metrics::recovery_exhausted();
    let passes = attempt.recovery_passes + 1;
    if passes == PASSES_BEFORE_ALERT {
        tracing::error!(
            order_id = attempt.order_id,
            idempotency_key = attempt.idempotency_key,
            passes,
            "payment still unsettled after many recovery passes; it needs an operator"
        );
    }
    state.db.postpone_recovery(&attempt.order_id, now_ms() + millis(pass_backoff(passes))).await?;
    Ok(false)
}

/// How long an attempt waits after its `passes`-th unsettled pass: doubling from
/// [`PASS_BACKOFF_BASE`] up to [`PASS_BACKOFF_CAP`], so one that the PG cannot settle
/// yet is asked less and less often and never crowds out the others.
fn pass_backoff(passes: u32) -> Duration {
    PASS_BACKOFF_BASE.saturating_mul(2u32.saturating_pow(passes.saturating_sub(1))).min(PASS_BACKOFF_CAP)
}

/// One call with the attempt's own key; the transition if the answer settles it.
async fn ask_pg(state: &AppState, attempt: &Attempt) -> Option<Transition> {
    let slot = state.pg.slot().await;
    let client = state.pg.client();
    let mut answer = client
        .confirm(PgConfirm {
            payment_key: &attempt.payment_key,
            order_id: &attempt.order_id,
            amount: attempt.amount,
            idempotency_key: &attempt.idempotency_key,
        })
        .await;
    let mut verdict = verdict_for(&answer, &attempt.order_id, attempt.amount);
    if verdict == PgVerdict::AlreadyProcessed {
        // Processed under another request: only the payment itself tells the outcome.
        // An error here (a 404 from a lagging replica, say) proves nothing.
        answer = client.payment_for_order(&attempt.order_id).await;
        verdict = match answer {
            PgAnswer::Payment { .. } => verdict_for(&answer, &attempt.order_id, attempt.amount),
            _ => PgVerdict::Unknown("the PG did not show the payment it says it processed".to_owned()),
        };
    }
    drop(slot);
    if answer.shows_pg_unavailable() {
        state.breaker.record_failure();
    } else {
        state.breaker.record_answer();
    }
    tracing::debug!(order_id = attempt.order_id, ?verdict, "recovery asked the PG");
    match verdict {
        PgVerdict::Charged => Some(Transition::paid()),
        PgVerdict::Declined(failure) => Some(Transition::failed(failure)),
        // On a retry these say nothing about the first request, which may have
        // been charged: only a definitive answer about the payment settles it.
        PgVerdict::StillProcessing
        | PgVerdict::AlreadyProcessed
        | PgVerdict::TurnedAway(_)
        | PgVerdict::NotSent
        | PgVerdict::Unknown(_) => None,
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_the_pg_cannot_settle_is_asked_less_and_less_often() {
        let waits: Vec<u64> = (1..=10).map(|passes| pass_backoff(passes).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 900, 900]);
        assert_eq!(pass_backoff(u32::MAX), PASS_BACKOFF_CAP);
    }
}
