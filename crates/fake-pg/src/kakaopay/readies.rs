//! What each ready recorded that the store does not keep, and how long a
//! ready lasts.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::wire::Ready;

/// KakaoPay: a ready that is not approved within fifteen minutes fails.
pub(super) const SESSION_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// The ready of each tid, with what the store does not keep (the partner's
/// user id, the item, tax-free and VAT amounts, the three URLs, the payloads).
/// A reset of the store leaves these behind, unreachable: the store no longer
/// knows their tids, so every call about them is -721.
#[derive(Default)]
pub(crate) struct Readies {
    by_tid: Mutex<HashMap<String, Ready>>,
}

impl Readies {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Ready>> {
        self.by_tid.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn insert(&self, tid: String, ready: Ready) {
        self.lock().insert(tid, ready);
    }

    pub(super) fn get(&self, tid: &str) -> Option<Ready> {
        self.lock().get(tid).cloned()
    }

    /// The payload of the approve that started processing the tid.
    pub(super) fn set_approve_payload(&self, tid: &str, payload: Option<String>) {
        if let Some(ready) = self.lock().get_mut(tid) {
            ready.approve_payload = payload;
        }
    }
}
