//! All state: payments (window sessions are payments not yet confirmed),
//! idempotency records, the runtime configuration, the fault RNG and the
//! counters, behind one mutex.
//!
//! One lock keeps every confirm and cancel decision atomic (replay or
//! process, the contract limit, duplicate orders, what is left to refund) and
//! is never held across an `.await`. Confirms and cancels share the
//! idempotency records, the fault draws and the processing bookkeeping
//! (`begin_with`, `finish`); what each checks and does is theirs (`admit`,
//! `settle_approval` in `store/confirm.rs`, the cancel's in `store/cancel.rs`);
//! the payment window's sessions are `store/window.rs`'s.
//!
//! Time-bound rules of Toss (a paymentKey must be confirmed within ten minutes
//! of its window; idempotency records live fifteen days) run on the server's
//! clock, scaled by `time_scale` like every latency.

mod cancel;
mod confirm;
mod session;
mod window;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::time::Instant;

use crate::clock::{Clock, kst, unix_seconds};
use crate::config::{ConfigError, ReplayMode, RuntimeConfig};
use crate::error::PgError;
use crate::faults::{Delivery, FaultRng, FrontDoorFault, Plan};
use crate::payment::{self, Payment, PaymentStatus};
use crate::scenario::Scenario;
use crate::stats::{Book, Counters, FaultKind, Stats};
use crate::transactions::{Ledger, Query, Transaction, UnknownKey};
use crate::work::Work;

pub(crate) use cancel::CancelRequest;
pub(crate) use confirm::ConfirmRequest;
pub(crate) use session::{Session, SessionChoice, SessionView, WindowEnd};
pub(crate) use window::{AmountMismatch, Submitted, WindowRequest};

/// Toss scopes an idempotency key to the merchant, the method and the URL.
const CONFIRM_METHOD: &str = "POST";
const CONFIRM_PATH: &str = "/v1/payments/confirm";
/// Toss keeps an idempotency record for 15 days.
const IDEMPOTENCY_TTL: Duration = Duration::from_secs(15 * 24 * 60 * 60);
/// Toss: a payment must be confirmed within 10 minutes of its payment window;
/// after that the session is gone and the payment is EXPIRED.
pub(crate) const CONFIRM_DEADLINE: Duration = Duration::from_secs(10 * 60);

/// A complete answer to a confirm or cancel: the Payment (200) or an error.
pub(crate) type Answer = Result<Box<Payment>, PgError>;

/// What a confirm or cancel leads to, decided under the lock.
pub(crate) enum Begin {
    /// The idempotency key's stored answer, answered again.
    Replay(Answer),
    /// Refused before processing. Refusals about the payment itself (its
    /// session expired or was canceled, it was processed under another key,
    /// there is not that much left to refund) are stored for the idempotency
    /// key in Toss's replay mode; validation is not.
    Refused(PgError),
    /// Turned away by an injected fault before processing; nothing is stored.
    FrontDoor(FrontDoorFault),
    /// A new processing, already counted in flight.
    Start(Ticket),
}

/// A processing under way: what the processing task needs to settle it.
#[derive(Clone, Debug)]
pub(crate) struct Ticket {
    pub(crate) payment_key: String,
    pub(crate) order_id: String,
    /// What it charges or refunds.
    pub(crate) amount: u64,
    pub(crate) work: Work,
    pub(crate) plan: Plan,
    pub(crate) continue_after_disconnect: bool,
    /// Where its answer is recorded, if it came with an Idempotency-Key.
    scope: Option<Scope>,
    /// State generation; a reset makes older tickets settle nothing.
    epoch: u64,
}

/// What an admission check let through: the ticket without its bookkeeping.
struct Admitted {
    payment_key: String,
    order_id: String,
    amount: u64,
    work: Work,
    plan: Plan,
}

/// How a processing ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The work was done: charged, or refunded.
    Done,
    Failed(PgError),
}

/// Where the window sends the customer back to.
#[derive(Clone, Debug)]
pub(crate) struct WindowReturn {
    pub(crate) success_url: String,
    pub(crate) fail_url: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not confirmed yet.
    Open,
    Processing,
    Settled,
}

