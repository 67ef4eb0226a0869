//! The confirm page's payment flow as a pure state machine: events in, the next
//! state and a list of effects out. The component executes the effects (send the
//! POST, start a timer, poll, persist, lock navigation) and feeds their results
//! back as events. Nothing here touches the browser, so every rule is unit-tested.
//!
//! The rules it encodes:
//! - one attempt sends the confirm POST at most once, whatever events arrive;
//! - a timeout, a network error, a 5xx, a 409 or a 202 mean "unknown": check, do not resend;
//! - checking lasts until the server can no longer be working on the payment;
//! - a reload with a stored attempt resumes checking, or shows the stored outcome.

mod classify;
#[cfg(test)]
mod tests;

pub use classify::{Check, ConfirmReply, Verdict, classify_confirm, classify_poll};

use payonce_api::{Failure, PageConfig};
use serde::{Deserialize, Serialize};

/// The failure code shown when the confirm never reached the server.
pub const NOT_RECEIVED: &str = "CONFIRM_NOT_RECEIVED";

/// Milliseconds since the Unix epoch (`Date.now()`), so stored times survive reloads.
pub type Millis = u64;

/// What the PG's success redirect put in the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuccessParams {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
}

impl SuccessParams {
    /// Reads `paymentKey`, `orderId` and `amount` as the PG's success redirect sends
    /// them, or says what is missing.
    pub fn from_query(get: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let field = |name: &str| get(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
        let (Some(payment_key), Some(order_id), Some(amount)) =
            (field("paymentKey"), field("orderId"), field("amount"))
        else {
            return Err("The payment window did not send back the payment key, order and amount.".to_owned());
        };
        let amount = amount
            .parse::<u64>()
            .map_err(|_| format!("The amount {amount:?} in this link is not a whole number of won."))?;
        Ok(Self { payment_key, order_id, amount })
    }
}

/// A final outcome, kept with the attempt so a reload shows it without asking again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    Paid,
    Failed { failure: Failure },
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

/// What the page shows. Exposed as `data-payment-state` by [`State::name`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Reading the timings and the stored attempt.
    Starting,
    /// The confirm POST is out; waiting up to `confirm_wait`.
    Submitting {
        started_at: Millis,
    },
    /// Asking the server for the order until it is final or the window closes.
    Checking {
        started_at: Millis,
        polls_done: u32,
        polls_total: u32,
        window_ends_at: Millis,
    },
    Paid {
        order_id: String,
        amount: u64,
    },
    Failed {
        order_id: String,
        failure: Failure,
    },
    /// The window closed without an outcome; the server will settle it.
    Unresolved {
        order_id: String,
    },
    /// The page was opened without what a confirm needs.
    Invalid {
        message: String,
    },
}

impl State {
    /// The `data-payment-state` value tests and people rely on.
    pub fn name(&self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Submitting { .. } => "submitting",
            State::Checking { .. } => "checking",
            State::Paid { .. } => "paid",
            State::Failed { .. } => "failed",
            State::Unresolved { .. } => "unresolved",
            State::Invalid { .. } => "invalid",
        }
    }

    /// Whether leaving the page now could leave the customer unsure of their payment.
    pub fn is_busy(&self) -> bool {
        match self {
            State::Submitting { .. } | State::Checking { .. } => true,
            State::Starting
            | State::Paid { .. }
            | State::Failed { .. }
            | State::Unresolved { .. }
            | State::Invalid { .. } => false,
        }
    }
}

/// Something that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The page has its timings and has looked for a stored attempt.
    Opened {
        params: Result<SuccessParams, String>,
        stored: Option<StoredAttempt>,
        /// A fresh UUID v4, used only if this opening starts a new attempt.
        new_key: String,
        now: Millis,
    },
    /// The confirm POST ended: a response, or an error (including our own abort).
    ConfirmReplied { reply: ConfirmReply, now: Millis },
    /// `confirm_wait` has passed since the POST left.
    ConfirmWaitElapsed { now: Millis },
    /// Time for the next check.
    PollDue { now: Millis },
    /// A check of the order ended.
    PollReplied { check: Check, now: Millis },
}

