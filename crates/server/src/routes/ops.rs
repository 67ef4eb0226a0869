use axum::Router;
use axum::extract::State;
use axum::routing::get;

use crate::state::AppState;

/// Liveness, on both listeners: load balancers ask the public one.
pub fn health_router() -> Router<AppState> {
    Router::new().route("/healthz", get(health_show))
}

/// Prometheus metrics, on the admin listener only, behind an operator's token
/// once there are operators (a scraper sends a read-only one as a bearer token).
pub fn metrics_router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/metrics", get(metrics_show))
        .route_layer(axum::middleware::from_fn_with_state(state, super::operator_sign_in::require_operator_when_set))
}

async fn health_show() -> &'static str {
    "ok"
}

async fn metrics_show(State(state): State<AppState>) -> String {
    state.metrics.render()
}