struct Record {
    payment: Payment,
    scenario: Option<Scenario>,
    phase: Phase,
    window: Option<WindowReturn>,
    /// Past this, an unconfirmed payment is EXPIRED and a confirm gets 404.
    confirm_by: Instant,
    /// A cancel of it is being processed.
    cancel_in_progress: bool,
    /// When its last cancel started processing: Toss processes only the first
    /// of two cancels of a payment within a second.
    last_cancel_at: Option<Instant>,
    /// A session that hands the merchant a token (KakaoPay's `pg_token`);
    /// `None` for Toss's windows and made-up keys.
    session: Option<Session>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Scope {
    merchant: String,
    method: &'static str,
    path: String,
    key: String,
}

enum Entry {
    Processing,
    Settled(Settled),
}

/// A key whose first request is complete.
struct Settled {
    /// What the first request was answered, or would have been had its caller
    /// stayed: a reset after a charge still produced the DONE payment.
    first_answer: Answer,
    /// The processing it ran, if any: the paymentKey and how it ended.
    processed: Option<(String, Outcome)>,
    forget_at: Instant,
}

struct Inner {
    config: RuntimeConfig,
    rng: FaultRng,
    epoch: u64,
    payments: HashMap<String, Record>,
    /// orderId -> its paymentKeys, oldest first.
    orders: HashMap<String, Vec<String>>,
    idempotency: HashMap<Scope, Entry>,
    /// paymentKeys no window issued, first seen in a lookup: their ten minutes
    /// run from then.
    first_seen: HashMap<String, Instant>,
    /// paymentKey -> calls about it (confirms, cancels, lookups) open now.
    open_calls: HashMap<String, u32>,
    /// Every approval and cancel, for `GET /v1/transactions`.
    ledger: Ledger,
    counters: Counters,
}

pub(crate) struct Store {
    inner: Mutex<Inner>,
    /// Woken whenever a processing ends, for answers held until one has.
    processed: tokio::sync::Notify,
    /// The runtime configuration's `hold`, for processings to wait on.
    hold: tokio::sync::watch::Sender<bool>,
    /// The merchant is identified by its secret key; this fake has one.
    merchant: String,
    strict_sessions: bool,
    clock: Clock,
}

impl Store {
    pub(crate) fn new(config: RuntimeConfig, merchant: String, strict_sessions: bool, clock: Clock) -> Self {
        let hold = tokio::sync::watch::channel(config.hold).0;
        Self {
            inner: Mutex::new(Inner {
                rng: FaultRng::seeded(config.seed),
                config,
                epoch: 0,
                payments: HashMap::new(),
                orders: HashMap::new(),
                idempotency: HashMap::new(),
                first_seen: HashMap::new(),
                open_calls: HashMap::new(),
                ledger: Ledger::default(),
                counters: Counters::default(),
            }),
            processed: tokio::sync::Notify::new(),
            hold,
            merchant,
            strict_sessions,
            clock,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere must not take the whole fake PG down with it:
        // every update below leaves the state consistent before it can panic.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn scope(&self, path: String, key: &str) -> Scope {
        Scope { merchant: self.merchant.clone(), method: CONFIRM_METHOD, path, key: key.to_owned() }
    }

    /// What confirms and cancels share: the key's stored answer if it has
    /// one; else `admit` decides, under the same lock, and a processing it
    /// lets through is recorded for the key and counted in flight, a refusal
    /// about the payment stored for the key (Toss mode), a fault counted.
    /// Begins a processing without an idempotency key whose own `check` of the
    /// session comes first, under the same lock as the rest of the decision
    /// (`admit`): what it checks holds until the processing is counted. Its
    /// refusal stores and counts nothing.
    fn begin_checked_with<E>(
        &self,
        payment_key: &str,
        check: impl FnOnce(Option<&SessionView>) -> Result<(), E>,
        admit: impl FnOnce(&mut Inner, Instant) -> Result<Admitted, Refusal>,
    ) -> Result<Begin, E> {
        let mut refused = None;
        let begin = self.begin_with(None, |inner, now| {
            inner.expire_if_due(payment_key, now);
            if let Err(error) = check(inner.session_view(payment_key).as_ref()) {
                refused = Some(error);
                return Err(Refusal::Checked);
            }
            admit(inner, now)
        });
        match refused {
            Some(error) => Err(error),
            None => Ok(begin),
        }
    }

    fn begin_with(
        &self,
        scope: Option<Scope>,
        admit: impl FnOnce(&mut Inner, Instant) -> Result<Admitted, Refusal>,
    ) -> Begin {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let now = Instant::now();
        if let Some(scope) = &scope
            && let Some(answer) = inner.replay(scope, now)
        {
            return answer;
        }
        match admit(inner, now) {
            Ok(admitted) => {
                if let Some(scope) = &scope {
                    inner.idempotency.insert(scope.clone(), Entry::Processing);
                }
                inner.counters.processing_started(&admitted.work);
                Begin::Start(Ticket {
                    payment_key: admitted.payment_key,
                    order_id: admitted.order_id,
                    amount: admitted.amount,
                    work: admitted.work,
                    plan: admitted.plan,
                    continue_after_disconnect: inner.config.continue_after_disconnect,
                    scope,
                    epoch: inner.epoch,
                })
            }
            Err(refusal) => {
                if let (Some(scope), Refusal::AboutThePayment(error)) = (scope, &refusal)
                    && inner.config.replay == ReplayMode::Toss
                {
                    let forget_at = now + self.clock.scaled(IDEMPOTENCY_TTL);
                    let settled = Settled { first_answer: Err(error.clone()), processed: None, forget_at };
                    inner.idempotency.insert(scope, Entry::Settled(settled));
                }
                match refusal {
                    Refusal::AboutThePayment(error) | Refusal::AtTheDoor(error) => Begin::Refused(error),
                    // Never answered: the caller answers its own check's refusal.
                    Refusal::Checked => Begin::Refused(PgError::FailedInternalSystemProcessing),
                    Refusal::Fault(fault) => {
                        inner.counters.faults.count(fault.into());
                        Begin::FrontDoor(fault)
                    }
                }
            }
        }
    }

    /// Records how a processing ended, at `at`; later calls with its
    /// idempotency key replay this outcome. The outcome as it stands (a cancel
    /// can still find too little left) and the payment; `None` if the state
    /// was reset meanwhile.
    pub(crate) fn finish(
        &self,
        ticket: &Ticket,
        outcome: &Outcome,
        at: SystemTime,
        receipt_url: String,
    ) -> Option<(Outcome, Payment)> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        if inner.epoch != ticket.epoch {
            return None;
        }
        inner.counters.processing_ended();
        if let Outcome::Failed(error) = outcome
            && ticket.plan.decline.as_ref() == Some(error)
        {
            inner.counters.faults.count(FaultKind::Decline);
        }
        let (outcome, payment) = match &ticket.work {
            Work::Approve => inner.settle_approval(ticket, outcome.clone(), at, receipt_url)?,
            Work::Cancel { reason } => inner.settle_cancel(ticket, reason, outcome.clone(), at)?,
        };
        if let Some(scope) = &ticket.scope {
            let first_answer = match (&outcome, ticket.plan.delivery) {
                // The caller of a reset never read it, but this is what the PG produced.
                (Outcome::Done, Delivery::Respond | Delivery::Reset) => Ok(Box::new(payment.clone())),
                (Outcome::Done, Delivery::Error500) => Err(PgError::FailedInternalSystemProcessing),
                (Outcome::Failed(error), _) => Err(error.clone()),
            };
            let settled = Settled {
                first_answer,
                processed: Some((ticket.payment_key.clone(), outcome.clone())),
                forget_at: Instant::now() + self.clock.scaled(IDEMPOTENCY_TTL),
            };
            inner.idempotency.insert(scope.clone(), Entry::Settled(settled));
        }
        self.processed.notify_waiters();
        Some((outcome, payment))
    }

