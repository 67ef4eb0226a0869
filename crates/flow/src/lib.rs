//! The confirm page's payment flow as a pure state machine: events in, the next
//! state and a list of effects out. Whoever runs it executes the effects (check
//! the order, claim it among tabs, send the POST, start a timer, check, close the
//! order, persist, lock navigation) and feeds their results back as events: the
//! page in the browser (`src/pages/confirm/runner.rs`), and the chaos campaign's
//! and the experiments' customers over HTTP (`payonce_chaos::customer`), so the
//! campaign tests what customers run. Nothing here does I/O, so every rule is
//! unit-tested, and a mutant of it is built and tested in seconds.
//!
//! The rules it encodes:
//! - one attempt sends the confirm POST at most once, whatever events arrive;
//! - with no attempt stored, the server is asked first: a server that already has
//!   the confirm (or the outcome) is checked, never sent to again;
//! - of the tabs of one browser that open the same order, only the one holding its
//!   claim sends; the others check;
//! - a timeout, a network error, a 5xx, a 409 or a 202 mean "unknown": check, do not resend;
//! - checking lasts until the server can no longer be working on the payment;
//! - each check may wait on the server for the order to change, so a final status
//!   is seen the moment it is known; checks still start about an interval apart;
//! - only the server says "not charged": when checking ends and the server had never
//!   received the confirm, the page asks it to close the order and shows its answer;
//! - a reload with a stored attempt resumes checking, or shows the stored outcome.

mod classify;
pub mod returned;
#[cfg(test)]
mod tests;

pub use classify::{
    Check, ConfirmReply, Verdict, classify_check, classify_confirm, classify_refused_check, retry_after_ms,
};

use payonce_api::{Failure, PageConfig};
use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch (`Date.now()`), so stored times survive reloads.
pub type Millis = u64;

/// What the PG's success redirect put in the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuccessParams {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
}

/// Why a success link cannot be confirmed (the page words it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidLink {
    /// The payment key, the order or the amount is missing.
    Missing,
    /// The amount, as written in the link, is not a whole number of won.
    Amount(String),
}

impl SuccessParams {
    /// Reads `paymentKey`, `orderId` and `amount` as the PG's success redirect sends
    /// them, or says what is wrong.
    pub fn from_query(get: impl Fn(&str) -> Option<String>) -> Result<Self, InvalidLink> {
        let field = |name: &str| get(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
        let (Some(payment_key), Some(order_id), Some(amount)) =
            (field("paymentKey"), field("orderId"), field("amount"))
        else {
            return Err(InvalidLink::Missing);
        };
        let amount = amount.parse::<u64>().map_err(|_| InvalidLink::Amount(amount))?;
        Ok(Self { payment_key, order_id, amount })
    }
}

/// A final outcome, kept with the attempt so a reload shows it without asking again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    Paid,
    Refunded { partial: bool },
    Failed { failure: Failure },
    Elsewhere,
}

/// One payment attempt as persisted in the browser before its POST leaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredAttempt {
    pub order_id: String,
    pub idempotency_key: String,
    pub payment_key: String,
    pub amount: u64,
    pub started_at: Millis,
    #[serde(default)]
    pub outcome: Option<Outcome>,
}

/// What the page shows. Exposed as `data-payment-state` by [`State::name`]; a few
/// steps of the reducer share a name because they look the same to the customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Reading the timings and the stored attempt.
    Starting,
    /// No attempt is stored: asking the server whether it already has the confirm.
    Verifying,
    /// The server has no confirm: finding out whether this tab is the one that sends.
    Claiming,
    /// The confirm POST is out; waiting up to `confirm_wait`.
    Submitting {
        started_at: Millis,
    },
    /// Asking the server for the order until it is final or the window closes.
    Checking {
        started_at: Millis,
        checks_done: u32,
        checks_total: u32,
        window_ends_at: Millis,
    },
    /// The window closed and the server, when last asked, had never received the
    /// confirm: asking it to close the order, and waiting for its word.
    Closing {
        started_at: Millis,
        checks_total: u32,
        window_ends_at: Millis,
    },
    Paid {
        order_id: String,
        amount: u64,
    },
    /// Charged, then cancelled and refunded in full, or (`partial`) in part.
    Refunded {
        order_id: String,
        amount: u64,
        partial: bool,
    },
    Failed {
        order_id: String,
        failure: Failure,
    },
    /// The window closed without an outcome; the server will settle it.
    Unresolved {
        order_id: String,
    },
    /// The order is not this browser's: it was placed in another one.
    Elsewhere {
        order_id: String,
    },
    /// The page was opened without what a confirm needs.
    Invalid {
        reason: InvalidLink,
    },
}

