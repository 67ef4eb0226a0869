//! Keeps the customer on the confirm page while a payment is in flight: back
//! navigation is undone (a guard history entry with the same URL is re-pushed),
//! in-app links are stopped, and leaving the site asks first. Each block calls
//! `on_blocked` so the page can say why.
//!
//! Browsers honour `beforeunload` and history entries only after the customer has
//! interacted with the page, so this is a courtesy, not a guarantee: the attempt
//! stored before the POST is what makes leaving and coming back safe.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{BeforeUnloadEvent, Event, MouseEvent};

pub struct NavGuard {
    state: Rc<GuardState>,
    on_pop: Closure<dyn Fn(Event)>,
    on_before_unload: Closure<dyn Fn(BeforeUnloadEvent)>,
    on_click: Closure<dyn Fn(MouseEvent)>,
}

struct GuardState {
    locked: Cell<bool>,
    /// Whether our duplicate history entry is on the history stack.
    guard_entry: Cell<bool>,
}

impl NavGuard {
    /// Installs the listeners; nothing is blocked until [`NavGuard::lock`].
    pub fn install(on_blocked: impl Fn() + 'static) -> Self {
        let on_blocked = Rc::new(on_blocked);
        let state = Rc::new(GuardState { locked: Cell::new(false), guard_entry: Cell::new(false) });

        let on_pop = {
            let state = state.clone();
            let on_blocked = on_blocked.clone();
            Closure::<dyn Fn(Event)>::new(move |_: Event| {
                if state.locked.get() {
                    // The browser already went back to the original entry (same URL):
                    // put the guard entry back and stay.
                    push_guard_entry();
                    state.guard_entry.set(true);
                    on_blocked();
                } else if state.guard_entry.replace(false) {
                    // Back from the guard entry lands on the same page; the customer
                    // meant to leave it, so finish the step they asked for.
                    go_back();
                }
            })
        };
        let on_before_unload = {
            let state = state.clone();
            Closure::<dyn Fn(BeforeUnloadEvent)>::new(move |event: BeforeUnloadEvent| {
                if state.locked.get() {
                    event.prevent_default();
                    #[allow(deprecated)] // still what Chrome and Safari read
                    event.set_return_value("Your payment is still being processed.");
                }
            })
        };
        let on_click = {
            let state = state.clone();
            Closure::<dyn Fn(MouseEvent)>::new(move |event: MouseEvent| {
                if state.locked.get() && is_link_click(&event) {
                    event.prevent_default();
                    event.stop_propagation();
                    on_blocked();
                }
            })
        };
        if let Some(window) = web_sys::window() {
            let _ = window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
            let _ = window.add_event_listener_with_callback("beforeunload", on_before_unload.as_ref().unchecked_ref());
            if let Some(document) = window.document() {
                // Capture phase on the document runs before the router's click handler.
                let _ = document.add_event_listener_with_callback_and_bool(
                    "click",
                    on_click.as_ref().unchecked_ref(),
                    true,
                );
            }
        }
        Self { state, on_pop, on_before_unload, on_click }
    }

    pub fn lock(&self) {
        if self.state.locked.replace(true) {
            return;
        }
        if !self.state.guard_entry.get() {
            push_guard_entry();
            self.state.guard_entry.set(true);
        }
    }

    /// Stops blocking. The guard entry stays; the next Back steps over it.
    pub fn unlock(&self) {
        self.state.locked.set(false);
    }
}

impl Drop for NavGuard {
    fn drop(&mut self) {
        self.state.locked.set(false);
        if let Some(window) = web_sys::window() {
            let _ = window.remove_event_listener_with_callback("popstate", self.on_pop.as_ref().unchecked_ref());
            let _ = window
                .remove_event_listener_with_callback("beforeunload", self.on_before_unload.as_ref().unchecked_ref());
            if let Some(document) = window.document() {
                let _ = document.remove_event_listener_with_callback_and_bool(
                    "click",
                    self.on_click.as_ref().unchecked_ref(),
                    true,
                );
            }
        }
    }
}

fn go_back() {
    if let Some(history) = web_sys::window().and_then(|window| window.history().ok()) {
        let _ = history.back();
    }
}

fn push_guard_entry() {
    if let Some(window) = web_sys::window()
        && let (Ok(history), Ok(href)) = (window.history(), window.location().href())
    {
        let _ = history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&href));
    }
}

/// A plain left click on a link (not one opening a new tab).
fn is_link_click(event: &MouseEvent) -> bool {
    if event.button() != 0 || event.meta_key() || event.ctrl_key() || event.shift_key() || event.alt_key() {
        return false;
    }
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| element.closest("a[href]").ok().flatten())
        .is_some()
}
