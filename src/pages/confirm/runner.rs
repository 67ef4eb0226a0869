//! Executes the flow's effects in the browser and feeds their results back as
//! events. The only place on the confirm page that sends, waits or stores.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::time::Duration;

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use leptos::task::spawn_local;
use payonce_api::ConfirmRequest;
use web_sys::AbortController;

use crate::api;
use crate::clock::now_ms;
use crate::flow::{Check, Effect, Event, Flow, Outcome, State, classify_poll};
use crate::nav_guard::NavGuard;
use crate::storage;

/// A check that takes longer than this learned nothing; the next one follows.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

thread_local! {
    /// Orders whose confirm this page has sent since it loaded. A second line of
    /// defence after the flow's own rule: a re-mounted component starts a new flow.
    static CONFIRMS_SENT: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

pub struct Runner {
    flow: RefCell<Flow>,
    state: RwSignal<State>,
    /// Taken (and its listeners removed) when the page goes away.
    guard: RefCell<Option<NavGuard>>,
    abort: RefCell<Option<AbortController>>,
    /// Dropping a `Timeout` cancels it and frees its closure, which holds the runner.
    timers: RefCell<Vec<Timeout>>,
    disposed: Cell<bool>,
}

impl Runner {
    pub fn new(flow: Flow, state: RwSignal<State>, guard: NavGuard) -> Rc<Self> {
        Rc::new(Self {
            flow: RefCell::new(flow),
            state,
            guard: RefCell::new(Some(guard)),
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
        self.state.set(self.flow.borrow().state().clone());
        for effect in effects {
            self.run(effect);
        }
    }

    /// The page is going away: stop the timers and the navigation guard. An in-flight
    /// POST is left alone; the server finishes it either way.
    pub fn dispose(&self) {
        self.disposed.set(true);
        self.guard.borrow_mut().take();
        self.timers.borrow_mut().clear();
    }

    fn with_guard(&self, action: impl FnOnce(&NavGuard)) {
        if let Some(guard) = self.guard.borrow().as_ref() {
            action(guard);
        }
    }

    fn run(self: &Rc<Self>, effect: Effect) {
        match effect {
            Effect::PersistAttempt(attempt) => {
                if let Err(reason) = storage::save_attempt(&attempt) {
                    leptos::logging::warn!("payment attempt not stored ({reason}); a reload cannot resume it");
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
                let body = ConfirmRequest { payment_key, amount };
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
            Effect::SchedulePoll { after_ms } => {
                self.after(after_ms, |now| Event::PollDue { now });
            }
            Effect::Poll { order_id } => {
                let this = self.clone();
                spawn_local(async move {
                    let check = match api::check_order(&order_id, CHECK_TIMEOUT).await {
                        Ok(order) => classify_poll(&order),
                        Err(_) => Check::NothingLearned,
                    };
                    this.dispatch(Event::PollReplied { check, now: now_ms() });
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

    /// Dispatches `event(now)` after `after_ms`, unless the page is gone by then.
    fn after(self: &Rc<Self>, after_ms: u64, event: fn(u64) -> Event) {
        let this = self.clone();
        let timer = Timeout::new(u32::try_from(after_ms).unwrap_or(u32::MAX), move || this.dispatch(event(now_ms())));
        // Kept until the page goes away: a page sets a few dozen at most.
        self.timers.borrow_mut().push(timer);
    }
}
