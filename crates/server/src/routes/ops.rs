use axum::Router;
use axum::extract::State;
use axum::routing::get;

use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(health_show)).route("/metrics", get(metrics_show))
}

async fn health_show() -> &'static str {
    "ok"
}

async fn metrics_show(State(state): State<AppState>) -> String {
    state.metrics.render()
}
