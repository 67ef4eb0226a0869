//! A counterexample as a short, readable trace: one line per step, saying
//! who did what, then the attempt's row and the PG's payment after it.

use std::fmt::Write;

use stateright::Path;

use crate::pg::{CancelProcessing, Processing};
use crate::protocol::{Action, REFUND_AMOUNT};
use crate::state::{Job, State, Task};

/// The path, one numbered line per step, up to the first state for which
/// `ends` holds.
pub fn render_until(path: &Path<State, Action>, ends: impl Fn(&State) -> bool) -> String {
    let steps = path.clone().into_vec();
    let mut out = String::new();
    let first = &steps[0].0;
    let _ = writeln!(
        out,
        "start: the customer confirms with {}; the card {}; after its session the PG shows the payment {}",
        if first.names_other_order { "another order's paymentKey" } else { "its own paymentKey" },
        if first.pg.declines { "declines" } else { "is good" },
        match first.pg.expiry_shows {
            crate::pg::ExpiryShows::Expired => "EXPIRED",
            crate::pg::ExpiryShows::NotFound => "as 404",
        },
    );
    for (number, window) in steps.windows(2).enumerate() {
        let ((before, action), (after, _)) = (&window[0], &window[1]);
        let Some(action) = action else { continue };
        let _ = writeln!(out, "{:>2}. {:<66} | {}", number + 1, describe(action, after), summary(before, after));
        if ends(after) {
            break;
        }
    }
    out
}

fn task_name(server: u8, worker: u8) -> String {
    if worker == 0 { format!("server {server}'s request task") } else { format!("worker {server}.{worker}") }
}

fn job_name(job: Job) -> &'static str {
    match job {
        Job::Payment => "attempt",
        Job::Refund => "refund",
    }
}

/// What a step did, in words.
pub fn describe(action: &Action, after: &State) -> String {
    let answered = |server: u8, worker: u8| match after.task(server, worker) {
        Task::ConfirmAnswered(_, reply) | Task::ResendAnswered(_, reply) => format!(": {reply:?}"),
        Task::LookedUp(_, by, looked, _) => format!(" ({by:?}): {looked:?}"),
        Task::RefundLookedUp(_, looked) | Task::RefusalLookedUp(_, looked) => format!(": {looked:?}"),
        Task::CancelAnswered(_, reply) => format!(": {reply:?}"),
        _ => String::new(),
    };
    match *action {
        Action::Submit { server } => format!("the page sends its confirm to server {server}"),
        Action::PageChecks => "the page checks the order".to_owned(),
        Action::SecondTabSubmits { server } => format!("a second tab sends its confirm to server {server}"),
        Action::PageClosesOrder => "the page's window ends: it asks the server to close the order".to_owned(),
        Action::StoreAttempt { server } => format!("{} stores the attempt", task_name(server, 0)),
        Action::SendConfirm { server } => format!("{} sends the confirm", task_name(server, 0)),
        Action::SettleConfirm { server } => format!("{} stores the outcome", task_name(server, 0)),
        Action::Claim { server, worker, job } => format!("{} claims the {}", task_name(server, worker), job_name(job)),
        Action::AskRefund { server } => format!("an operator refunds {REFUND_AMOUNT} of the order, on server {server}"),
        Action::SendCancel { server } => format!("server {server}'s refund task sends the cancel"),
        Action::ProcessCancel { request, processing } => {
            let (server, worker) = request.to;
            let how = match processing {
                CancelProcessing::AsDocumented => "",
                CancelProcessing::TurnedAway => " with a 429 (not stored)",
                CancelProcessing::ProviderError if after.pg.keyless => " refusing every cancel of the payment (-784)",
                CancelProcessing::ProviderError => " with PROVIDER_ERROR (stored)",
            };
            let key = if after.pg.keyless { "no key".to_owned() } else { format!("key {}", request.key) };
            format!("the PG processes {}'s cancel ({key}){how}{}", task_name(server, worker), answered(server, worker))
        }
        Action::BeginPass { server, worker } => format!("{} begins its pass", task_name(server, worker)),
        Action::AskBreaker { server, worker } => {
            format!("{} asks server {server}'s breaker", task_name(server, worker))
        }
        Action::RenewAndCall { server, worker, fails } => format!(
            "{} renews its lease and calls the PG{}{}",
            task_name(server, worker),
            if fails { ", which fails" } else { "" },
            answered(server, worker)
        ),
        Action::Decide { server, worker } => format!("{} acts on the answer", task_name(server, worker)),
        Action::Process { request, processing } => {
            let (server, worker) = request.to;
            let how = match processing {
                Processing::AsDocumented => "",
                Processing::TurnedAway => " with a 429 (not stored)",
                Processing::StoredServerError => " with a 5xx it stores",
                Processing::NotSent => ": no, its connection failed and it never arrived",
                Processing::Unreadable => " and answers a body that cannot be read",
                Processing::KeyInUse => ": no, 409, its key's first request is still processing",
            };
            format!("the PG processes {}'s confirm{how}{}", task_name(server, worker), answered(server, worker))
        }
        Action::GiveUp { server, worker } => format!("{} stops waiting for the PG", task_name(server, worker)),
        Action::SessionEnds => "the PG's session for the payment ends".to_owned(),
        Action::SessionLongOver => "the session's longest processing is over too".to_owned(),
        Action::PartialCancelAtPg => "part of the charge is cancelled at the PG's console".to_owned(),
        Action::Tick => "time passes: the breakers' deadlines come".to_owned(),
        Action::OutageBegins => "the PG goes out: it answers no lookup for a while".to_owned(),
        Action::Kill { server } => format!("server {server} is killed and restarts"),
        Action::TaskStops { server, worker } => format!("a database call of {} fails", task_name(server, worker)),
        Action::Freeze { job } => format!("the {}'s lease holder freezes past its lease", job_name(job)),
        Action::LeaseRunsOut { job } => format!("the {}'s lease, of a task that is gone, runs out", job_name(job)),
        Action::AskPgNow => "an operator asks the PG now".to_owned(),
    }
}

fn summary(before: &State, after: &State) -> String {
    let row = &after.row;
    let mut line = format!("shop {}", row.status.as_str());
    if row.refunded > 0 {
        let _ = write!(line, " (refunded {})", row.refunded);
    }
    if let Some(refund) = &after.refund {
        let _ = write!(
            line,
            ", refund {}",
            match refund.settled {
                None => format!("REQUESTED (key {})", refund.key),
                Some(end) => format!("{end:?}"),
            }
        );
    }
    let _ = write!(line, ", PG {:?}", after.pg.shown_payment());
    if after.pg.charged {
        line.push_str(" charged");
    }
    if after.pg.refunded > 0 {
        let _ = write!(line, " (refunded {})", after.pg.refunded);
    }
    if after.pg.stored != before.pg.stored
        && let Some(stored) = after.pg.stored
    {
        let _ = write!(line, ", key stores {stored:?}");
    }
    line
}
