//! The shop API, `/v1` (its paths here are under it): server to server, for a shop's own backend, with its
//! key as `Authorization: Bearer`. A key signs in as its shop, and sees and
//! changes only that shop's checkouts (another shop's id is a 404). Wrong keys
//! are counted per client address and refused past an allowance, as the
//! operators' tokens are; each shop has a rate limit of its own.

use std::sync::Arc;

use axum::extract::{Extension, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use payonce_api::{
    ApiErrorBody, Checkout, CheckoutList, CreateCheckoutRequest, EventList, IDEMPOTENCY_KEY_HEADER, ShopRefundRequest,
};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::order_id::OrderIdPath;
use crate::checkouts::{self, ListQuery};
use crate::client_address::ClientIp;
use crate::error::{AppError, Json};
use crate::events::feed;
use crate::payment::confirm::validate_idempotency_key;
use crate::shops::Shop;
use crate::state::AppState;

/// The shop a request's key signed in as.
#[derive(Debug, Clone)]
pub struct SignedInShop(pub Arc<Shop>);

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(checkouts_create, checkouts_list))
        .routes(routes!(checkouts_show))
        .routes(routes!(checkouts_refund))
        .routes(routes!(events_feed))
}

/// Lets a request through only with a shop's key, within that shop's rate
/// limit; the request then carries [`SignedInShop`].
pub async fn require_shop(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if state.config.shops.is_empty() {
        return AppError::ShopApiOff.into_response();
    }
    let ClientIp(client) = ClientIp::of(&request);
    // Past its failures an address is refused before its key is looked at.
    if let Some(wait) = state.shop_key_failures.refused(client) {
        crate::metrics::shop_key_refused("throttled");
        return super::operator_sign_in::too_many(wait);
    }
    let given = super::operator_sign_in::bearer(&request);
    let Some(shop) = state.config.shops.signed_in(given) else {
        tracing::warn!(%client, key_sent = !given.is_empty(), "shop API: a wrong or missing key");
        // Only a request that carries a key counts: a page that makes a
        // browser send keyless requests cannot lock a shop out.
        if !given.is_empty()
            && let Some(wait) = state.shop_key_failures.failed(client)
        {
            crate::metrics::shop_key_refused("throttled");
            return super::operator_sign_in::too_many(wait);
        }
        crate::metrics::shop_key_refused("unauthorized");
        return AppError::ShopKeyRefused.into_response();
    };
    if let Err(wait) = state.shop_limits.spend(&shop.id) {
        return super::operator_sign_in::too_many(wait);
    }
    request.extensions_mut().insert(SignedInShop(Arc::new(shop.clone())));
    next.run(request).await
}

fn idempotency_key(headers: &HeaderMap) -> Result<String, AppError> {
    let key = headers.get(IDEMPOTENCY_KEY_HEADER).map(|value| value.to_str().unwrap_or("\u{0}"));
    Ok(validate_idempotency_key(key)?.to_owned())
}

/// Creates a checkout for the shop's order, and says where to send its customer.
#[utoipa::path(
    post,
    path = "/checkouts",
    tag = "shop API",
    request_body = CreateCheckoutRequest,
    params(("Idempotency-Key" = String, Header, description = "One per checkout the shop means to create: \
        the same key with the same body answers the same checkout; with another body, 422")),
    responses(
        (status = 201, body = Checkout),
        (status = 400, description = "INVALID_CHECKOUT (the message names the field), INVALID_REQUEST or INVALID_IDEMPOTENCY_KEY; nothing was created", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED: no shop's key", body = ApiErrorBody),
        (status = 422, description = "IDEMPOTENCY_KEY_REUSED with another body", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED; see Retry-After", body = ApiErrorBody),
    )
)]
async fn checkouts_create(
    State(state): State<AppState>,
    Extension(SignedInShop(shop)): Extension<SignedInShop>,
    headers: HeaderMap,
    body: Result<Json<CreateCheckoutRequest>, AppError>,
) -> Result<(StatusCode, Json<Checkout>), AppError> {
    let key = idempotency_key(&headers)?;
    let Json(request) = body?;
    let checkout = checkouts::create(&state, &state.checkout_links, &shop, &key, &request).await?;
    Ok((StatusCode::CREATED, Json(checkout)))
}

/// `GET /v1/checkouts`'s query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
struct ListParams {
    /// Every checkout of this reference, newest first.
    reference: Option<String>,
    /// The `next_cursor` of the page before.
    after: Option<String>,
    /// 1 to 100; 20 when absent.
    limit: Option<u32>,
}

