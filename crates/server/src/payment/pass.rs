//! One background pass over a job (a payment, a refund, a refund of a charge
//! no order made): what it can come to, how it ends when it settled nothing
//! (released with when to look again, and an alert every so often), and the
//! gate every one of its PG calls goes through (the retry budget, then the
//! breaker). What passes add up to is the rules' (`settlement::PassReport`).

use std::future::Future;
use std::time::Duration;

use crate::app::App;
use crate::db::{JobKind, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::PgPlace;
use crate::pg::adapters::PgAdapter;
use crate::resilience::backoff::{before_retry, half_jitter};
use crate::resilience::lease;
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement;
pub(super) use payonce_rules::settlement::Recovered;

/// Lookups per attempt in one pass while the PG gives no usable answer.
pub(super) const LOOKUP_TRIES: u32 = 3;

/// The job a pass is about, and the lease it holds on it: its own, taken for
/// this pass (`lease::holder`), so that nothing it does applies once another
/// pass, of this server or another, took the job over.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job<'a> {
    pub kind: JobKind,
    pub key: &'a str,
    pub holder: &'a str,
    /// A webhook made it due: its lookups go first under the hinted allowance.
    pub hinted: bool,
}

/// What one pass over a job came to, the PG's last answer (for operators),
/// and the answered passes the job had before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pass {
    pub recovered: Recovered,
    pub last_answer: Option<String>,
    pub passes_before: u32,
    /// A moment by which the job is looked at again whatever the backoff says:
    /// when what the PG shows will have changed (a KakaoPay payment's time ends).
    pub look_again_by_ms: Option<i64>,
}

impl Pass {
    /// What a pass came to, with no moment of its own to look again by.
    pub(super) fn came_to(recovered: Recovered, last_answer: Option<String>, passes_before: u32) -> Self {
        Pass { recovered, last_answer, passes_before, look_again_by_ms: None }
    }

    /// A pass that found the job settled, or taken over, before it acted.
    pub(super) fn not_ours() -> Self {
        Pass::came_to(Recovered::NotOurs, None, 0)
    }
}

/// The moment `after` from now, in ms, as a job's lease and its next look are stored.
pub(super) fn from_now_ms(after: Duration) -> i64 {
    now_ms() + lease::millis(after)
}

/// What a pass left its job open on `answer` came to: one the PG was too
/// unwell to answer (no answer, a 5xx) counts apart, for the breaker, the
/// backoff and the operators' alert, which count only the PG's answers.
pub(super) fn left_open_by(answer: &impl PgReply) -> Recovered {
    if answer.shows_pg_unavailable() { Recovered::Unavailable } else { Recovered::Unsettled }
}

/// Why the breaker or the budget does not let one more recovery call go now,
/// or `None` when it may go (and is counted against the budget). A lookup a
/// webhook asked for (`hinted`) is counted against the hinted allowance while
/// it lasts, and against the budget after.
fn refusal(app: &App, hinted: bool) -> Option<Recovered> {
    let allowed = hinted && app.hinted_lookups.take();
    // The budget first: a half-open breaker lets one probe through, and a probe
    // granted but never sent would leave it half-open for good.
    if !allowed && !app.retry_budget.has_room() {
        metrics::recovery_over_budget();
        return Some(Recovered::OverBudget);
    }
    if !app.breaker.allows_call() {
        return Some(Recovered::HeldBack);
    }
    if !allowed {
        // Another worker may have taken the last call since; going over by one is fine.
        app.retry_budget.try_recovery_call();
    }
    None
}

/// Feeds the breaker: only a PG that gives no usable answer counts against it.
fn note_health(app: &App, answer: &impl PgReply) {
    if answer.shows_pg_unavailable() {
        app.breaker.record_failure();
    } else if app.breaker.record_answer() {
        // What the open breaker held back can go now.
        app.recovery_wake.notify_one();
    }
}