impl State {
    /// The `data-payment-state` value tests and people rely on.
    pub fn name(&self) -> &'static str {
        match self {
            State::Starting | State::Verifying | State::Claiming => "starting",
            State::Submitting { .. } => "submitting",
            // Closing is the last check: the server is asked once more, for its last word.
            State::Checking { .. } | State::Closing { .. } => "checking",
            State::Paid { .. } => "paid",
            State::Refunded { .. } => "refunded",
            State::Failed { .. } => "failed",
            State::Unresolved { .. } => "unresolved",
            State::Elsewhere { .. } => "elsewhere",
            State::Invalid { .. } => "invalid",
        }
    }

    /// Whether leaving the page now could leave the customer unsure of their payment.
    pub fn is_busy(&self) -> bool {
        match self {
            State::Submitting { .. } | State::Checking { .. } | State::Closing { .. } => true,
            State::Starting
            | State::Verifying
            | State::Claiming
            | State::Paid { .. }
            | State::Refunded { .. }
            | State::Failed { .. }
            | State::Unresolved { .. }
            | State::Elsewhere { .. }
            | State::Invalid { .. } => false,
        }
    }

    /// Whether the flow is over: nothing it does will change the state again.
    pub fn is_final(&self) -> bool {
        match self {
            State::Paid { .. }
            | State::Refunded { .. }
            | State::Failed { .. }
            | State::Unresolved { .. }
            | State::Elsewhere { .. }
            | State::Invalid { .. } => true,
            State::Starting
            | State::Verifying
            | State::Claiming
            | State::Submitting { .. }
            | State::Checking { .. }
            | State::Closing { .. } => false,
        }
    }
}

/// Something that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The page has its timings and has looked for a stored attempt.
    Opened { params: Result<SuccessParams, InvalidLink>, stored: Option<StoredAttempt>, now: Millis },
    /// The check made before sending, because no attempt was stored, ended.
    Verified { check: Check, now: Millis },
    /// This tab learned whether it holds the order's claim among this browser's tabs
    /// (`mine`), with the attempt stored at that moment, read while holding it.
    Claimed {
        mine: bool,
        stored: Option<StoredAttempt>,
        /// A fresh UUID v4, used only if this tab starts a new attempt.
        new_key: String,
        now: Millis,
    },
    /// The confirm POST ended: a response, or an error (including our own abort).
    ConfirmReplied { reply: ConfirmReply, now: Millis },
    /// `confirm_wait` has passed since the POST left.
    ConfirmWaitElapsed { now: Millis },
    /// Time for the next check.
    CheckDue { now: Millis },
    /// A check of the order ended.
    CheckReplied { check: Check, now: Millis },
    /// The server answered the request to close the order (`NothingLearned`: it did not).
    AbandonReplied { check: Check, now: Millis },
}

