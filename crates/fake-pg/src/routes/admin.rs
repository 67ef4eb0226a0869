//! The admin API under `/__admin`: runtime configuration, counters, reset,
//! and charges made directly. Unauthenticated on purpose: this is a test tool
//! on a trusted machine.

use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::api_call::{self, optional_text, text};
use super::confirm::check_order_id;
use crate::config::RuntimeConfig;
use crate::error::PgError;
use crate::payment::Payment;
use crate::state::AppState;
use crate::stats::Stats;

/// The confirm's limits, for the same fields.
const MAX_PAYMENT_KEY_CHARS: usize = 200;
const MAX_ORDER_ID_CHARS: usize = 64;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/__admin/config", get(config_show).put(config_update))
        .route("/__admin/stats", get(stats_show))
        .route("/__admin/reset", post(state_reset))
        .route("/__admin/health", get(health))
        .route("/__admin/charges", post(charge_create))
}

async fn config_show(State(state): State<AppState>) -> Json<RuntimeConfig> {
    Json(state.store.config())
}

async fn config_update(State(state): State<AppState>, body: Bytes) -> Result<Json<RuntimeConfig>, PgError> {
    let patch: Value = serde_json::from_slice(&body)
        .map_err(|error| PgError::InvalidConfig(format!("The body is not valid JSON: {error}.")))?;
    let config = state.store.update_config(&patch).map_err(|error| PgError::InvalidConfig(error.to_string()))?;
    tracing::info!(config = %serde_json::to_string(&config).unwrap_or_default(), "runtime config changed");
    Ok(Json(config))
}

async fn stats_show(State(state): State<AppState>) -> Json<Stats> {
    Json(state.store.stats())
}

async fn state_reset(State(state): State<AppState>) -> StatusCode {
    state.store.reset();
    tracing::info!("state reset");
    StatusCode::NO_CONTENT
}

/// `{orderId, amount, paymentKey?}`: a DONE payment, as if a charge had gone
/// through that the shop never heard of, for reconciliation tests.
async fn charge_create(State(state): State<AppState>, body: Bytes) -> Result<Json<Payment>, PgError> {
    let fields = api_call::json_object(&body, "orderId, amount and optionally paymentKey")?;
    let order_id = text(&fields, "orderId", MAX_ORDER_ID_CHARS)?;
    check_order_id(&order_id)?;
    let payment_key = optional_text(&fields, "paymentKey", MAX_PAYMENT_KEY_CHARS)?;
    let amount = fields
        .get("amount")
        .and_then(Value::as_u64)
        .filter(|amount| *amount > 0)
        .ok_or_else(|| PgError::InvalidRequest("amount is required: a positive whole number of won.".to_owned()))?;
    let settings = &state.settings;
    let payment = state.store.admin_charge(payment_key, order_id, amount, SystemTime::now(), |payment_key| {
        settings.receipt_url(payment_key)
    })?;
    tracing::info!(payment_key = %payment.payment_key, order_id = %payment.order_id, amount, "charged directly");
    Ok(Json(payment))
}

async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}