    /// Waits until the payment has been processed (by another request: this
    /// one was turned away), or `limit` has passed.
    pub(crate) async fn until_processed(&self, payment_key: &str, limit: Duration) {
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        loop {
            // Registered before the check, so a processing that ends between the
            // two still wakes this.
            let ended = self.processed.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            let processed = self.lock().payments.get(payment_key).is_some_and(|record| record.phase == Phase::Settled);
            if processed {
                return;
            }
            tokio::select! {
                () = &mut ended => {}
                () = &mut deadline => return,
            }
        }
    }

    /// A charge made directly, for tests (`POST /__admin/charges`): a DONE
    /// payment of `order_id` that no window, confirm or idempotency key led to,
    /// as a charge the shop never heard of would be.
    pub(crate) fn admin_charge(
        &self,
        payment_key: Option<String>,
        order_id: String,
        amount: u64,
        at: SystemTime,
        receipt_url: impl FnOnce(&str) -> String,
    ) -> Result<Payment, PgError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let payment_key = payment_key.unwrap_or_else(payment::new_payment_key);
        if inner.payments.contains_key(&payment_key) {
            return Err(PgError::InvalidRequest(format!("paymentKey {payment_key} exists already.")));
        }
        let now = kst(at);
        let mut payment = Payment::ready(
            payment_key.clone(),
            order_id.clone(),
            format!("Order {order_id}"),
            amount,
            now.clone(),
            None,
        );
        payment.authenticate();
        payment.approve(now.clone(), receipt_url(&payment_key));
        inner.ledger.record(unix_seconds(at), Transaction::of(&payment, amount, now));
        inner.insert(payment.clone(), None, Instant::now());
        if let Some(record) = inner.payments.get_mut(&payment_key) {
            record.phase = Phase::Settled;
        }
        Ok(payment)
    }