/// Ends the pass over a job it did not settle: hands it back as the
/// settlement rules say (`settlement::release`), its wait drawn from the
/// upper half so many jobs spread out, and raises the alert when they say so.
pub(super) async fn release(app: &App, job: Job<'_>, pass: &Result<Pass, AppError>) -> Result<(), AppError> {
    let Job { kind, key, holder, .. } = job;
    let (recovered, passes_before, last_answer, look_again_by) = match pass {
        Ok(pass) => (Some(pass.recovered), pass.passes_before, pass.last_answer.as_deref(), pass.look_again_by_ms),
        Err(_) => (None, 0, None, None),
    };
    let Some(release) = settlement::release(recovered, passes_before, &app.timings()) else { return Ok(()) };
    let backed_off = release.wait.map(|wait| from_now_ms(half_jitter(wait, &mut rand::rng())));
    let next_at = backed_off.map(|at| look_again_by.map_or(at, |by| at.min(by)));
    let passes = app.db.release_job(kind, key, holder, next_at, release.answered, last_answer).await?;
    if !release.answered {
        return Ok(());
    }
    if kind == JobKind::Payment {
        metrics::recovery_exhausted();
    }
    if settlement::alerts(passes) {
        match kind {
            JobKind::Payment => {
                metrics::recovery_alert();
                // The shop is told once that it waits with operators (if the order is a checkout).
                app.db.tell_unresolved(key).await?;
            }
            JobKind::Refund | JobKind::OrphanRefund => metrics::refund_alert(),
        }
        tracing::error!(
            job = kind.as_str(),
            key,
            passes,
            last_pg_answer = last_answer,
            "still not settled after many passes; it needs an operator's eye"
        );
    }
    Ok(())
}

/// How a job's lookup of its payment went.
pub(super) enum Lookup<A> {
    Answered(A),
    /// Every try got no usable answer (the last one is kept).
    Unavailable(A),
    /// The breaker or the budget refused the call.
    Refused(Recovered),
    /// The job was settled, or taken over, by someone else before the call.
    NotOurs,
}

impl<A: PgReply> Lookup<A> {
    /// The answer, or what the pass comes to without one.
    pub(super) fn answer(self) -> Result<A, (Recovered, Option<String>)> {
        match self {
            Lookup::Answered(answer) => Ok(answer),
            Lookup::Unavailable(answer) => Err((Recovered::Unavailable, Some(answer.describe()))),
            Lookup::Refused(refused) => Err((refused, None)),
            Lookup::NotOurs => Err((Recovered::NotOurs, None)),
        }
    }
}

/// The payment a job is about, as its PG shows it (`call` makes the lookup,
/// under a place of the PG's limit): each try goes through the gate, after
/// renewing the job's lease (one settled or taken over meanwhile is not looked
/// up), and is retried with full jitter while `usable` says the answer told nothing.
pub(super) async fn look_up<A, Sent>(
    app: &App,
    adapter: &dyn PgAdapter,
    job: Job<'_>,
    call: impl Fn(PgPlace) -> Sent,
    usable: impl Fn(&A) -> bool,
) -> Result<Lookup<A>, AppError>
where
    A: PgReply,
    Sent: Future<Output = A>,
{
    let mut last = None;
    for try_number in 0..LOOKUP_TRIES {
        let wait = before_retry(try_number, &mut rand::rng());
        if let Some(wait) = wait {
            metrics::recovery_retry();
            tokio::time::sleep(wait).await;
        }
        if let Some(refused) = refusal(app, job.hinted) {
            return Ok(last.map_or(Lookup::Refused(refused), Lookup::Unavailable));
        }
        let place = adapter.place().await?;
        let until = from_now_ms(lease::for_lookup(&app.config));
        if !app.db.renew_job(job.kind, job.key, job.holder, until).await? {
            return Ok(Lookup::NotOurs);
        }
        let answer = call(place).await;
        note_health(app, &answer);
        if usable(&answer) {
            return Ok(Lookup::Answered(answer));
        }
        last = Some(answer);
    }
    Ok(Lookup::Unavailable(last.expect("at least one try")))
}

/// A PG call that changes money (a resent confirm, a cancel sent again) for a
/// job this worker holds: through the gate, under a PG place, with the job's
/// lease renewed for as long as the call may take (a renewal that finds the
/// job settled or taken over sends nothing), then shortened once the answer is
/// in, so a worker that dies then does not hold the job for a whole call. The
/// breaker hears how the PG answered. `Err` is what the pass came to when
/// nothing was sent.
pub(super) async fn send_under_lease<A, Call, Sent>(
    app: &App,
    adapter: &dyn PgAdapter,
    job: Job<'_>,
    call: Call,
) -> Result<Result<A, (Recovered, Option<String>)>, AppError>
where
    A: PgReply,
    Call: FnOnce(PgPlace) -> Sent,
    Sent: Future<Output = Result<A, AppError>>,
{
    // A call that moves money is never the hint's: it goes under the budget.
    if let Some(refused) = refusal(app, false) {
        return Ok(Err((refused, None)));
    }
    let place = adapter.place().await?;
    let until = from_now_ms(lease::for_confirm(&app.config));
    if !app.db.renew_job(job.kind, job.key, job.holder, until).await? {
        return Ok(Err((Recovered::NotOurs, None)));
    }
    let answer = call(place).await?;
    let until = from_now_ms(lease::margin(&app.config));
    app.db.renew_job(job.kind, job.key, job.holder, until).await?;
    note_health(app, &answer);
    Ok(Ok(answer))
}
