//! All state: payments (window sessions are payments not yet confirmed),
//! idempotency records, the runtime configuration, the fault RNG and the
//! counters, behind one mutex.
//!
//! One lock keeps every confirm decision atomic (replay or process, the
//! contract limit, duplicate orders) and is never held across an `.await`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::config::{ConfigError, RuntimeConfig};
use crate::error::PgError;
use crate::faults::{self, FaultRng, FrontDoorFault, Plan};
use crate::payment::{self, Failure, Payment, PaymentStatus};
use crate::scenario::Scenario;
use crate::stats::{Counters, FaultKind, Stats};

/// Toss scopes an idempotency key to the merchant, the method and the URL.
const CONFIRM_METHOD: &str = "POST";
const CONFIRM_PATH: &str = "/v1/payments/confirm";

/// A confirm that passed input validation.
#[derive(Clone, Debug)]
pub(crate) struct ConfirmRequest {
    pub(crate) payment_key: String,
    pub(crate) order_id: String,
    pub(crate) amount: u64,
    pub(crate) idempotency_key: Option<String>,
}

/// What a confirm leads to, decided under the lock.
pub(crate) enum Begin {
    /// The idempotency key's settled outcome, answered again.
    Replay(Result<Box<Payment>, PgError>),
    /// Refused before processing; nothing is stored.
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
    pub(crate) amount: u64,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) plan: Plan,
    pub(crate) continue_after_disconnect: bool,
    /// State generation; a reset makes older tickets settle nothing.
    epoch: u64,
}

/// How a processing ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Charged,
    Failed(PgError),
}

/// Where the window sends the customer back to.
#[derive(Clone, Debug)]
pub(crate) struct WindowReturn {
    pub(crate) success_url: String,
    pub(crate) fail_url: String,
}

/// A payment window being opened.
#[derive(Clone, Debug)]
pub(crate) struct WindowRequest {
    pub(crate) order_id: String,
    pub(crate) order_name: String,
    pub(crate) amount: u64,
    pub(crate) success_url: String,
    pub(crate) fail_url: String,
}