    /// A page of `GET /v1/transactions`.
    pub(crate) fn transactions(&self, query: &Query) -> Result<Vec<Transaction>, UnknownKey> {
        self.lock().ledger.page(query)
    }

    /// The payment as it stands now (an overdue one is EXPIRED), for the receipt.
    pub(crate) fn payment(&self, payment_key: &str) -> Option<Payment> {
        let mut inner = self.lock();
        inner.expire_if_due(payment_key, Instant::now());
        inner.payments.get(payment_key).map(|record| record.payment.clone())
    }

    /// `GET /v1/payments/{paymentKey}`: the payment as it stands now. A key no
    /// window issued is not found, and its ten minutes start now.
    pub(crate) fn lookup(&self, payment_key: &str) -> Option<Payment> {
        let mut inner = self.lock();
        let now = Instant::now();
        if !inner.payments.contains_key(payment_key) {
            inner.first_seen.entry(payment_key.to_owned()).or_insert(now);
            return None;
        }
        inner.expire_if_due(payment_key, now);
        inner.payments.get(payment_key).map(|record| record.payment.clone())
    }

    /// The order's payment: its charge if it has one, else its newest attempt.
    pub(crate) fn payment_for_order(&self, order_id: &str) -> Option<Payment> {
        let mut inner = self.lock();
        let now = Instant::now();
        for key in inner.orders.get(order_id).cloned().unwrap_or_default() {
            inner.expire_if_due(&key, now);
        }
        let keys = inner.orders.get(order_id)?;
        let payments: Vec<&Payment> =
            keys.iter().filter_map(|key| inner.payments.get(key).map(|record| &record.payment)).collect();
        payments
            .iter()
            .find(|payment| payment.status.is_charged())
            .or_else(|| payments.last())
            .map(|payment| (*payment).clone())
    }

    /// Whether a simulated outage refuses this API call (counted if so).
    pub(crate) fn refuses_for_outage(&self) -> bool {
        let mut inner = self.lock();
        if inner.config.outage {
            inner.counters.outage_refusals += 1;
        }
        inner.config.outage
    }

    /// A call about `payment_key` opened; one already open makes it an overlap.
    pub(crate) fn call_opened(&self, payment_key: &str) {
        let mut inner = self.lock();
        let open = inner.open_calls.entry(payment_key.to_owned()).or_default();
        *open += 1;
        if *open > 1 {
            inner.counters.overlapping_calls += 1;
            inner.counters.overlapping_payment_keys.insert(payment_key.to_owned());
        }
    }

    /// A call about `payment_key` was answered, or its caller hung up.
    pub(crate) fn call_closed(&self, payment_key: &str) {
        let mut inner = self.lock();
        if let Some(open) = inner.open_calls.get_mut(payment_key) {
            *open -= 1;
            if *open == 0 {
                inner.open_calls.remove(payment_key);
            }
        }
    }

    pub(crate) fn note_lookup(&self) {
        self.lock().counters.lookups += 1;
    }

    pub(crate) fn note_confirm_request(&self) {
        self.lock().counters.confirm_requests += 1;
    }