/// Something the component must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
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
    /// Fire `PollDue` after this long.
    SchedulePoll {
        after_ms: u64,
    },
    Poll {
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
#[derive(Debug, Clone)]
pub struct Flow {
    state: State,
    timings: PageConfig,
    order_id: Option<String>,
    /// Set when `SendConfirm` is emitted and never cleared: the reducer's own
    /// guarantee that one flow sends at most one POST.
    confirm_sent: bool,
    /// What the latest informative check said: whether the server has the confirm.
    server_has_confirm: Option<bool>,
}

impl Flow {
    pub fn new(timings: PageConfig) -> Self {
        Self { state: State::Starting, timings, order_id: None, confirm_sent: false, server_has_confirm: None }
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Applies one event. Events that do not fit the current state are ignored.
    pub fn handle(&mut self, event: Event) -> Vec<Effect> {
        match (self.state.clone(), event) {
            (State::Starting, Event::Opened { params, stored, new_key, now }) => {
                self.open(params, stored, new_key, now)
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
            (State::Checking { .. }, Event::ConfirmReplied { reply, .. }) => match classify_confirm(&reply) {
                Some(verdict) => self.settle(verdict),
                None => vec![],
            },
            (State::Checking { .. }, Event::PollDue { .. }) => match &self.order_id {
                Some(order_id) => vec![Effect::Poll { order_id: order_id.clone() }],
                None => vec![],
            },
            (
                State::Checking { started_at, polls_done, polls_total, window_ends_at },
                Event::PollReplied { check, now },
            ) => {
                match check {
                    Check::Settled(verdict) => return self.settle(verdict),
                    Check::InProgress => self.server_has_confirm = Some(true),
                    Check::NotReceived => self.server_has_confirm = Some(false),
                    Check::NothingLearned => {}
                }
                let polls_done = polls_done + 1;
                if polls_done >= polls_total || now >= window_ends_at {
                    return self.stop_checking();
                }
                self.state = State::Checking { started_at, polls_done, polls_total, window_ends_at };
                vec![Effect::SchedulePoll { after_ms: self.timings.poll_interval_ms }]
            }
            _ => vec![],
        }
    }

    fn open(
        &mut self,
        params: Result<SuccessParams, String>,
        stored: Option<StoredAttempt>,
        new_key: String,
        now: Millis,
    ) -> Vec<Effect> {
        let params = match params {
            Ok(params) => params,
            Err(message) => {
                self.state = State::Invalid { message };
                return vec![];
            }
        };
        self.order_id = Some(params.order_id.clone());
        if let Some(stored) = stored.filter(|stored| stored.order_id == params.order_id) {
            // This order's POST already left, in this tab or another: never again.
            self.confirm_sent = true;
            return match stored.outcome {
                Some(Outcome::Paid) => {
                    self.state = State::Paid { order_id: stored.order_id, amount: stored.amount };
                    vec![]
                }
                Some(Outcome::Failed { failure }) => {
                    self.state = State::Failed { order_id: stored.order_id, failure };
                    vec![]
                }
                None => {
                    let resumed = Effect::Log("resuming checks of a payment already sent; not sending it again".into());
                    self.start_checking(stored.started_at, now, vec![Effect::LockNavigation, resumed])
                }
            };
        }
        let attempt = StoredAttempt {
            order_id: params.order_id.clone(),
            idempotency_key: new_key,
            payment_key: params.payment_key,
            amount: params.amount,
            started_at: now,
            outcome: None,
        };
        self.state = State::Submitting { started_at: now };
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

    /// Enters `checking`: the first check after one interval, and as many checks as
    /// it takes to outlast the server's own deadline for a payment sent at `started_at`.
    fn start_checking(&mut self, started_at: Millis, now: Millis, mut effects: Vec<Effect>) -> Vec<Effect> {
        let interval = self.timings.poll_interval_ms.max(1);
        let configured = self.timings.poll_attempts.max(1);
        let server_deadline = started_at + self.timings.server_max_processing_ms;
        let needed = server_deadline.saturating_sub(now).div_ceil(interval);
        let polls_total = configured.max(u32::try_from(needed).unwrap_or(u32::MAX));
        if polls_total > configured {
            effects.push(Effect::Log(format!(
                "checking {polls_total} times instead of {configured}: the server may take up to {} ms to settle a payment",
                self.timings.server_max_processing_ms
            )));
        }
        let window_ends_at = now + interval * u64::from(polls_total);
        self.state = State::Checking { started_at, polls_done: 0, polls_total, window_ends_at };
        effects.push(Effect::SchedulePoll { after_ms: interval });
        effects
    }

    /// The window is over without an outcome. If the server, when last asked, still
    /// had no confirm for the order, the POST never arrived: nothing can have been
    /// charged. Otherwise the server holds the payment and will settle it.
    fn stop_checking(&mut self) -> Vec<Effect> {
        let order_id = self.order_id.clone().unwrap_or_default();
        if self.server_has_confirm == Some(false) {
            return self.settle(Verdict::Failed(Failure {
                code: NOT_RECEIVED.to_owned(),
                message: "The shop did not receive your payment confirmation, so the payment was not made. \
                          You have not been charged; please try again."
                    .to_owned(),
            }));
        }
        self.state = State::Unresolved { order_id };
        vec![Effect::UnlockNavigation]
    }

    fn settle(&mut self, verdict: Verdict) -> Vec<Effect> {
        let order_id = self.order_id.clone().unwrap_or_default();
        let outcome = match verdict {
            Verdict::Paid { amount } => {
                self.state = State::Paid { order_id: order_id.clone(), amount };
                Outcome::Paid
            }
            Verdict::Failed(failure) => {
                self.state = State::Failed { order_id: order_id.clone(), failure: failure.clone() };
                Outcome::Failed { failure }
            }
        };
        vec![Effect::RecordOutcome { order_id, outcome }, Effect::UnlockNavigation]
    }
}
