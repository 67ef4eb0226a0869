//! Payment lookups: `GET /v1/payments/{paymentKey}` and
//! `GET /v1/payments/orders/{orderId}`. They show a payment as it stands at
//! that moment: READY, IN_PROGRESS (authenticated, or being processed), DONE,
//! ABORTED or EXPIRED.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};

use crate::auth;
use crate::calls::OpenCall;
use crate::config::ExpiredLookup;
use crate::error::PgError;
use crate::payment::{Payment, PaymentStatus};
use crate::state::AppState;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/payments/{payment_key}", get(payments_by_key))
        .route("/v1/payments/orders/{order_id}", get(payments_by_order))
}

async fn payments_by_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(payment_key): Path<String>,
) -> Result<Json<Payment>, PgError> {
    state.store.note_lookup();
    auth::authorize(&headers, &state.settings.secret_key)?;
    let _open = OpenCall::open(&state.store, &payment_key);
    lookup_latency(&state).await;
    let read = shown(&state, state.store.lookup(&payment_key));
    answer_delay(&state).await;
    read.ok_or(PgError::NotFoundPayment(format!("paymentKey {payment_key}")))
}

async fn payments_by_order(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(order_id): Path<String>,
) -> Result<Json<Payment>, PgError> {
    state.store.note_lookup();
    auth::authorize(&headers, &state.settings.secret_key)?;
    lookup_latency(&state).await;
    let read = shown(&state, state.store.payment_for_order(&order_id));
    answer_delay(&state).await;
    read.ok_or(PgError::NotFoundPayment(format!("orderId {order_id}")))
}

/// The payment a lookup found, as the runtime configuration shows it: an
/// expired one may be answered as not found.
fn shown(state: &AppState, payment: Option<Payment>) -> Option<Json<Payment>> {
    let hidden = |payment: &Payment| {
        payment.status == PaymentStatus::Expired && state.store.config().expired_lookup == ExpiredLookup::NotFound
    };
    payment.filter(|payment| !hidden(payment)).map(Json)
}

/// A lookup's answer, once read, takes `lookup_answer_delay_ms` to arrive.
pub(crate) async fn answer_delay(state: &AppState) {
    let delay = state.settings.clock.scaled_ms(state.store.config().lookup_answer_delay_ms);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// A lookup reads the payment (a listing, the ledger) as it is once its latency has passed.
pub(crate) async fn lookup_latency(state: &AppState) {
    let latency = state.settings.clock.scaled_ms(state.store.config().lookup_latency_ms);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
}
