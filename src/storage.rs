//! What the page keeps in `localStorage`: each payment attempt by order id
//! (written before its POST leaves, so a reload or a second tab finds it), and
//! the cart. Storage can be missing or full; the page then still works, and the
//! server's refusal of a second payment per order remains the last guard.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cart::Cart;
use crate::flow::{Millis, Outcome, StoredAttempt};

const ATTEMPT_PREFIX: &str = "payonce.attempt.";
const CART_KEY: &str = "payonce.cart";
/// Attempts older than this are forgotten; their orders page keeps the truth.
const ATTEMPT_RETENTION_MS: Millis = 30 * 24 * 60 * 60 * 1000;

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn read<T: DeserializeOwned>(key: &str) -> Option<T> {
    let text = local_storage()?.get_item(key).ok().flatten()?;
    serde_json::from_str(&text).ok()
}

fn write<T: Serialize>(key: &str, value: &T) -> Result<(), String> {
    let storage = local_storage().ok_or("localStorage is not available")?;
    let text = serde_json::to_string(value).map_err(|error| error.to_string())?;
    storage.set_item(key, &text).map_err(|_| "localStorage refused the write (full or disabled)".to_owned())
}

pub fn load_attempt(order_id: &str) -> Option<StoredAttempt> {
    read(&format!("{ATTEMPT_PREFIX}{order_id}"))
}

/// Stores the attempt, after forgetting attempts past their retention.
pub fn save_attempt(attempt: &StoredAttempt) -> Result<(), String> {
    forget_attempts_before(attempt.started_at.saturating_sub(ATTEMPT_RETENTION_MS));
    write(&format!("{ATTEMPT_PREFIX}{}", attempt.order_id), attempt)
}

/// Keeps the final outcome with the attempt so a reload shows it without asking.
pub fn record_outcome(order_id: &str, outcome: &Outcome) -> Result<(), String> {
    let mut attempt = load_attempt(order_id).ok_or("no stored attempt for this order")?;
    attempt.outcome = Some(outcome.clone());
    write(&format!("{ATTEMPT_PREFIX}{order_id}"), &attempt)
}

fn forget_attempts_before(cutoff: Millis) {
    let Some(storage) = local_storage() else { return };
    let length = storage.length().unwrap_or(0);
    let stale: Vec<String> = (0..length)
        .filter_map(|index| storage.key(index).ok().flatten())
        .filter(|key| key.starts_with(ATTEMPT_PREFIX))
        .filter(|key| read::<StoredAttempt>(key).is_none_or(|attempt| attempt.started_at < cutoff))
        .collect();
    for key in stale {
        let _ = storage.remove_item(&key);
    }
}

pub fn load_cart() -> Option<Cart> {
    read(CART_KEY)
}

pub fn save_cart(cart: &Cart) {
    // A cart that cannot be saved is only an inconvenience after a reload.
    let _ = write(CART_KEY, cart);
}

pub fn clear_cart() {
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(CART_KEY);
    }
}
