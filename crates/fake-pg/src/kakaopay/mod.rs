//! KakaoPay's face (`--api kakaopay`): its online single payment API and the
//! window its customers see, as a translation over the same store Toss's
//! face uses. A `tid` is the store's paymentKey; ready opens a session (with
//! KakaoPay's fifteen minutes); the window's approve is the customer
//! authenticating, which issues the `pg_token`; approve is a confirm without
//! an idempotency key; order is a lookup of the tid; cancel is a cancel
//! without a key. Latency, faults, the contract limit, the counters, the hold
//! and the outage are therefore the same as Toss's.
//!
//! - `api`: the four calls (ready, approve, order, cancel).
//! - `wire`: their request bodies and responses.
//! - `errors`: KakaoPay's `{error_code, error_message, extras}`, and the store's outcomes in its codes.
//! - `window`: the customer's window (QR page on a PC), with its choices.

mod api;
mod errors;
mod window;
mod wire;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};

use crate::state::AppState;
use errors::KakaoError;
use wire::Ready;

/// KakaoPay: a ready that is not approved within fifteen minutes fails.
const SESSION_DEADLINE: Duration = Duration::from_secs(15 * 60);

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

    fn insert(&self, tid: String, ready: Ready) {
        self.lock().insert(tid, ready);
    }

    fn get(&self, tid: &str) -> Option<Ready> {
        self.lock().get(tid).cloned()
    }

    /// The payload of the approve that started processing the tid.
    fn set_approve_payload(&self, tid: &str, payload: Option<String>) {
        if let Some(ready) = self.lock().get_mut(tid) {
            ready.approve_payload = payload;
        }
    }
}

pub(crate) fn router(state: AppState) -> Router<AppState> {
    let api = Router::new()
        .route("/online/v1/payment/ready", post(api::ready))
        .route("/online/v1/payment/approve", post(api::approve))
        .route("/online/v1/payment/order", post(api::order))
        .route("/online/v1/payment/cancel", post(api::cancel))
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(state, outage_gate));
    Router::new()
        .merge(api)
        .merge(window::router())
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .layer(Extension(Arc::new(Readies::default())))
}

/// During a simulated outage the API answers 503 (-503) at once and processes nothing.
async fn outage_gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if state.store.refuses_for_outage() {
        return KakaoError::unavailable().into_response();
    }
    next.run(request).await
}

async fn method_not_allowed() -> KakaoError {
    KakaoError::no_such_api(StatusCode::METHOD_NOT_ALLOWED)
}

async fn not_found() -> KakaoError {
    KakaoError::no_such_api(StatusCode::NOT_FOUND)
}

/// `Authorization: SECRET_KEY <key>`, or `DEV_SECRET_KEY <key>` as KakaoPay
/// also accepts for a development key. Missing is -400, anything else -401.
fn authorize(headers: &HeaderMap, secret_key: &str) -> Result<(), KakaoError> {
    let value = headers.get(AUTHORIZATION).ok_or_else(KakaoError::missing_authorization)?;
    let value = value.to_str().map_err(|_| KakaoError::invalid_key())?;
    match value.trim().split_once(' ') {
        Some(("SECRET_KEY" | "DEV_SECRET_KEY", key)) if key.trim() == secret_key => Ok(()),
        _ => Err(KakaoError::invalid_key()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_secret_key_goes_in_kakaopays_scheme() {
        assert_eq!(authorize(&headers("SECRET_KEY sk"), "sk"), Ok(()));
        assert_eq!(authorize(&headers("DEV_SECRET_KEY sk"), "sk"), Ok(()));
        assert_eq!(authorize(&HeaderMap::new(), "sk").unwrap_err().code, -400);
        for wrong in ["SECRET_KEY other", "KakaoAK sk", "Basic sk", "sk", "SECRET_KEY"] {
            assert_eq!(authorize(&headers(wrong), "sk").unwrap_err().code, -401, "{wrong}");
        }
    }
}