    /// A cancel arrived, naming the payment of `order_id` when the PG has it.
    pub(crate) fn note_cancel_request(&self, order_id: Option<String>) {
        let counters = &mut self.lock().counters;
        counters.cancel_requests += 1;
        if let Some(order_id) = order_id {
            *counters.cancel_requests_by_order.entry(order_id).or_insert(0) += 1;
        }
    }

    pub(crate) fn note_test_code(&self) {
        self.lock().counters.test_code_responses += 1;
    }

    /// One send of a webhook event, and whether the shop answered 200.
    pub(crate) fn note_webhook_send(&self, delivered: bool) {
        let counters = &mut self.lock().counters;
        if delivered {
            counters.webhooks_delivered += 1;
        } else {
            counters.webhook_failed_sends += 1;
        }
    }

    /// An API call asked for this `TossPayments-API-Version` (`none`: it named
    /// none), and came in this HTTP version.
    pub(crate) fn note_versions(&self, api_version: &str, http_version: &str) {
        let counters = &mut self.lock().counters;
        *counters.api_versions.entry(api_version.to_owned()).or_default() += 1;
        *counters.http_versions.entry(http_version.to_owned()).or_default() += 1;
    }

    pub(crate) fn note_webhook_given_up(&self) {
        self.lock().counters.webhooks_given_up += 1;
    }

    pub(crate) fn note_abandoned(&self) {
        self.lock().counters.abandoned += 1;
    }

    pub(crate) fn note_fault(&self, kind: FaultKind) {
        self.lock().counters.faults.count(kind);
    }

    pub(crate) fn stats(&self) -> Stats {
        let inner = self.lock();
        let mut book = Book::default();
        for record in inner.payments.values() {
            book.add(&record.payment);
        }
        inner.counters.snapshot(book)
    }

    pub(crate) fn config(&self) -> RuntimeConfig {
        self.lock().config.clone()
    }

    /// Merges `patch` into the runtime configuration. A new seed restarts the
    /// random sequence from it.
    pub(crate) fn update_config(&self, patch: &Value) -> Result<RuntimeConfig, ConfigError> {
        let mut inner = self.lock();
        let updated = inner.config.merged(patch)?;
        if updated.seed != inner.config.seed {
            inner.rng = FaultRng::seeded(updated.seed);
        }
        inner.config = updated.clone();
        self.hold.send_replace(updated.hold);
        Ok(updated)
    }

    /// Resolves once no hold keeps processings from finishing.
    pub(crate) async fn hold_released(&self) {
        // The sender lives as long as the store, so this ends only when released.
        let _ = self.hold.subscribe().wait_for(|held| !*held).await;
    }

    /// Forgets payments, idempotency records, window sessions and counters,
    /// and restarts the random sequence from the seed. The configuration stays.
    /// Processings still running finish without recording anything.
    pub(crate) fn reset(&self) {
        let mut inner = self.lock();
        inner.epoch += 1;
        inner.payments.clear();
        inner.orders.clear();
        inner.idempotency.clear();
        inner.first_seen.clear();
        inner.ledger = Ledger::default();
        inner.counters = Counters::default();
        inner.rng = FaultRng::seeded(inner.config.seed);
    }
}

/// Why a confirm is not processed.
enum Refusal {
    /// Validation or capacity: nothing about the payment was decided.
    AtTheDoor(PgError),
    /// An answer about the payment itself, which Toss replays for the key.
    AboutThePayment(PgError),
    /// An injected front-door fault.
    Fault(FrontDoorFault),
    /// Refused by the caller's own check (`begin_checked`): nothing stored or counted.
    Checked,
}

impl Inner {
    fn insert(&mut self, payment: Payment, window: Option<WindowReturn>, confirm_by: Instant) {
        self.orders.entry(payment.order_id.clone()).or_default().push(payment.payment_key.clone());
        let record = Record {
            payment,
            scenario: None,
            phase: Phase::Open,
            window,
            confirm_by,
            cancel_in_progress: false,
            last_cancel_at: None,
            session: None,
        };
        self.payments.insert(record.payment.payment_key.clone(), record);
    }

