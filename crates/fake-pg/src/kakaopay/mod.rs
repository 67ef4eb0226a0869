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
//! - `readies`: what each ready recorded that the store does not keep; `auth`: the secret key.

mod api;
mod auth;
mod errors;
mod readies;
mod window;
mod wire;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};

use crate::state::AppState;
use errors::KakaoError;
use readies::Readies;

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
