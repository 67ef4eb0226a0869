use axum::Router;
use axum::routing::get;
use payonce_api::Product;

use crate::error::Json;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/catalog", get(catalog_list))
}

async fn catalog_list() -> Json<Vec<Product>> {
    Json(crate::catalog::products())
}
