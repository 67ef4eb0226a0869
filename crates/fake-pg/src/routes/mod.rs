//! The HTTP surface, one module per route group.

mod admin;
mod confirm;
mod payments;
mod window;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::error::PgError;
use crate::state::AppState;

pub(crate) fn router(state: AppState) -> Router {
    let api = Router::new()
        .merge(confirm::router())
        .merge(payments::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), outage_gate));
    Router::new().merge(api).merge(window::router()).merge(admin::router()).fallback(not_found).with_state(state)
}

/// During a simulated outage the API answers 503 at once and processes nothing.
async fn outage_gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if state.store.refuses_for_outage() {
        return PgError::Unavailable.into_response();
    }
    next.run(request).await
}

async fn not_found() -> PgError {
    PgError::NotFound
}
