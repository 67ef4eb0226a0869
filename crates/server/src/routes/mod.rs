//! HTTP routes, one module per group. Handlers extract, call the domain, and map
//! the result; the rules live in `payment`, `catalog` and `db`.

mod catalog;
mod config;
mod confirm;
mod ops;
mod orders;
mod page;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

use crate::error::AppError;
use crate::state::AppState;

/// Largest request body the API reads. Carts and confirms are a few hundred bytes.
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

/// The whole HTTP surface: `/api`, operations endpoints, and the page.
pub fn router(state: AppState) -> Router {
    let secure_cookies = state.config.public_base_url().starts_with("https://");
    let api = Router::new()
        .merge(config::router())
        .merge(catalog::router())
        .merge(orders::router())
        .merge(confirm::router())
        .route_layer(middleware::from_fn(crate::metrics::track_http))
        .fallback(|| async { AppError::NotFound })
        .layer(middleware::from_fn(move |jar, request, next| {
            crate::customer::identify(secure_cookies, jar, request, next)
        }))
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES));
    let app = Router::new().nest("/api", api).merge(ops::router());
    let app = match &state.config.static_dir {
        Some(dir) => app.merge(page::router(dir)),
        None => app,
    };
    app.with_state(state).layer(CompressionLayer::new()).layer(TraceLayer::new_for_http())
}
