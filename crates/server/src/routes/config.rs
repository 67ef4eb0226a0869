use axum::extract::State;
use payonce_api::PageConfig;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(config_show))
}

/// The page's timings, so it waits at least as long as this server can take.
#[utoipa::path(get, path = "/config", tag = "shop", responses((status = 200, body = PageConfig)))]
async fn config_show(State(state): State<AppState>) -> Json<PageConfig> {
    Json(state.config.page_config())
}
