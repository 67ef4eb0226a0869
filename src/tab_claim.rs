//! Which of this browser's tabs pays for an order. Two tabs can open the same
//! success link at the same moment (a restored session, a link opened twice);
//! one of them sends the confirm POST and the other checks.
//!
//! With Web Locks, a tab asks for the order's lock without queueing for it
//! (`ifAvailable`). The tab that gets it reads the stored attempt, decides,
//! persists and starts the POST inside the lock's callback, synchronously, and
//! if it sent, keeps the lock until its payment is settled or the tab goes away.
//! A tab that finds the lock taken checks instead. Keeping it while paying, not
//! only while deciding, means that no tab decides from `localStorage` alone: a
//! write made in one tab reaches another tab's process a moment later, so a tab
//! that had merely waited its turn could still read "nothing stored" and send.
//!
//! Without Web Locks, each tab writes a claim with a random token under a key of
//! its own, waits long enough for another tab's claim to arrive, and reads them
//! all: the earliest claim (the token breaks a tie) holds the order, so tabs that
//! see the same claims agree on one, whatever order their writes arrived in. The
//! holder renews its claim every second while it holds it; a claim not renewed
//! for a few seconds belongs to a tab that is gone.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use gloo_timers::callback::Interval;
use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use crate::clock::now_ms;
use crate::flow::Millis;
use crate::storage::{self, Claim};

/// How long a tab waits, after writing its `localStorage` claim, for another tab's to arrive.
const CLAIM_SETTLE: Duration = Duration::from_millis(300);
/// How often the holder of a `localStorage` claim renews it.
const CLAIM_RENEW: Duration = Duration::from_secs(1);
/// A `localStorage` claim not renewed for this long belongs to a tab that is gone.
const CLAIM_TTL_MS: Millis = 3_000;

/// The claim on an order, while this tab holds it. Dropping it lets it go.
pub struct Held(Option<Box<dyn FnOnce()>>);

impl Held {
    fn new(release: impl FnOnce() + 'static) -> Self {
        Self(Some(Box::new(release)))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(release) = self.0.take() {
            release();
        }
    }
}

type Decided = Box<dyn FnOnce(Option<Held>)>;

/// Claims `name` among this browser's tabs and calls `decided` with the claim
/// when this tab holds it, or with `None` when another tab does. With Web Locks,
/// `decided` runs inside the lock's callback: whatever it does synchronously is
/// done while holding the lock.
pub fn claim(name: &str, decided: impl FnOnce(Option<Held>) + 'static) {
    let slot: Rc<RefCell<Option<Decided>>> = Rc::new(RefCell::new(Some(Box::new(decided))));
    match web_lock_request(name, slot.clone()) {
        Some(request) => {
            let name = name.to_owned();
            spawn_local(async move {
                // A request the browser refused never ran the callback: claim without it.
                if JsFuture::from(request).await.is_ok() {
                    return;
                }
                let unclaimed = slot.borrow_mut().take();
                if let Some(decided) = unclaimed {
                    claim_in_storage(name, decided).await;
                }
            });
        }
        None => {
            if let Some(decided) = slot.borrow_mut().take() {
                spawn_local(claim_in_storage(name.to_owned(), decided));
            }
        }
    }
}

/// `navigator.locks.request(name, {ifAvailable: true}, callback)`, through
/// `Reflect` because web-sys exposes Web Locks only as an unstable API. `None`
/// when the browser has no Web Locks (or refuses the call at once).
fn web_lock_request(name: &str, slot: Rc<RefCell<Option<Decided>>>) -> Option<Promise> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let locks = Reflect::get(&navigator, &"locks".into()).ok().filter(JsValue::is_object)?;
    let request = Reflect::get(&locks, &"request".into()).ok()?.dyn_into::<Function>().ok()?;
    let options = Object::new();
    Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE).ok()?;
    let callback = Closure::once_into_js(move |lock: JsValue| -> JsValue {
        let Some(decided) = slot.borrow_mut().take() else { return JsValue::UNDEFINED };
        if lock.is_null() {
            decided(None);
            return JsValue::UNDEFINED;
        }
        // The lock is held until the promise returned here settles.
        let mut release = None;
        let held_until = Promise::new(&mut |resolve, _reject| release = Some(resolve));
        decided(Some(Held::new(move || {
            if let Some(release) = release {
                let _ = release.call0(&JsValue::UNDEFINED);
            }
        })));
        held_until.into()
    });
    let pending = request.call3(&locks, &JsValue::from_str(name), &options, &callback).ok()?;
    pending.dyn_into::<Promise>().ok()
}

async fn claim_in_storage(name: String, decided: Decided) {
    let live = |claim: &Claim| now_ms() < claim.at + CLAIM_TTL_MS;
    if storage::load_claims(&name).iter().any(live) {
        return decided(None);
    }
    let now = now_ms();
    let ours = Claim { token: uuid::Uuid::new_v4().to_string(), since: now, at: now };
    if storage::save_claim(&name, &ours).is_err() {
        // No storage, no coordination: this tab goes ahead; the server refuses a
        // second payment for an order by itself.
        return decided(Some(Held::new(|| {})));
    }
    gloo_timers::future::sleep(CLAIM_SETTLE).await;
    let first = storage::load_claims(&name)
        .into_iter()
        .filter(live)
        .min_by(|one, other| (one.since, &one.token).cmp(&(other.since, &other.token)));
    if first.is_some_and(|first| first.token != ours.token) {
        storage::remove_claim(&name, &ours.token);
        return decided(None);
    }
    let renewing = {
        let (name, ours) = (name.clone(), ours.clone());
        Interval::new(CLAIM_RENEW.as_millis() as u32, move || {
            let _ = storage::save_claim(&name, &Claim { at: now_ms(), ..ours.clone() });
        })
    };
    decided(Some(Held::new(move || {
        drop(renewing);
        storage::remove_claim(&name, &ours.token);
    })));
}
