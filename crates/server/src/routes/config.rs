use axum::Router;
use axum::extract::State;
use axum::routing::get;
use payonce_api::PageConfig;

use crate::error::Json;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/config", get(config_show))
}

/// The page's timings, so it waits at least as long as this server can take.
async fn config_show(State(state): State<AppState>) -> Json<PageConfig> {
    Json(state.config.page_config())
}
