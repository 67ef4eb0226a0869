//! The admin API under `/__admin`: runtime configuration, counters, reset.
//! Unauthenticated on purpose: this is a test tool on a trusted machine.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::config::RuntimeConfig;
use crate::error::PgError;
use crate::state::AppState;
use crate::stats::Stats;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/__admin/config", get(config_show).put(config_update))
        .route("/__admin/stats", get(stats_show))
        .route("/__admin/reset", post(state_reset))
        .route("/__admin/health", get(health))
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

async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}
