//! HTTP routes, one module per group. Handlers extract, call the domain, and map
//! the result; the rules live in `payment`, `catalog` and `db`.

mod cancel;
mod catalog;
mod checkouts;
mod config;
mod confirm;
mod console;
mod operator;
mod operator_sign_in;
mod operator_views;
mod ops;
mod order_id;
mod orders;
mod page;
mod security;
mod shop_api;
mod webhooks;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::middleware;
use axum::routing::get;
use tower::util::option_layer;
use tower_http::compression::CompressionLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::error::{AppError, BODY_LIMIT_BYTES};
use crate::state::AppState;

/// The API's description, served at `GET /api/openapi.json`. The paths come
/// from the same routers that serve them, so the two cannot drift apart.
#[derive(OpenApi)]
#[openapi(
    info(title = "payonce order server", description = "The checkout page's API: orders, and paying for them exactly once."),
    servers((url = "/api")),
    components(schemas(payonce_api::ApiErrorBody))
)]
struct ApiDoc;

/// What customers reach: `/api`, `/healthz` (for load balancers) and the page.
pub fn router(state: AppState) -> Router {
    let customer_cookies = state.customer_cookies.clone();
    let new_customers = state.limits.new_customers();
    let [customer_writes, customer_reads] = state.limits.per_customer();
    let [address_writes, address_reads] = state.limits.per_address();
    let (api, mut spec) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(config::router())
        .merge(catalog::router())
        .merge(orders::router())
        .merge(confirm::router())
        .merge(cancel::router())
        .merge(checkouts::router())
        .split_for_parts();
    // The PG's webhooks are no customer's: no cookie, and a limit of their own
    // instead of the customers' and their addresses'.
    let (webhooks, webhooks_spec) = OpenApiRouter::new().merge(webhooks::router()).split_for_parts();
    spec.merge(webhooks_spec);
    // The shop API: no customer, no cookie; a shop's key and its own limit.
    // It is served under `/v1`, not `/api`: its paths say so in the document,
    // each with the root as its server.
    let (shop_api, shop_spec) = OpenApiRouter::new().merge(shop_api::router()).split_for_parts();
    for (path, mut item) in shop_spec.paths.paths {
        item.servers = Some(vec![utoipa::openapi::server::Server::new("/")]);
        spec.paths.paths.insert(format!("/v1{path}"), item);
    }
    if let Some(components) = shop_spec.components {
        spec.components.get_or_insert_with(Default::default).schemas.extend(components.schemas);
    }
    let spec = Arc::new(spec);
    let shop_api = shop_api
        .route_layer(middleware::from_fn(crate::metrics::track_http))
        .fallback(|| async { AppError::NotFound })
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(middleware::from_fn_with_state(state.clone(), shop_api::require_shop))
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .layer(RequestBodyTimeoutLayer::new(state.config.client_timeout))
        .layer(SetResponseHeaderLayer::if_not_present(CACHE_CONTROL, HeaderValue::from_static(security::NO_STORE)));
    let door = Arc::new(webhooks::Door::new(&state.config.webhook_door()));
    let webhooks = webhooks
        .route("/webhooks/toss/{secret}", webhooks::secret_route())
        .route_layer(middleware::from_fn(crate::metrics::track_http))
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(option_layer(state.limits.webhooks()))
        // Outside the PG's limit: a stranger's send never reaches it.
        .layer(middleware::from_fn_with_state(door, webhooks::door));
    let api = api
        .route("/openapi.json", get(move || async move { axum::Json(spec.as_ref().clone()) }))
        .route_layer(middleware::from_fn(crate::metrics::track_http))
        .fallback(|| async { AppError::NotFound })
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(option_layer(customer_reads))
        .layer(option_layer(customer_writes))
        .layer(middleware::from_fn(move |request, next| {
            crate::rate_limits::limit_new_customers(new_customers.clone(), request, next)
        }))
        .layer(middleware::from_fn(move |jar, request, next| {
            crate::customer::identify(customer_cookies.clone(), jar, request, next)
        }))
        .layer(option_layer(address_reads))
        .layer(option_layer(address_writes))
        .merge(webhooks)
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .layer(RequestBodyTimeoutLayer::new(state.config.client_timeout))
        // Orders are one customer's: no shared cache keeps them (an answer that
        // may be cached would set its own Cache-Control; none does today).
        .layer(SetResponseHeaderLayer::if_not_present(CACHE_CONTROL, HeaderValue::from_static(security::NO_STORE)));
    let app = Router::new().nest("/api", api).nest("/v1", shop_api).merge(ops::health_router());
    let app = match &state.config.static_dir {
        Some(dir) => app.merge(page::router(dir, state.config.test_payments_in_public())),
        None => app,
    };
    let sdk_origins = state.config.payment_sdk_origins();
    let [policy, nosniff, referrer, frames] = security::layers(state.config.static_dir.as_deref(), &sdk_origins);
    let hsts = security::hsts(&state.config.public_base_url());
    let trusted_proxies = state.config.trusted_proxies();
    let ipv6_prefix = state.config.ipv6_client_prefix;
    app.with_state(state)
        // Around every route: each limit and handler sees the real client.
        .layer(middleware::from_fn(move |request, next| {
            crate::client_address::identify(trusted_proxies.clone(), ipv6_prefix, request, next)
        }))
        .layer(option_layer(hsts))
        .layer(CompressionLayer::new())
        .layer(policy)
        .layer(nosniff)
        .layer(referrer)
        .layer(frames)
        .layer(TraceLayer::new_for_http())
}

/// What operators reach, on the admin listener only: metrics, health, the
/// operators' API, which needs an operator's token, and the console page that
/// calls it; all of it only for the host names the listener answers to.
pub fn admin_router(state: AppState) -> Router {
    let [no_store, referrer, nosniff] = security::admin_layers();
    Router::new()
        .merge(ops::health_router())
        .merge(ops::metrics_router(state.clone()))
        .merge(operator::router(state.clone()))
        .merge(console::router())
        // Operators' tools read `{code, message}` too, whatever they asked.
        .fallback(|| async { AppError::NotFound })
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        // A body that trickles in would hold an operator's request (and its
        // connection) open as long as the sender liked.
        .layer(RequestBodyTimeoutLayer::new(state.config.client_timeout))
        .layer(no_store)
        .layer(referrer)
        .layer(nosniff)
        // Outermost: a DNS-rebinding page gets nothing, not even the console.
        .layer(middleware::from_fn_with_state(state.clone(), operator_sign_in::check_host))
        .with_state(state)
}
