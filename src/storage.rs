//! What the page keeps in `localStorage`: each payment attempt by order id
//! (written before its POST leaves, so a reload or a second tab finds it), the
//! claims tabs make on an order where Web Locks are missing, the cart, and the
//! orders this browser sent to a payment window. Storage can be missing or full; the page then still works, and the
//! server's refusal of a second payment per order remains the last guard.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::cart::Cart;
use crate::flow::{Millis, Outcome, StoredAttempt};
use crate::{js_fields, json};

const ATTEMPT_PREFIX: &str = "payonce.attempt.";
const CLAIM_PREFIX: &str = "payonce.claim.";
const CART_KEY: &str = "payonce.cart";
/// Orders this browser sent to a payment window, each with when (ms).
const WINDOW_PREFIX: &str = "payonce.window.";
/// Windows opened longer ago than this are forgotten (a PG's session is minutes).
const WINDOW_RETENTION_MS: f64 = 24.0 * 60.0 * 60.0 * 1000.0;
/// Attempts older than this are forgotten; their orders page keeps the truth.
const ATTEMPT_RETENTION_MS: Millis = 30 * 24 * 60 * 60 * 1000;

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn read_text(key: &str) -> Option<String> {
    local_storage()?.get_item(key).ok().flatten()
}

fn write_text(key: &str, text: Option<String>) -> Result<(), String> {
    let storage = local_storage().ok_or("localStorage is not available")?;
    let text = text.ok_or("the value cannot be written as JSON")?;
    storage.set_item(key, &text).map_err(|_| "localStorage refused the write (full or disabled)".to_owned())
}

fn read<T: DeserializeOwned>(key: &str) -> Option<T> {
    json::parse(&read_text(key)?)
}

fn write<T: Serialize>(key: &str, value: &T) -> Result<(), String> {
    write_text(key, json::stringify(value))
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

/// A tab's claim to be the one that pays for an order (see `tab_claim`), kept
/// under a key of its own so that tabs claiming at once never overwrite each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub token: String,
    /// When it was first written: the earliest claim holds the order.
    pub since: Millis,
    /// When the tab last said it is still there.
    pub at: Millis,
}

fn claim_key(name: &str, token: &str) -> String {
    format!("{CLAIM_PREFIX}{name}.{token}")
}

/// Every tab's claim on `name`.
pub fn load_claims(name: &str) -> Vec<Claim> {
    let Some(storage) = local_storage() else { return vec![] };
    let prefix = claim_key(name, "");
    let length = storage.length().unwrap_or(0);
    (0..length)
        .filter_map(|index| storage.key(index).ok().flatten())
        .filter(|key| key.starts_with(&prefix))
        .filter_map(|key| read(&key))
        .collect()
}

pub fn save_claim(name: &str, claim: &Claim) -> Result<(), String> {
    write(&claim_key(name, &claim.token), claim)
}

pub fn remove_claim(name: &str, token: &str) {
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(&claim_key(name, token));
    }
}

// The cart goes through `js_fields`, not serde: it is in the landing bundle.
pub fn load_cart() -> Option<Cart> {
    js_fields::parse(&read_text(CART_KEY)?)
}

pub fn save_cart(cart: &Cart) {
    // A cart that cannot be saved is only an inconvenience after a reload.
    let _ = write_text(CART_KEY, js_fields::stringify(cart));
}

pub fn clear_cart() {
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(CART_KEY);
    }
}

/// Notes that this browser is sending `order_id` to a payment window, so that
/// its fail page may close the order without asking (a fail link for any
/// other order asks first). Forgets windows past their retention.
pub fn remember_payment_window(order_id: &str) {
    let Some(storage) = local_storage() else { return };
    let now = js_sys::Date::now();
    let length = storage.length().unwrap_or(0);
    let keys: Vec<String> = (0..length).filter_map(|index| storage.key(index).ok().flatten()).collect();
    for key in keys.iter().filter(|key| key.starts_with(WINDOW_PREFIX)) {
        let opened = storage.get_item(key).ok().flatten().and_then(|text| text.parse::<f64>().ok());
        if opened.is_none_or(|opened| now - opened > WINDOW_RETENTION_MS) {
            let _ = storage.remove_item(key);
        }
    }
    // Storage that refuses the write only costs the customer a click on the fail page.
    let _ = storage.set_item(&format!("{WINDOW_PREFIX}{order_id}"), &now.to_string());
}

/// Whether this browser sent `order_id` to a payment window.
pub fn opened_payment_window(order_id: &str) -> bool {
    read_text(&format!("{WINDOW_PREFIX}{order_id}")).is_some()
}