/// Something the component must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Ask the server for the order before sending anything (`Verified`).
    Verify {
        order_id: String,
    },
    /// Find out whether this tab may send: no other tab of this browser is paying
    /// for the order (`Claimed`). The tab that sends keeps the claim until the
    /// flow is final.
    Claim {
        order_id: String,
    },
    /// Write the attempt to storage. Always emitted before `SendConfirm`.
    PersistAttempt(StoredAttempt),
    SendConfirm {
        order_id: String,
        idempotency_key: String,
        payment_key: String,
        amount: u64,
    },
    /// Fire `ConfirmWaitElapsed` after this long.
    StartConfirmTimer {
        after_ms: u64,
    },
    /// Stop waiting for the POST (AbortController). Changes nothing on the server.
    AbortConfirm,
    /// Fire `CheckDue` after this long.
    ScheduleCheck {
        after_ms: u64,
    },
    /// Check the order, letting the server hold the check up to `wait_ms` for a change.
    SendCheck {
        order_id: String,
        wait_ms: u64,
    },
    /// Ask the server to close the order if it still has no confirm (`AbandonReplied`).
    Abandon {
        order_id: String,
    },
    /// Keep the final outcome with the stored attempt.
    RecordOutcome {
        order_id: String,
        outcome: Outcome,
    },
    /// Block back navigation, in-app links and unload.
    LockNavigation,
    UnlockNavigation,
    /// Explain a decision in the console.
    Log(String),
}

/// The flow: its state, the timings, and the facts that outlive a state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    state: State,
    timings: PageConfig,
    params: Option<SuccessParams>,
    /// Set when `SendConfirm` is emitted, or when this order's POST is known to have
    /// left from elsewhere, and never cleared: the reducer's own guarantee that one
    /// flow sends at most one POST.
    confirm_sent: bool,
    /// Whether an attempt for the order is meant to be in storage (loaded, or
    /// persisted), so that an outcome has something to be kept with.
    attempt_stored: bool,
    /// What the latest informative check said: whether the server has the confirm.
    server_has_confirm: Option<bool>,
    /// When the check in flight (or the last one) started: the next starts an
    /// interval after it, however long the server held it.
    check_started_at: Millis,
}