/// The result of a window submit.
#[derive(Clone, Debug)]
pub(crate) struct Submitted {
    pub(crate) payment_key: String,
    pub(crate) order_id: String,
    pub(crate) amount: u64,
    /// The customer canceled: go to failUrl.
    pub(crate) canceled: bool,
    pub(crate) window: WindowReturn,
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
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Scope {
    merchant: String,
    method: &'static str,
    path: &'static str,
    key: String,
}

enum Entry {
    Processing,
    Settled { payment_key: String, outcome: Outcome },
}

struct Inner {
    config: RuntimeConfig,
    rng: FaultRng,
    epoch: u64,
    payments: HashMap<String, Record>,
    /// orderId -> its paymentKeys, oldest first.
    orders: HashMap<String, Vec<String>>,
    idempotency: HashMap<Scope, Entry>,
    counters: Counters,
}

pub(crate) struct Store {
    inner: Mutex<Inner>,
    /// The merchant is identified by its secret key; this fake has one.
    merchant: String,
    strict_sessions: bool,
}

impl Store {
    pub(crate) fn new(config: RuntimeConfig, merchant: String, strict_sessions: bool) -> Self {
        Self {
            inner: Mutex::new(Inner {
                rng: FaultRng::seeded(config.seed),
                config,
                epoch: 0,
                payments: HashMap::new(),
                orders: HashMap::new(),
                idempotency: HashMap::new(),
                counters: Counters::default(),
            }),
            merchant,
            strict_sessions,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere must not take the whole fake PG down with it:
        // every update below leaves the state consistent before it can panic.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn scope(&self, key: &str) -> Scope {
        Scope { merchant: self.merchant.clone(), method: CONFIRM_METHOD, path: CONFIRM_PATH, key: key.to_owned() }
    }

    /// Decides what a valid confirm leads to, and if it is a new processing,
    /// records it as in flight before the lock is released.
    pub(crate) fn begin(&self, request: &ConfirmRequest) -> Begin {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let scope = request.idempotency_key.as_deref().map(|key| self.scope(key));
        if let Some(scope) = &scope {
            match inner.idempotency.get(scope) {
                Some(Entry::Processing) => {
                    inner.counters.in_progress_conflicts += 1;
                    return Begin::Refused(PgError::IdempotentRequestProcessing);
                }
                Some(Entry::Settled { payment_key, outcome }) => {
                    inner.counters.replays += 1;
                    let replay = match outcome {
                        Outcome::Charged => inner
                            .payments
                            .get(payment_key)
                            .map(|record| Box::new(record.payment.clone()))
                            .ok_or_else(|| PgError::NotFoundPayment(payment_key.clone())),
                        Outcome::Failed(error) => Err(error.clone()),
                    };
                    return Begin::Replay(replay);
                }
                None => {}
            }
        }

        let scenario = match inner.payments.get(&request.payment_key) {
            None if self.strict_sessions => {
                return Begin::Refused(PgError::NotFoundPaymentSession(format!(
                    "No payment window issued paymentKey {}; this PG runs with strict sessions.",
                    request.payment_key
                )));
            }
            None => None,
            Some(record) => {
                if let Err(error) = check_matches(&record.payment, request) {
                    return Begin::Refused(error);
                }
                if record.phase != Phase::Open {
                    return Begin::Refused(PgError::AlreadyProcessedPayment);
                }
                if record.scenario == Some(Scenario::Cancel) {
                    return Begin::Refused(PgError::NotFoundPaymentSession(
                        "The customer canceled this payment in the payment window.".to_owned(),
                    ));
                }
                record.scenario
            }
        };
        if inner.order_charged_elsewhere(&request.order_id, &request.payment_key) {
            return Begin::Refused(PgError::DuplicatedOrderId);
        }

        let fault = match scenario {
            Some(scenario) => faults::scenario_front_door(scenario),
            None => inner.rng.front_door(&inner.config.faults),
        };
        if let Some(fault) = fault {
            inner.counters.faults.count(fault.into());
            return Begin::FrontDoor(fault);
        }
        if let Some(limit) = inner.config.contract_limit
            && inner.counters.in_flight >= u64::from(limit)
        {
            inner.counters.contract_limit_rejections += 1;
            return Begin::Refused(PgError::TooManyRequests(format!(
                "The contract allows {limit} confirms in processing at once; nothing was processed."
            )));
        }

        let plan = match scenario {
            Some(scenario) => faults::scenario_plan(scenario, &inner.config),
            None => inner.rng.plan(&inner.config),
        };
        let record = inner.open_record(request);
        record.phase = Phase::Processing;
        record.payment.authenticate();
        if let Some(scope) = scope {
            inner.idempotency.insert(scope, Entry::Processing);
        }
        inner.counters.processing_started();
        Begin::Start(Ticket {
            payment_key: request.payment_key.clone(),
            order_id: request.order_id.clone(),
            amount: request.amount,
            idempotency_key: request.idempotency_key.clone(),
            plan,
            continue_after_disconnect: inner.config.continue_after_disconnect,
            epoch: inner.epoch,
        })
    }

    /// Records how a processing ended; later calls with its idempotency key
    /// replay this outcome. `None` if the state was reset meanwhile.
    pub(crate) fn finish(
        &self,
        ticket: &Ticket,
        outcome: &Outcome,
        now: String,
        receipt_url: String,
    ) -> Option<Payment> {
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
        let record = inner.payments.get_mut(&ticket.payment_key)?;
        match outcome {
            Outcome::Charged => record.payment.approve(now, receipt_url),
            Outcome::Failed(error) => {
                record.payment.abort(Failure { code: error.code().to_owned(), message: error.to_string() })
            }
        }
        record.phase = Phase::Settled;
        let payment = record.payment.clone();
        if let Some(key) = &ticket.idempotency_key {
            inner.idempotency.insert(
                self.scope(key),
                Entry::Settled { payment_key: ticket.payment_key.clone(), outcome: outcome.clone() },
            );
        }
        Some(payment)
    }

    /// Opens a payment window: a new READY payment under a new paymentKey.
    pub(crate) fn open_window(&self, request: WindowRequest, checkout_url: String, now: String) -> String {
        let payment_key = payment::new_payment_key();
        let payment = Payment::ready(
            payment_key.clone(),
            request.order_id.clone(),
            request.order_name,
            request.amount,
            now,
            Some(checkout_url),
        );
        let mut inner = self.lock();
        inner.insert(payment, Some(WindowReturn { success_url: request.success_url, fail_url: request.fail_url }));
        payment_key
    }

    /// The customer chose a scenario in the window. Once the payment is being
    /// confirmed the choice is fixed, so a late double submit changes nothing.
    pub(crate) fn submit_window(&self, payment_key: &str, scenario: Scenario) -> Result<Submitted, PgError> {
        let mut inner = self.lock();
        let (record, window) = inner
            .payments
            .get_mut(payment_key)
            .and_then(|record| {
                let window = record.window.clone()?;
                Some((record, window))
            })
            .ok_or_else(|| {
                PgError::NotFoundPaymentSession(
                    "This payment window was never opened here, or the PG was reset since. \
                     Start the payment again from the shop."
                        .to_owned(),
                )
            })?;
        let open = record.phase == Phase::Open;
        if open {
            record.scenario = Some(scenario);
            if scenario == Scenario::Cancel {
                record.payment.status = PaymentStatus::Ready;
                record.payment.method = None;
            } else {
                record.payment.authenticate();
            }
        }
        Ok(Submitted {
            payment_key: payment_key.to_owned(),
            order_id: record.payment.order_id.clone(),
            amount: record.payment.total_amount,
            canceled: open && scenario == Scenario::Cancel,
            window,
        })
    }

    pub(crate) fn payment(&self, payment_key: &str) -> Option<Payment> {
        let inner = self.lock();
        inner.payments.get(payment_key).map(|record| record.payment.clone())
    }

    /// The order's payment: its charge if it has one, else its newest attempt.
    pub(crate) fn payment_for_order(&self, order_id: &str) -> Option<Payment> {
        let inner = self.lock();
        let keys = inner.orders.get(order_id)?;
        let payments: Vec<&Payment> =
            keys.iter().filter_map(|key| inner.payments.get(key).map(|record| &record.payment)).collect();
        payments
            .iter()
            .find(|payment| payment.status.is_charged())
            .or_else(|| payments.last())
            .map(|payment| (*payment).clone())
    }

    pub(crate) fn note_confirm_request(&self) {
        self.lock().counters.confirm_requests += 1;
    }

    pub(crate) fn note_test_code(&self) {
        self.lock().counters.test_code_responses += 1;
    }

    pub(crate) fn note_abandoned(&self) {
        self.lock().counters.abandoned += 1;
    }

    pub(crate) fn note_fault(&self, kind: FaultKind) {
        self.lock().counters.faults.count(kind);
    }

    pub(crate) fn stats(&self) -> Stats {
        let inner = self.lock();
        let mut by_status = BTreeMap::new();
        let mut charges = BTreeMap::new();
        for record in inner.payments.values() {
            let status = record.payment.status;
            *by_status.entry(status.as_str().to_owned()).or_insert(0) += 1;
            if status.is_charged() {
                *charges.entry(record.payment.order_id.clone()).or_insert(0) += 1;
            }
        }
        inner.counters.snapshot(by_status, charges)
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
        Ok(updated)
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
        inner.counters = Counters::default();
        inner.rng = FaultRng::seeded(inner.config.seed);
    }
}

impl Inner {
    fn insert(&mut self, payment: Payment, window: Option<WindowReturn>) {
        self.orders.entry(payment.order_id.clone()).or_default().push(payment.payment_key.clone());
        self.payments
            .insert(payment.payment_key.clone(), Record { payment, scenario: None, phase: Phase::Open, window });
    }