    /// The contract limit counts every processing, confirms and cancels alike.
    fn check_contract_limit(&mut self) -> Result<(), Refusal> {
        match self.config.contract_limit {
            Some(limit) if self.counters.in_flight >= u64::from(limit) => {
                self.counters.contract_limit_rejections += 1;
                Err(Refusal::AtTheDoor(PgError::TooManyRequests(format!(
                    "The contract allows {limit} processings (confirms and cancels) at once; nothing was processed."
                ))))
            }
            _ => Ok(()),
        }
    }

    /// The stored answer for a key, counted; `None` if the key is new (or forgotten).
    fn replay(&mut self, scope: &Scope, now: Instant) -> Option<Begin> {
        let answer = match self.idempotency.get(scope)? {
            Entry::Processing => {
                self.counters.in_progress_conflicts += 1;
                return Some(Begin::Refused(PgError::IdempotentRequestProcessing));
            }
            Entry::Settled(settled) if now >= settled.forget_at => None,
            Entry::Settled(settled) => Some(match (self.config.replay, &settled.processed) {
                (ReplayMode::Toss, _) | (ReplayMode::Outcome, None) => settled.first_answer.clone(),
                (ReplayMode::Outcome, Some((payment_key, Outcome::Done))) => self
                    .payments
                    .get(payment_key)
                    .map(|record| Box::new(record.payment.clone()))
                    .ok_or_else(|| PgError::NotFoundPayment(payment_key.clone())),
                (ReplayMode::Outcome, Some((_, Outcome::Failed(error)))) => Err(error.clone()),
            }),
        };
        match answer {
            Some(answer) => {
                self.counters.replays += 1;
                Some(Begin::Replay(answer))
            }
            None => {
                self.idempotency.remove(scope);
                None
            }
        }
    }

    /// A payment never confirmed within its ten minutes becomes EXPIRED.
    fn expire_if_due(&mut self, payment_key: &str, now: Instant) {
        if let Some(record) = self.payments.get_mut(payment_key)
            && record.phase == Phase::Open
            && now >= record.confirm_by
        {
            record.phase = Phase::Settled;
            record.payment.status = PaymentStatus::Expired;
        }
    }

