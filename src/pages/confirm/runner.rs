//! Executes the flow's effects in the browser and feeds their results back as
//! events. The only place on the confirm page that sends, waits or stores.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::time::Duration;

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use leptos::task::spawn_local;
use payonce_api::{Order, Pg};
use web_sys::AbortController;

use super::WayBack;
use crate::api::{self, ApiError};
use crate::clock::now_ms;
use crate::flow::{
    Check, Effect, Event, Flow, Outcome, State, StoredAttempt, classify_check, classify_refused_check, returned,
};
use crate::nav_guard::NavGuard;
use crate::storage;
use crate::tab_claim::{self, Held};

/// A check (or a request to close the order) that takes longer than this, beyond
/// the time the server may hold it, learned nothing.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a tab that lost the claim waits for the other tab's stored attempt,
/// to check from the moment that POST left; after that it checks from now.
const CLAIM_LOST_WAIT: Duration = Duration::from_secs(2);

thread_local! {
    /// Orders whose confirm this page has sent since it loaded. A second line of
    /// defence after the flow's own rule: a re-mounted component starts a new flow.
    static CONFIRMS_SENT: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

pub struct Runner {
    flow: RefCell<Flow>,
    /// The PG whose window sent the customer here: the confirm names its credential as it does.
    pg: Pg,
    state: RwSignal<State>,
    /// The way back to the shop, learned from the order in any answer about it.
    way_back: WayBack,
    /// Taken (and its listeners removed) when the page goes away.
    guard: RefCell<Option<NavGuard>>,
    /// This tab's claim on the order among the browser's tabs, kept until the flow is final.
    claim: RefCell<Option<Held>>,
    abort: RefCell<Option<AbortController>>,
    /// Dropping a `Timeout` cancels it and frees its closure, which holds the runner.
    timers: RefCell<Vec<Timeout>>,
    disposed: Cell<bool>,
}

impl Runner {
    pub fn new(flow: Flow, pg: Pg, state: RwSignal<State>, way_back: WayBack, guard: NavGuard) -> Rc<Self> {
        Rc::new(Self {
            flow: RefCell::new(flow),
            pg,
            state,
            way_back,
            guard: RefCell::new(Some(guard)),
            claim: RefCell::new(None),
            abort: RefCell::new(None),
            timers: RefCell::new(Vec::new()),
            disposed: Cell::new(false),
        })
    }

    pub fn dispatch(self: &Rc<Self>, event: Event) {
        if self.disposed.get() {
            return;
        }
        let effects = self.flow.borrow_mut().handle(event);
        let state = self.flow.borrow().state().clone();
        if state.is_final() {
            self.claim.borrow_mut().take();
        }
        // Only a change redraws the page. Most events leave the state as it is (a
        // timer set before the outcome, firing after it); redrawing the same
        // outcome would replace its heading and drop the focus it was given.
        self.state.maybe_update(|shown| {
            let changed = *shown != state;
            if changed {
                *shown = state;
            }
            changed
        });
        for effect in effects {
            self.run(effect);
        }
    }

    /// The page is going away: stop the timers, the navigation guard and the claim.
    /// An in-flight POST is left alone; the server finishes it either way.
    pub fn dispose(&self) {
        self.disposed.set(true);
        self.guard.borrow_mut().take();
        self.claim.borrow_mut().take();
        self.timers.borrow_mut().clear();
    }

    /// Keeps what an answer about the order says of the way back to its shop
    /// (the order, when it is a shop's checkout, carries it).
    fn learn(&self, answer: &Result<Order, ApiError>) {
        let Ok(order) = answer else { return };
        if self.disposed.get() {
            return;
        }
        let learned = Some(order.back.clone());
        self.way_back.maybe_update(|known| {
            let changed = *known != learned;
            if changed {
                *known = learned;
            }
            changed
        });
    }

    fn with_guard(&self, action: impl FnOnce(&NavGuard)) {
        if let Some(guard) = self.guard.borrow().as_ref() {
            action(guard);
        }
    }

    fn run(self: &Rc<Self>, effect: Effect) {
        match effect {
            Effect::Verify { order_id } => {
                let this = self.clone();
                spawn_local(async move {
                    let answer = api::check_order(&order_id, CHECK_TIMEOUT).await;
                    this.learn(&answer);
                    let check = check_of(answer);
                    this.dispatch(Event::Verified { check, now: now_ms() });
                });
            }
            Effect::Claim { order_id } => self.claim(order_id),
            Effect::PersistAttempt(attempt) => {
                if let Err(reason) = storage::save_attempt(&attempt) {
                    leptos::logging::warn!(
                        "payment attempt not stored ({reason}); a reload will ask the server before sending"
                    );
                }
            }
            Effect::SendConfirm { order_id, idempotency_key, payment_key, amount } => {
                let first = CONFIRMS_SENT.with(|sent| sent.borrow_mut().insert(order_id.clone()));
                if !first {
                    leptos::logging::warn!("confirm for {order_id} already sent from this page; not sending again");
                    return;
                }
                let Ok(controller) = AbortController::new() else { return };
                let signal = controller.signal();
                *self.abort.borrow_mut() = Some(controller);
                let body = returned::confirm_request(self.pg, payment_key, amount);
                let reply = api::send_confirm(&order_id, &idempotency_key, &body, &signal);
                let this = self.clone();
                spawn_local(async move {
                    let reply = reply.await;
                    this.dispatch(Event::ConfirmReplied { reply, now: now_ms() });
                });
            }
            Effect::StartConfirmTimer { after_ms } => {
                self.after(after_ms, |now| Event::ConfirmWaitElapsed { now });
            }
            Effect::AbortConfirm => {
                if let Some(controller) = self.abort.borrow_mut().take() {
                    controller.abort();
                }
            }
            Effect::ScheduleCheck { after_ms } => {
                self.after(after_ms, |now| Event::CheckDue { now });
            }
            Effect::SendCheck { order_id, wait_ms } => {
                let this = self.clone();
                spawn_local(async move {
                    let answer = api::check_order_waiting(&order_id, wait_ms, CHECK_TIMEOUT).await;
                    this.learn(&answer);
                    let check = check_of(answer);
                    this.dispatch(Event::CheckReplied { check, now: now_ms() });
                });
            }
            Effect::Abandon { order_id } => {
                let this = self.clone();
                spawn_local(async move {
                    let answer = api::abandon(&order_id, CHECK_TIMEOUT).await;
                    this.learn(&answer);
                    let check = check_of(answer);
                    this.dispatch(Event::AbandonReplied { check, now: now_ms() });
                });
            }
            Effect::RecordOutcome { order_id, outcome } => {
                if outcome == Outcome::Paid {
                    storage::clear_cart();
                }
                if let Err(reason) = storage::record_outcome(&order_id, &outcome) {
                    leptos::logging::warn!("payment outcome not stored: {reason}");
                }
            }
            Effect::LockNavigation => self.with_guard(NavGuard::lock),
            Effect::UnlockNavigation => self.with_guard(NavGuard::unlock),
            Effect::Log(message) => leptos::logging::log!("payonce: {message}"),
        }
    }

    /// Claims the order among this browser's tabs. The tab that holds the claim
    /// reads the stored attempt and acts on it while still inside the claim (with
    /// Web Locks, inside the lock's callback): the flow's effects up to the POST
    /// leaving all run synchronously from `dispatch`.
    fn claim(self: &Rc<Self>, order_id: String) {
        let this = self.clone();
        tab_claim::claim(&format!("payonce.confirm.{order_id}"), move |held| match held {
            // A page already gone lets the claim go (dropping it) and sends nothing.
            Some(_) if this.disposed.get() => {}
            Some(held) => {
                *this.claim.borrow_mut() = Some(held);
                let stored = storage::load_attempt(&order_id);
                this.dispatch(Event::Claimed { mine: true, stored, new_key: new_key(), now: now_ms() });
            }
            None => spawn_local(async move {
                let stored = wait_for_attempt(&order_id, CLAIM_LOST_WAIT).await;
                this.dispatch(Event::Claimed { mine: false, stored, new_key: new_key(), now: now_ms() });
            }),
        });
    }

    /// Dispatches `event(now)` after `after_ms`, unless the page is gone by then.
    fn after(self: &Rc<Self>, after_ms: u64, event: fn(u64) -> Event) {
        let this = self.clone();
        let timer = Timeout::new(u32::try_from(after_ms).unwrap_or(u32::MAX), move || this.dispatch(event(now_ms())));
        // Kept until the page goes away: a page sets a few dozen at most.
        self.timers.borrow_mut().push(timer);
    }
}

/// A fresh idempotency key, used only if this tab starts a new attempt.
fn new_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// What the server's answer about the order (a check, or closing it) says.
fn check_of(answer: Result<Order, ApiError>) -> Check {
    match answer {
        Ok(order) => classify_check(&order),
        Err(ApiError::Server { status, code, retry_after_ms }) => {
            classify_refused_check(status, code.as_deref(), retry_after_ms)
        }
        Err(ApiError::Network(_) | ApiError::Decode(_)) => Check::NothingLearned,
    }
}

/// The attempt another tab stores for the order, once it shows up here, or `None` after `within`.
async fn wait_for_attempt(order_id: &str, within: Duration) -> Option<StoredAttempt> {
    let step = Duration::from_millis(100);
    let mut waited = Duration::ZERO;
    loop {
        if let Some(stored) = storage::load_attempt(order_id) {
            return Some(stored);
        }
        if waited >= within {
            return None;
        }
        gloo_timers::future::sleep(step).await;
        waited += step;
    }
}
