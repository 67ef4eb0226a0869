//! The operators' console: one static page and its script at `/admin/`, on the
//! admin listener. It holds no secret: the operator types the admin token into
//! it, and every call it makes goes through the operators' API with that token.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::state::AppState;

const PAGE: &str = include_str!("console/console.html");
const SCRIPT: &str = include_str!("console/console.js");
/// Scripts from this listener only (no inline ones), calls to it only, no framing.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/", get(page))
        .route("/admin/console.js", get(script))
        .route("/admin", get(|| async { axum::response::Redirect::permanent("/admin/") }))
}

async fn page() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CONTENT_SECURITY_POLICY, POLICY),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
}

async fn script() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (CACHE_CONTROL, "no-store"),
        ],
        SCRIPT,
    )
}