impl Flow {
    pub fn new(timings: PageConfig) -> Self {
        Self {
            state: State::Starting,
            timings,
            params: None,
            confirm_sent: false,
            attempt_stored: false,
            server_has_confirm: None,
            check_started_at: 0,
        }
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Applies one event. Events that do not fit the current state are ignored.
    pub fn handle(&mut self, event: Event) -> Vec<Effect> {
        match (self.state.clone(), event) {
            (State::Starting, Event::Opened { params, stored, now }) => self.open(params, stored, now),
            (State::Verifying, Event::Verified { check, now }) => match check {
                Check::Settled(verdict) => self.settle(verdict),
                Check::InProgress => {
                    self.server_has_confirm = Some(true);
                    self.resume(now, now, "the server already has this payment; checking it instead of sending")
                }
                // A server that cannot be reached is no reason to hold the payment back:
                // it refuses a second payment for an order itself.
                Check::NotReceived | Check::NothingLearned | Check::Throttled { .. } => {
                    self.state = State::Claiming;
                    vec![Effect::Claim { order_id: self.order_id() }]
                }
            },
            (State::Claiming, Event::Claimed { mine, stored, new_key, now }) => {
                match (mine, stored.filter(|stored| stored.order_id == self.order_id())) {
                    (_, Some(stored)) => self.open_stored(stored, now),
                    (true, None) => self.send(new_key, now),
                    (false, None) => {
                        self.resume(now, now, "another tab is sending this payment; checking it instead of sending")
                    }
                }
            }
            (State::Submitting { started_at }, Event::ConfirmReplied { reply, now }) => {
                match classify_confirm(&reply) {
                    Some(verdict) => self.settle(verdict),
                    None => self.start_checking(started_at, now, vec![]),
                }
            }
            (State::Submitting { started_at }, Event::ConfirmWaitElapsed { now }) => {
                self.start_checking(started_at, now, vec![Effect::AbortConfirm])
            }
            // A reply that arrives while checking is still the truth if it is definitive
            // (for example the abort raced a response already on its way).
            (State::Checking { .. } | State::Closing { .. }, Event::ConfirmReplied { reply, .. }) => {
                match classify_confirm(&reply) {
                    Some(verdict) => self.settle(verdict),
                    None => vec![],
                }
            }
            (State::Checking { .. }, Event::CheckDue { now }) => {
                self.check_started_at = now;
                vec![Effect::SendCheck { order_id: self.order_id(), wait_ms: self.timings.check_wait_ms }]
            }
            (
                State::Checking { started_at, checks_done, checks_total, window_ends_at },
                Event::CheckReplied { check, now },
            ) => {
                let since_start = now.saturating_sub(self.check_started_at);
                let rest_of_interval = self.timings.check_interval_ms.saturating_sub(since_start);
                match check {
                    Check::Settled(verdict) => return self.settle(verdict),
                    Check::InProgress => self.server_has_confirm = Some(true),
                    Check::NotReceived => self.server_has_confirm = Some(false),
                    Check::NothingLearned => {}
                    // Not counted among the checks: the server has not been asked
                    // about the payment. The window still ends when it would.
                    Check::Throttled { retry_after_ms } => {
                        if now >= window_ends_at {
                            return self.stop_checking(started_at, checks_total, window_ends_at);
                        }
                        return vec![
                            Effect::Log(format!(
                                "the server asked to check less often; checking again in {retry_after_ms} ms"
                            )),
                            Effect::ScheduleCheck { after_ms: rest_of_interval.max(retry_after_ms) },
                        ];
                    }
                }
                let checks_done = checks_done + 1;
                if checks_done >= checks_total || now >= window_ends_at {
                    return self.stop_checking(started_at, checks_total, window_ends_at);
                }
                self.state = State::Checking { started_at, checks_done, checks_total, window_ends_at };
                // A check the server held for its whole wait is followed at once; one
                // answered early (a change that settles nothing) after the rest of the interval.
                vec![Effect::ScheduleCheck { after_ms: rest_of_interval }]
            }
            (State::Closing { .. }, Event::AbandonReplied { check, .. }) => match check {
                Check::Settled(verdict) => self.settle(verdict),
                // Still in progress, or no answer: the page cannot say more than that.
                Check::InProgress | Check::NotReceived | Check::NothingLearned | Check::Throttled { .. } => {
                    self.unresolved()
                }
            },
            _ => vec![],
        }
    }

    fn order_id(&self) -> String {
        self.params.as_ref().map(|params| params.order_id.clone()).unwrap_or_default()
    }

    fn open(
        &mut self,
        params: Result<SuccessParams, InvalidLink>,
        stored: Option<StoredAttempt>,
        now: Millis,
    ) -> Vec<Effect> {
        let params = match params {
            Ok(params) => params,
            Err(reason) => {
                self.state = State::Invalid { reason };
                return vec![];
            }
        };
        let order_id = params.order_id.clone();
        self.params = Some(params);
        match stored.filter(|stored| stored.order_id == order_id) {
            Some(stored) => self.open_stored(stored, now),
            None => {
                // Nothing stored here, which is also what a failed write looks like:
                // the server says whether this order's confirm already left.
                self.state = State::Verifying;
                vec![Effect::Verify { order_id }]
            }
        }
    }

    /// This order's POST already left, from this tab or another: never again. Shows
    /// the stored outcome, or resumes checking.
    fn open_stored(&mut self, stored: StoredAttempt, now: Millis) -> Vec<Effect> {
        self.confirm_sent = true;
        self.attempt_stored = true;
        let order_id = stored.order_id;
        let amount = stored.amount;
        match stored.outcome {
            Some(outcome) => {
                self.state = match outcome {
                    Outcome::Paid => State::Paid { order_id, amount },
                    Outcome::Refunded { partial } => State::Refunded { order_id, amount, partial },
                    Outcome::Failed { failure } => State::Failed { order_id, failure },
                    Outcome::Elsewhere => State::Elsewhere { order_id },
                };
                vec![]
            }
            None => {
                self.resume(stored.started_at, now, "resuming checks of a payment already sent; not sending it again")
            }
        }
    }

    /// Checks a payment whose POST this flow did not send, as if it left at `started_at`.
    fn resume(&mut self, started_at: Millis, now: Millis, why: &str) -> Vec<Effect> {
        self.confirm_sent = true;
        self.start_checking(started_at, now, vec![Effect::LockNavigation, Effect::Log(why.to_owned())])
    }

    fn send(&mut self, idempotency_key: String, now: Millis) -> Vec<Effect> {
        let Some(params) = self.params.clone() else { return vec![] };
        let attempt = StoredAttempt {
            order_id: params.order_id,
            idempotency_key,
            payment_key: params.payment_key,
            amount: params.amount,
            started_at: now,
            outcome: None,
        };
        self.state = State::Submitting { started_at: now };
        self.attempt_stored = true;
        let mut effects = vec![Effect::LockNavigation, Effect::PersistAttempt(attempt.clone())];
        if !self.confirm_sent {
            self.confirm_sent = true;
            effects.push(Effect::SendConfirm {
                order_id: attempt.order_id,
                idempotency_key: attempt.idempotency_key,
                payment_key: attempt.payment_key,
                amount: attempt.amount,
            });
        }
        effects.push(Effect::StartConfirmTimer { after_ms: self.timings.confirm_wait_ms });
        effects
    }

    /// Enters `checking`: the first check at once (it waits on the server for a
    /// change), and as many checks, an interval apart, as it takes to outlast the
    /// server's own deadline for a payment sent at `started_at`.
    fn start_checking(&mut self, started_at: Millis, now: Millis, mut effects: Vec<Effect>) -> Vec<Effect> {
        let interval = self.timings.check_interval_ms.max(1);
        let configured = self.timings.max_checks.max(1);
        let server_deadline = started_at + self.timings.server_max_processing_ms;
        let needed = server_deadline.saturating_sub(now).div_ceil(interval);
        let checks_total = configured.max(u32::try_from(needed).unwrap_or(u32::MAX));
        if checks_total > configured {
            effects.push(Effect::Log(format!(
                "checking {checks_total} times instead of {configured}: the server may take up to {} ms to settle a payment",
                self.timings.server_max_processing_ms
            )));
        }
        let window_ends_at = now + interval * u64::from(checks_total);
        self.state = State::Checking { started_at, checks_done: 0, checks_total, window_ends_at };
        effects.push(Effect::ScheduleCheck { after_ms: 0 });
        effects
    }

    /// The window is over without an outcome. If the server, when last asked, still
    /// had no confirm for the order, the POST may never have arrived; only the server
    /// can make that final (and say so), so it is asked to close the order. Otherwise
    /// the server holds the payment and will settle it.
    fn stop_checking(&mut self, started_at: Millis, checks_total: u32, window_ends_at: Millis) -> Vec<Effect> {
        if self.server_has_confirm == Some(false) {
            self.state = State::Closing { started_at, checks_total, window_ends_at };
            return vec![
                Effect::Log("the server never received the confirm; asking it to close the order".into()),
                Effect::Abandon { order_id: self.order_id() },
            ];
        }
        self.unresolved()
    }

    fn unresolved(&mut self) -> Vec<Effect> {
        self.state = State::Unresolved { order_id: self.order_id() };
        vec![Effect::UnlockNavigation]
    }

    fn settle(&mut self, verdict: Verdict) -> Vec<Effect> {
        let order_id = self.order_id();
        let (state, outcome) = match verdict {
            Verdict::Paid { amount } => (State::Paid { order_id: order_id.clone(), amount }, Outcome::Paid),
            Verdict::Refunded { amount, partial } => {
                (State::Refunded { order_id: order_id.clone(), amount, partial }, Outcome::Refunded { partial })
            }
            Verdict::Failed(failure) => {
                (State::Failed { order_id: order_id.clone(), failure: failure.clone() }, Outcome::Failed { failure })
            }
            Verdict::Elsewhere => (State::Elsewhere { order_id: order_id.clone() }, Outcome::Elsewhere),
        };
        self.state = state;
        let mut effects = vec![];
        if self.attempt_stored {
            effects.push(Effect::RecordOutcome { order_id, outcome });
        }
        effects.push(Effect::UnlockNavigation);
        effects
    }
}
