//! The job engine: one loop settles, in the background, every payment whose
//! outcome is unknown, every refund being sent and every refund of a charge no
//! order made. It looks for jobs due for a pass and gives each a worker of its
//! own, under one breaker, one retry budget and a bounded number of workers;
//! each pass takes the job's lease, runs its kind's adapter (`recovery`,
//! `refund_recovery`, `orphan_recovery`), and releases it (`pass::release`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::pass::{self, Job, Recovered};
use super::{orphan_recovery, recovery, refund_recovery};
use crate::app::App;
use crate::db::{JobKind, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::resilience::lease;
use payonce_rules::settlement::{self, PassReport};

/// Looks for due jobs at start, then again when the next one falls due (at
/// most `recovery_interval` later), when woken (a confirm ended unknown, a
/// worker finished), until cancelled. Each due job is recovered by a worker of
/// its own, so a slow one (a resend the PG takes a minute over) holds up no other.
pub async fn run(app: App, shutdown: CancellationToken) {
    let workers = Arc::new(Semaphore::new(worker_limit(&app)));
    let finished = Arc::new(Mutex::new(PassReport::default()));
    loop {
        if let Err(error) = start_due(&app, &workers, &finished).await {
            tracing::error!(?error, "recovery could not look for due jobs");
        }
        let report = std::mem::take(&mut *finished.lock().expect("recovery report lock"));
        if report.has_news() {
            tracing::info!(?report, "recovery");
        }
        let pause = pause_after(&app, &report).await;
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
            _ = app.recovery_wake.notified() => {}
        }
    }
}

/// Workers at once, as the rules share the PG limit out (`recovery_workers`).
fn worker_limit(app: &App) -> usize {
    settlement::recovery_workers(app.config.pg_limit.most())
}

/// Starts a worker for each due job, as many as are free: payments first, then
/// refunds (a refund must go out, but not at the cost of settling customers'
/// payments), then refunds of charges no order made.
async fn start_due(app: &App, workers: &Arc<Semaphore>, finished: &Arc<Mutex<PassReport>>) -> Result<(), AppError> {
    for kind in JobKind::ALL {
        let free = workers.available_permits();
        if free == 0 || app.breaker.refuses_for().is_some() {
            // Nothing is claimed, counted or postponed while the breaker is open.
            break;
        }
        for key in app.db.due_jobs(kind, now_ms(), u32::try_from(free).unwrap_or(u32::MAX)).await? {
            let Ok(permit) = workers.clone().try_acquire_owned() else { break };
            let (app, finished) = (app.clone(), finished.clone());
            app.pg_tasks.clone().spawn(async move {
                let outcome = run_pass(&app, kind, &key).await;
                drop(permit);
                if let Err(error) = &outcome {
                    tracing::error!(?error, job = kind.as_str(), key, "a recovery pass failed");
                }
                finished.lock().expect("recovery report lock").count(outcome.ok());
                // A worker is free, and the report has news: look again.
                app.recovery_wake.notify_one();
            });
        }
    }
    let oldest_age = app.db.oldest_unsettled_ms().await?.map_or(0, |created| now_ms() - created);
    metrics::unknown_oldest_age(oldest_age as f64 / 1000.0);
    Ok(())
}

/// Takes the job's lease, under a holder name of this pass's own, runs one
/// pass of its kind, and releases the lease however the pass ends.
async fn run_pass(app: &App, kind: JobKind, key: &str) -> Result<Recovered, AppError> {
    let now = now_ms();
    let until = pass::from_now_ms(lease::for_lookup(&app.config));
    let holder = lease::holder(&app.worker_id);
    let Some(hinted) = app.db.claim_job(kind, key, &holder, now, until).await? else {
        return Ok(Recovered::NotOurs);
    };
    let job = Job { kind, key, holder: &holder, hinted };
    let outcome = match kind {
        JobKind::Payment => recovery::pass(app, job).await,
        JobKind::Refund => refund_recovery::pass(app, job).await,
        JobKind::OrphanRefund => orphan_recovery::pass(app, job).await,
    };
    pass::release(app, job, &outcome).await?;
    outcome.map(|pass| pass.recovered)
}

/// Until the next look, as the rules say (`settlement::pause`); an interval
/// when the database cannot say when the next job falls due.
async fn pause_after(app: &App, report: &PassReport) -> Duration {
    let timings = app.timings();
    let mut next_due = None;
    for kind in JobKind::ALL {
        match app.db.next_job_due_ms(kind).await {
            Ok(due) => next_due = next_due.into_iter().chain(due).min(),
            Err(_) => return timings.interval,
        }
    }
    settlement::pause(app.breaker.refuses_for(), report, next_due, now_ms(), &timings)
}
