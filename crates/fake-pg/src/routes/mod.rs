//! The HTTP surface, one module per route group.

mod admin;
pub(crate) mod api_call;
mod cancel;
mod confirm;
pub(crate) mod payments;
mod sdk;
mod transactions;
mod window;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::config::Api;
use crate::error::PgError;
use crate::state::AppState;

/// The API this process speaks, the window and SDK that go with it, and the
/// admin API, which both faces share.
pub(crate) fn router(state: AppState) -> Router {
    match state.settings.api {
        Api::Toss => toss(state),
        Api::KakaoPay => {
            Router::new().merge(crate::kakaopay::router(state.clone())).merge(admin::router()).with_state(state)
        }
    }
}

fn toss(state: AppState) -> Router {
    // Set before the outage layer: a layered route keeps the fallback it had.
    let api = Router::new()
        .merge(confirm::router())
        .merge(cancel::router())
        .merge(payments::router())
        .merge(transactions::router())
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(state.clone(), outage_gate))
        .route_layer(middleware::from_fn_with_state(state.clone(), count_versions));
    Router::new()
        .merge(api)
        .merge(window::router())
        .merge(sdk::router())
        .merge(admin::router())
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .with_state(state)
}

/// During a simulated outage the API answers 503 at once and processes nothing.
async fn outage_gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if state.store.refuses_for_outage() {
        return PgError::Unavailable.into_response();
    }
    next.run(request).await
}

/// Counts the `TossPayments-API-Version` each API call asks for (not
/// enforced: this fake answers one version's Payment whatever is asked), and
/// the HTTP version it came in, so a test can tell its calls shared HTTP/2.
async fn count_versions(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let api_version = request.headers().get("TossPayments-API-Version").and_then(|value| value.to_str().ok());
    state.store.note_versions(api_version.unwrap_or("none"), &format!("{:?}", request.version()));
    next.run(request).await
}

async fn method_not_allowed() -> PgError {
    PgError::MethodNotAllowed
}

async fn not_found() -> PgError {
    PgError::NotFound
}