/// The shop's checkouts, newest first: of one reference, or a page of all.
#[utoipa::path(
    get,
    path = "/checkouts",
    tag = "shop API",
    params(ListParams),
    responses(
        (status = 200, body = CheckoutList),
        (status = 400, description = "INVALID_REQUEST: a bad limit or cursor", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
    )
)]
async fn checkouts_list(
    State(state): State<AppState>,
    Extension(SignedInShop(shop)): Extension<SignedInShop>,
    query: Result<Query<ListParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<CheckoutList>, AppError> {
    let Query(params) = query.map_err(|rejection| AppError::InvalidRequest { message: rejection.body_text() })?;
    let query = ListQuery { reference: params.reference, after: params.after, limit: params.limit };
    Ok(Json(checkouts::list(&state, &state.checkout_links, &shop, &query).await?))
}

/// One of the shop's checkouts: its status, refunds, history and payment.
#[utoipa::path(
    get,
    path = "/checkouts/{checkout_id}",
    tag = "shop API",
    params(("checkout_id" = String, Path, description = "The checkout's id")),
    responses(
        (status = 200, body = Checkout),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 404, description = "ORDER_NOT_FOUND: no checkout of this shop's", body = ApiErrorBody),
    )
)]
async fn checkouts_show(
    State(state): State<AppState>,
    Extension(SignedInShop(shop)): Extension<SignedInShop>,
    OrderIdPath(checkout_id): OrderIdPath,
) -> Result<Json<Checkout>, AppError> {
    Ok(Json(checkouts::show(&state, &state.checkout_links, &shop, &checkout_id).await?))
}

/// Refunds the checkout's payment, in full or in part.
#[utoipa::path(
    post,
    path = "/checkouts/{checkout_id}/refunds",
    tag = "shop API",
    request_body = ShopRefundRequest,
    params(
        ("checkout_id" = String, Path, description = "The checkout's id"),
        ("Idempotency-Key" = String, Header, description = "One per refund: the same key is the same refund"),
    ),
    responses(
        (status = 200, description = "The PG answered: the checkout as it is now", body = Checkout),
        (status = 202, description = "The refund is stored and being sent (CANCEL_REQUESTED); ask again", body = Checkout),
        (status = 400, description = "INVALID_CANCEL_AMOUNT, INVALID_REQUEST or INVALID_IDEMPOTENCY_KEY", body = ApiErrorBody),
        (status = 404, description = "ORDER_NOT_FOUND", body = ApiErrorBody),
        (status = 409, description = "ORDER_NOT_PAID, CANCEL_IN_PROGRESS, ORDER_ALREADY_CANCELED or PARTIAL_REFUND_NOT_ALLOWED; nothing was done", body = ApiErrorBody),
        (status = 422, description = "IDEMPOTENCY_KEY_REUSED with another amount", body = ApiErrorBody),
    )
)]
async fn checkouts_refund(
    State(state): State<AppState>,
    Extension(SignedInShop(shop)): Extension<SignedInShop>,
    OrderIdPath(checkout_id): OrderIdPath,
    headers: HeaderMap,
    body: Result<Json<ShopRefundRequest>, AppError>,
) -> Result<(StatusCode, Json<Checkout>), AppError> {
    let key = idempotency_key(&headers)?;
    let Json(request) = body?;
    let (checkout, in_progress) =
        checkouts::refund(&state, &state.checkout_links, &shop, &checkout_id, &key, &request).await?;
    Ok((if in_progress { StatusCode::ACCEPTED } else { StatusCode::OK }, Json(checkout)))
}

/// `GET /v1/events`'s query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
struct FeedParams {
    /// The `next_cursor` of the page before; absent: from the shop's first event.
    after: Option<String>,
    /// 1 to 500; 100 when absent.
    limit: Option<u32>,
}

/// The shop's events in the order they were committed, oldest first: the
/// same events its endpoint is sent, for a shop that takes no webhooks or
/// catches up after an outage of its own.
#[utoipa::path(
    get,
    path = "/events",
    tag = "shop API",
    params(FeedParams),
    responses(
        (status = 200, body = EventList),
        (status = 400, description = "INVALID_REQUEST: a bad limit or cursor", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
    )
)]
async fn events_feed(
    State(state): State<AppState>,
    Extension(SignedInShop(shop)): Extension<SignedInShop>,
    query: Result<Query<FeedParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<EventList>, AppError> {
    let Query(params) = query.map_err(|rejection| AppError::InvalidRequest { message: rejection.body_text() })?;
    Ok(Json(feed::page(&state, &shop, params.after.as_deref(), params.limit).await?))
}
