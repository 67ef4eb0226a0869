//! The HTTP surface, one module per route group.

mod admin;
mod confirm;
mod payments;
mod window;

use axum::Router;

use crate::error::PgError;
use crate::state::AppState;

pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .merge(confirm::router())
        .merge(payments::router())
        .merge(window::router())
        .merge(admin::router())
        .fallback(not_found)
        .with_state(state)
}

async fn not_found() -> PgError {
    PgError::NotFound
}
