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
use crate::pg::{PgConfirm, PgVerdict, classify};
use crate::state::AppState;

/// Calls per attempt in one pass before it waits for the next pass.
const TRIES_PER_PASS: u32 = 4;
/// Attempts recovered at once; each holds at most one PG slot.
const PARALLEL_ATTEMPTS: usize = 4;
/// Most attempts looked at in one pass.
const PASS_LIMIT: u32 = 500;
/// Extra time before a PENDING attempt counts as abandoned by its server.
const PENDING_GRACE: Duration = Duration::from_secs(5);

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

/// One pass over every attempt that needs settling.
pub async fn run_pass(state: &AppState) -> Result<PassReport, AppError> {
    let abandoned_before = now_ms() - millis(state.config.max_processing() + PENDING_GRACE);
    let attempts = state.db.unsettled_attempts(abandoned_before, PASS_LIMIT).await?;
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

/// Tries to settle one attempt; says whether it did.
async fn recover(state: &AppState, attempt: Attempt) -> Result<bool, AppError> {
    if attempt.status == OrderStatus::Pending {
        // Its server stopped waiting long ago: from here on the outcome is unknown.
        let transition = Transition::unknown("left pending by a server that stopped");
        settle::apply(state, &attempt.order_id, &attempt.idempotency_key, OrderStatus::Pending, transition).await?;
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
            settle::apply(state, &attempt.order_id, &attempt.idempotency_key, OrderStatus::Unknown, transition).await?;
            return Ok(true);
        }
    }
    metrics::recovery_exhausted();
    state.db.count_recovery_pass(&attempt.order_id).await?;
    Ok(false)
}

/// One call with the attempt's own key; the transition if the answer settles it.
async fn ask_pg(state: &AppState, attempt: &Attempt) -> Option<Transition> {
    let slot = state.pg.slot().await;
    let answer = state
        .pg
        .client()
        .confirm(PgConfirm {
            payment_key: &attempt.payment_key,
            order_id: &attempt.order_id,
            amount: attempt.amount,
            idempotency_key: &attempt.idempotency_key,
        })
        .await;
    let mut verdict = classify(&answer);
    if verdict == PgVerdict::AlreadyProcessed {
        // Processed under another request: the payment itself tells the outcome.
        verdict = classify(&state.pg.client().payment_for_order(&attempt.order_id).await);
    }
    drop(slot);
    tracing::debug!(order_id = attempt.order_id, ?verdict, "recovery asked the PG");
    match verdict {
        PgVerdict::Charged => {
            state.breaker.record_answer();
            Some(Transition::paid())
        }
        PgVerdict::Declined(failure) => {
            state.breaker.record_answer();
            Some(Transition::failed(failure))
        }
        PgVerdict::StillProcessing | PgVerdict::AlreadyProcessed => {
            state.breaker.record_answer();
            None
        }
        // On a retry these say nothing about the first request, which may have
        // been charged: only a definitive answer about the payment settles it.
        PgVerdict::TurnedAway(_) | PgVerdict::NotSent | PgVerdict::Unknown(_) => {
            state.breaker.record_failure();
            None
        }
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