    /// The confirm's record; a paymentKey no window issued gets one now, and
    /// its first confirm fixes its orderId and amount.
    fn open_record(&mut self, request: &ConfirmRequest) -> &mut Record {
        if !self.payments.contains_key(&request.payment_key) {
            let payment = Payment::ready(
                request.payment_key.clone(),
                request.order_id.clone(),
                format!("Order {}", request.order_id),
                request.amount,
                crate::clock::now_kst(),
                None,
            );
            self.insert(payment, None);
        }
        self.payments.get_mut(&request.payment_key).expect("the record was just inserted")
    }

    fn order_charged_elsewhere(&self, order_id: &str, payment_key: &str) -> bool {
        self.orders.get(order_id).is_some_and(|keys| {
            keys.iter()
                .filter(|key| *key != payment_key)
                .any(|key| self.payments.get(key).is_some_and(|record| record.payment.status.is_charged()))
        })
    }
}

/// Toss checks the confirm against what the window recorded: a mismatch means
/// the merchant's server confirmed a different order or a tampered amount.
fn check_matches(payment: &Payment, request: &ConfirmRequest) -> Result<(), PgError> {
    if payment.order_id != request.order_id {
        return Err(PgError::InvalidRequest(format!(
            "orderId {:?} does not match the payment's orderId {:?}.",
            request.order_id, payment.order_id
        )));
    }
    if payment.total_amount != request.amount {
        return Err(PgError::InvalidRequest(format!(
            "amount {} does not match the payment's amount {}.",
            request.amount, payment.total_amount
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        Store::new(RuntimeConfig::default(), "sk".into(), false)
    }

    fn request(key: Option<&str>, payment_key: &str, order_id: &str) -> ConfirmRequest {
        ConfirmRequest {
            payment_key: payment_key.into(),
            order_id: order_id.into(),
            amount: 1_000,
            idempotency_key: key.map(str::to_owned),
        }
    }

    fn start(store: &Store, request: &ConfirmRequest) -> Ticket {
        match store.begin(request) {
            Begin::Start(ticket) => ticket,
            _ => panic!("expected a new processing"),
        }
    }

    fn settle(store: &Store, ticket: &Ticket, outcome: Outcome) {
        store.finish(ticket, &outcome, "now".into(), "receipt".into());
    }

    #[test]
    fn same_key_conflicts_while_processing_then_replays() {
        let store = store();
        let first = request(Some("k1"), "pk1", "o1");
        let ticket = start(&store, &first);
        assert!(matches!(store.begin(&first), Begin::Refused(PgError::IdempotentRequestProcessing)));
        settle(&store, &ticket, Outcome::Charged);
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
        settle(&store, &ticket, Outcome::Charged);
        assert!(matches!(store.begin(&request(None, "pk1", "o1")), Begin::Refused(PgError::AlreadyProcessedPayment)));
        assert!(matches!(store.begin(&request(Some("k3"), "pk2", "o1")), Begin::Refused(PgError::DuplicatedOrderId)));
    }

    #[test]
    fn refusals_store_nothing() {
        let store = store();
        let ticket = start(&store, &request(None, "pk1", "o1"));
        settle(&store, &ticket, Outcome::Charged);
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
        settle(&store, &ticket, Outcome::Charged);
        start(&store, &request(None, "pk2", "o2"));
        assert_eq!(store.stats().contract_limit_rejections, 1);
    }

    #[test]
    fn reset_forgets_everything_and_ignores_old_processings() {
        let store = store();
        let ticket = start(&store, &request(Some("k1"), "pk1", "o1"));
        store.reset();
        assert!(store.finish(&ticket, &Outcome::Charged, "now".into(), "r".into()).is_none());
        let stats = store.stats();
        assert_eq!((stats.in_flight, stats.processings), (0, 0));
        assert!(store.payment("pk1").is_none());
        start(&store, &request(Some("k1"), "pk1", "o1"));
    }

    #[test]
    fn strict_sessions_refuse_unknown_payment_keys() {
        let store = Store::new(RuntimeConfig::default(), "sk".into(), true);
        assert!(matches!(store.begin(&request(None, "pk1", "o1")), Begin::Refused(PgError::NotFoundPaymentSession(_))));
    }
}
