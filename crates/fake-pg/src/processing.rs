//! Running a confirm or a cancel: the store decides, a detached task
//! processes, and the caller hears the outcome if it is still there.
//!
//! The processing runs in its own task so that, as at a real PG, a caller
//! that hangs up does not stop it (unless `continue_after_disconnect` is off).

use std::time::SystemTime;

use tokio::sync::oneshot;

use crate::error::PgError;
use crate::faults::Delivery;
use crate::payment::{Payment, PaymentStatus};
use crate::state::AppState;
use crate::stats::FaultKind;
use crate::store::{Begin, Outcome, Ticket};
use crate::webhooks;

/// A confirm's or cancel's answer, when it is not an error.
#[derive(Debug)]
pub(crate) enum Reply {
    Payment(Box<Payment>),
    /// Reset the connection: the caller gets no answer at all.
    Reset,
}

/// Runs one valid confirm or cancel, as the store began it, to its answer.
pub(crate) async fn answer(state: &AppState, begin: Begin) -> Result<Reply, PgError> {
    let ticket = match begin {
        Begin::Replay(replay) => return replay.map(Reply::Payment),
        Begin::Refused(error) => return Err(error),
        Begin::FrontDoor(fault) => {
            return match fault.error() {
                Some(error) => Err(error),
                None => Ok(Reply::Reset),
            };
        }
        Begin::Start(ticket) => ticket,
    };
    let delivery = ticket.plan.delivery;
    match process(state, ticket).await {
        (Outcome::Done, Some(payment)) => match delivery {
            Delivery::Respond => Ok(Reply::Payment(Box::new(payment))),
            Delivery::Error500 => {
                state.store.note_fault(FaultKind::Error500AfterCharge);
                Err(PgError::FailedInternalSystemProcessing)
            }
            Delivery::Reset => {
                state.store.note_fault(FaultKind::ResetAfterCharge);
                Ok(Reply::Reset)
            }
        },
        (Outcome::Failed(error), _) => Err(error),
        // Reset or shut down while processing: there is no payment to show.
        (Outcome::Done, None) => Err(PgError::FailedInternalSystemProcessing),
    }
}

/// Starts the processing task and waits for it. Dropping this future (the
/// caller hung up) leaves the task running, or aborts it if so configured.
async fn process(state: &AppState, ticket: Ticket) -> (Outcome, Option<Payment>) {
    let (done_tx, done_rx) = oneshot::channel();
    let (hangup_tx, hangup_rx) = oneshot::channel::<()>();
    tokio::spawn(run(state.clone(), ticket, hangup_rx, done_tx));
    let mut caller = CallerGuard { state: state.clone(), _hangup: hangup_tx, answered: false };
    let result = done_rx.await;
    caller.answered = true;
    // The task only drops its sender without sending when the server stops.
    result.unwrap_or((Outcome::Failed(PgError::FailedInternalSystemProcessing), None))
}

/// Lives as long as the caller waits. Dropping it before the answer drops the
/// hangup sender, which is how the processing task learns the caller left.
struct CallerGuard {
    state: AppState,
    _hangup: oneshot::Sender<()>,
    answered: bool,
}

impl Drop for CallerGuard {
    fn drop(&mut self) {
        if !self.answered {
            self.state.store.note_abandoned();
        }
    }
}

enum Waited {
    Elapsed,
    CallerLeft,
}

async fn run(
    state: AppState,
    ticket: Ticket,
    hangup: oneshot::Receiver<()>,
    done: oneshot::Sender<(Outcome, Option<Payment>)>,
) {
    let latency = state.settings.clock.scaled_ms(ticket.plan.latency_ms);
    let mut stopping = state.stopping.clone();
    let taken = async {
        tokio::time::sleep(latency).await;
        state.store.hold_released().await;
    };
    let waited = tokio::select! {
        () = taken => Waited::Elapsed,
        // The sender is never used: it resolves (as an error) when dropped.
        _ = hangup, if !ticket.continue_after_disconnect => Waited::CallerLeft,
        // The server is shutting down; the processing dies with it.
        _ = stopping.wait_for(|stopping| *stopping) => return,
    };
    let outcome = match (waited, &ticket.plan.decline) {
        (Waited::CallerLeft, _) => Outcome::Failed(ticket.work.abandoned()),
        (Waited::Elapsed, Some(decline)) => Outcome::Failed(decline.clone()),
        (Waited::Elapsed, None) => Outcome::Done,
    };
    let receipt_url = state.settings.receipt_url(&ticket.payment_key);
    let (outcome, payment) = match state.store.finish(&ticket, &outcome, SystemTime::now(), receipt_url) {
        Some((settled, payment)) => (settled, Some(payment)),
        None => (outcome, None),
    };
    // A status the processing changed is announced, whoever still waits for it.
    if let Some(payment) = &payment
        && (outcome == Outcome::Done || payment.status == PaymentStatus::Aborted)
    {
        webhooks::announce(&state, payment);
    }
    let code = match (&outcome, &payment) {
        (Outcome::Done, Some(payment)) => payment.status.as_str(),
        (Outcome::Done, None) => "DONE",
        (Outcome::Failed(error), _) => error.code(),
    };
    if done.send((outcome.clone(), payment)).is_err() {
        // Nobody hears this outcome over HTTP, so say it here: this is the
        // work a caller abandoned, finished anyway.
        tracing::info!(
            work = ticket.work.name(),
            payment_key = %ticket.payment_key,
            order_id = %ticket.order_id,
            amount = ticket.amount,
            outcome = code,
            "processing finished after the caller hung up"
        );
    }
}
