//! Data a page loads from the API: `None` while loading, then the result.
//!
//! `LocalResource` does the same, but its async-derived machinery is compiled
//! once per value type and made up a tenth of the page's wasm; this is a signal
//! and an effect, which the page already carries.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;

/// A value loaded by a future, reloaded when a signal read by `fetch` changes
/// or [`Loaded::reload`] is called. A slow answer never overwrites a newer one,
/// and an answer equal to the one shown changes nothing: a page that refreshes
/// itself every few seconds redraws only when something changed, so the focus
/// and a screen reader's place in it stay where they were.
pub struct Loaded<T: Send + Sync + 'static> {
    value: RwSignal<Option<T>>,
    reloads: RwSignal<u64>,
}

impl<T: Send + Sync + 'static> Clone for Loaded<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for Loaded<T> {}

impl<T: Clone + PartialEq + Send + Sync + 'static> Loaded<T> {
    pub fn new<Fut: Future<Output = T> + 'static>(fetch: impl Fn() -> Fut + 'static) -> Self {
        let value = RwSignal::new(None);
        let reloads = RwSignal::new(0_u64);
        let latest = Arc::new(AtomicU64::new(0));
        Effect::new(move |_| {
            reloads.track();
            let request = latest.fetch_add(1, Ordering::SeqCst) + 1;
            let pending = fetch();
            let latest = latest.clone();
            spawn_local(async move {
                let result = pending.await;
                let changed = value.with_untracked(|shown| shown.as_ref() != Some(&result));
                if latest.load(Ordering::SeqCst) == request && changed {
                    value.set(Some(result));
                }
            });
        });
        Self { value, reloads }
    }

    /// The value, or `None` while the first load is running. Tracked.
    pub fn get(&self) -> Option<T> {
        self.value.get()
    }

    /// Loads again, keeping the current value on screen until the new one arrives.
    pub fn reload(&self) {
        self.reloads.update(|count| *count += 1);
    }

    /// Reloads every `every` for as long as `pending` holds for the loaded value,
    /// and stops when the page goes away.
    pub fn reload_every_while(self, every: Duration, pending: impl Fn(&T) -> bool + 'static) {
        let handle = set_interval_with_handle(
            move || {
                if self.value.with_untracked(|value| value.as_ref().is_some_and(&pending)) {
                    self.reload();
                }
            },
            every,
        )
        .ok();
        on_cleanup(move || {
            if let Some(handle) = handle {
                handle.clear();
            }
        });
    }
}
