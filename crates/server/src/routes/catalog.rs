use axum::extract::State;
use payonce_api::Product;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(catalog_list))
}

/// The products on sale, priced in won.
#[utoipa::path(get, path = "/catalog", tag = "shop", responses((status = 200, body = [Product])))]
async fn catalog_list(State(state): State<AppState>) -> Json<Vec<Product>> {
    Json(state.config.catalog.products().to_vec())
}