    fn order_charged_elsewhere(&self, order_id: &str, payment_key: &str) -> bool {
        self.orders.get(order_id).is_some_and(|keys| {
            keys.iter()
                .filter(|key| *key != payment_key)
                .any(|key| self.payments.get(key).is_some_and(|record| record.payment.status.is_charged()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn store() -> Store {
        Store::new(RuntimeConfig::default(), "sk".into(), false, Clock::new(1.0))
    }

    fn store_with(patch: serde_json::Value) -> Store {
        let store = store();
        store.update_config(&patch).unwrap();
        store
    }

    fn replayed(store: &Store, request: &ConfirmRequest) -> Answer {
        match store.begin(request) {
            Begin::Replay(answer) => answer,
            _ => panic!("expected a replay"),
        }
    }

    pub(super) fn window(store: &Store, order_id: &str) -> String {
        let request = WindowRequest {
            order_id: order_id.into(),
            order_name: "Mug".into(),
            amount: 1_000,
            success_url: "http://shop/ok".into(),
            fail_url: "http://shop/fail".into(),
        };
        store.open_window(request, "http://pg/window".into(), "now".into()).expect("a first window for the order")
    }

    pub(super) fn request(key: Option<&str>, payment_key: &str, order_id: &str) -> ConfirmRequest {
        ConfirmRequest {
            payment_key: payment_key.into(),
            order_id: order_id.into(),
            amount: 1_000,
            idempotency_key: key.map(str::to_owned),
        }
    }

    pub(super) fn start(store: &Store, request: &ConfirmRequest) -> Ticket {
        match store.begin(request) {
            Begin::Start(ticket) => ticket,
            _ => panic!("expected a new processing"),
        }
    }

    pub(super) fn settle(store: &Store, ticket: &Ticket, outcome: Outcome) {
        store.finish(ticket, &outcome, SystemTime::now(), "receipt".into());
    }

    #[test]
    fn same_key_conflicts_while_processing_then_replays() {
        let store = store();
        let first = request(Some("k1"), "pk1", "o1");
        let ticket = start(&store, &first);
        assert!(matches!(store.begin(&first), Begin::Refused(PgError::IdempotentRequestProcessing)));
        settle(&store, &ticket, Outcome::Done);
        // The key, not the body, picks the record.
        let other_body = request(Some("k1"), "pk-other", "o-other");
        match store.begin(&other_body) {
            Begin::Replay(Ok(payment)) => assert_eq!(payment.payment_key, "pk1"),
            _ => panic!("expected a replay of the charge"),
        }
        let stats = store.stats();
        assert_eq!((stats.processings, stats.replays, stats.in_progress_conflicts), (1, 1, 1));
    }

    #[test]
    fn a_decline_replays_as_the_decline() {
        let store = store();
        let ticket = start(&store, &request(Some("k1"), "pk1", "o1"));
        settle(&store, &ticket, Outcome::Failed(PgError::RejectCardPayment));
        assert!(matches!(
            store.begin(&request(Some("k1"), "pk1", "o1")),
            Begin::Replay(Err(PgError::RejectCardPayment))
        ));
    }

    #[test]
    fn another_key_for_a_processed_payment_or_charged_order_is_refused() {
        let store = store();
        let ticket = start(&store, &request(Some("k1"), "pk1", "o1"));
        assert!(matches!(
            store.begin(&request(Some("k2"), "pk1", "o1")),
            Begin::Refused(PgError::AlreadyProcessedPayment)
        ));
        settle(&store, &ticket, Outcome::Done);
        assert!(matches!(store.begin(&request(None, "pk1", "o1")), Begin::Refused(PgError::AlreadyProcessedPayment)));
        assert!(matches!(store.begin(&request(Some("k3"), "pk2", "o1")), Begin::Refused(PgError::DuplicatedOrderId)));
    }

    #[test]
    fn refusals_store_nothing() {
        let store = store();
        let ticket = start(&store, &request(None, "pk1", "o1"));
        settle(&store, &ticket, Outcome::Done);
        let mut mismatched = request(Some("k1"), "pk1", "o1");
        mismatched.amount = 999;
        assert!(matches!(store.begin(&mismatched), Begin::Refused(PgError::InvalidRequest(_))));
        // k1 was not recorded: it now starts a processing of another payment.
        start(&store, &request(Some("k1"), "pk2", "o2"));
    }

    #[test]
    fn contract_limit_counts_processings_until_they_finish() {
        let store = store();
        store.update_config(&serde_json::json!({"contract_limit": 1})).unwrap();
        let ticket = start(&store, &request(None, "pk1", "o1"));
        assert!(matches!(store.begin(&request(None, "pk2", "o2")), Begin::Refused(PgError::TooManyRequests(_))));
        settle(&store, &ticket, Outcome::Done);
        start(&store, &request(None, "pk2", "o2"));
        assert_eq!(store.stats().contract_limit_rejections, 1);
    }

    #[test]
    fn reset_forgets_everything_and_ignores_old_processings() {
        let store = store();
        let ticket = start(&store, &request(Some("k1"), "pk1", "o1"));
        store.reset();
        assert!(store.finish(&ticket, &Outcome::Done, SystemTime::now(), "r".into()).is_none());
        let stats = store.stats();
        assert_eq!((stats.in_flight, stats.processings), (0, 0));
        assert!(store.payment("pk1").is_none());
        start(&store, &request(Some("k1"), "pk1", "o1"));
    }

    #[test]
    fn strict_sessions_refuse_unknown_payment_keys() {
        let store = Store::new(RuntimeConfig::default(), "sk".into(), true, Clock::new(1.0));
        assert!(matches!(store.begin(&request(None, "pk1", "o1")), Begin::Refused(PgError::NotFoundPaymentSession(_))));
    }

    #[test]
    fn a_500_after_a_charge_replays_the_500_as_toss_does_and_the_charge_in_outcome_mode() {
        for (mode, expect_charge) in [("toss", false), ("outcome", true)] {
            let store = store_with(serde_json::json!({"replay": mode, "faults": {"error_500_after_charge": 1.0}}));
            let first = request(Some("k1"), "pk1", "o1");
            let ticket = start(&store, &first);
            assert_eq!(ticket.plan.delivery, Delivery::Error500);
            settle(&store, &ticket, Outcome::Done);
            match replayed(&store, &first) {
                Ok(payment) => assert!(expect_charge && payment.status == PaymentStatus::Done, "{mode}"),
                Err(error) => assert!(!expect_charge && error == PgError::FailedInternalSystemProcessing, "{mode}"),
            }
            assert_eq!(store.lookup("pk1").unwrap().status, PaymentStatus::Done, "the lookup tells the truth");
        }
    }

    #[test]
    fn a_reset_after_a_charge_replays_the_payment_the_pg_produced() {
        let store = store_with(serde_json::json!({"faults": {"reset_after_charge": 1.0}}));
        let first = request(Some("k1"), "pk1", "o1");
        let ticket = start(&store, &first);
        assert_eq!(ticket.plan.delivery, Delivery::Reset);
        settle(&store, &ticket, Outcome::Done);
        assert_eq!(replayed(&store, &first).unwrap().status, PaymentStatus::Done);
    }

    #[test]
    fn front_door_faults_are_not_stored_and_a_retry_processes() {
        let store = store_with(serde_json::json!({"faults": {"error_500": 1.0}}));
        let first = request(Some("k1"), "pk1", "o1");
        assert!(matches!(store.begin(&first), Begin::FrontDoor(FrontDoorFault::Error500)));
        assert_eq!(store.lookup("pk1").unwrap().status, PaymentStatus::Ready, "seen, never confirmed");
        store.update_config(&serde_json::json!({"faults": {"error_500": 0.0}})).unwrap();
        start(&store, &first);
    }

    #[test]
    fn refusals_about_the_payment_are_replayed_for_their_key_in_toss_mode() {
        let store = store();
        let ticket = start(&store, &request(Some("k1"), "pk1", "o1"));
        settle(&store, &ticket, Outcome::Done);
        let other_key = request(Some("k2"), "pk1", "o1");
        assert!(matches!(store.begin(&other_key), Begin::Refused(PgError::AlreadyProcessedPayment)));
        assert_eq!(replayed(&store, &other_key).unwrap_err(), PgError::AlreadyProcessedPayment);
    }

    #[tokio::test(start_paused = true)]
    async fn a_window_not_confirmed_within_ten_minutes_expires() {
        let store = store();
        let payment_key = window(&store, "o1");
        tokio::time::advance(CONFIRM_DEADLINE - Duration::from_secs(1)).await;
        assert_eq!(store.lookup(&payment_key).unwrap().status, PaymentStatus::Ready);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(store.lookup(&payment_key).unwrap().status, PaymentStatus::Expired);
        let late = request(Some("k1"), &payment_key, "o1");
        assert!(matches!(store.begin(&late), Begin::Refused(PgError::NotFoundPaymentSession(_))));
        assert!(matches!(replayed(&store, &late), Err(PgError::NotFoundPaymentSession(_))));
        assert!(store.stats().charges_by_order.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_made_up_key_starts_its_ten_minutes_at_its_first_lookup() {
        let store = store();
        assert!(store.lookup("pk-made-up").is_none(), "an unknown key is not found");
        tokio::time::advance(CONFIRM_DEADLINE).await;
        let late = request(Some("k1"), "pk-made-up", "o1");
        assert!(matches!(store.begin(&late), Begin::Refused(PgError::NotFoundPaymentSession(_))));
        assert_eq!(store.lookup("pk-made-up").unwrap().status, PaymentStatus::Expired);
    }

    #[tokio::test(start_paused = true)]
    async fn time_scale_shortens_the_deadline_and_idempotency_records_are_forgotten_after_fifteen_days() {
        let store = Store::new(RuntimeConfig::default(), "sk".into(), false, Clock::new(0.001));
        let payment_key = window(&store, "o1");
        tokio::time::advance(Duration::from_millis(600)).await;
        assert_eq!(store.lookup(&payment_key).unwrap().status, PaymentStatus::Expired, "10 min x 0.001");

        let first = request(Some("k1"), "pk1", "o2");
        let ticket = start(&store, &first);
        settle(&store, &ticket, Outcome::Failed(PgError::RejectCardPayment));
        tokio::time::advance(IDEMPOTENCY_TTL.mul_f64(0.001) - Duration::from_millis(1)).await;
        assert!(replayed(&store, &first).is_err());
        tokio::time::advance(Duration::from_millis(1)).await;
        // Forgotten: the key is new again, and the payment was processed already.
        assert!(matches!(store.begin(&first), Begin::Refused(PgError::AlreadyProcessedPayment)));
    }
}
