use axum::extract::State;
use axum::http::StatusCode;
use payonce_api::{ApiErrorBody, CreateOrderRequest, CreatedOrder, Order};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::order_id::OrderIdPath;
use crate::customer::Customer;
use crate::error::{AppError, Json};
use crate::orders;
use crate::payment::abandon::abandon;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(orders_list, orders_create))
        .routes(routes!(orders_recent))
        .routes(routes!(orders_show))
        .routes(routes!(orders_abandon))
}

/// Prices the cart on the server and stores the order; says where to pay for it.
#[utoipa::path(
    post,
    path = "/orders",
    tag = "orders",
    request_body = CreateOrderRequest,
    responses(
        (status = 201, body = CreatedOrder),
        (status = 400, description = "Unknown product, bad quantity, empty or long cart", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED", body = ApiErrorBody),
    )
)]
async fn orders_create(
    State(state): State<AppState>,
    customer: Customer,
    Json(request): Json<CreateOrderRequest>,
) -> Result<(StatusCode, Json<CreatedOrder>), AppError> {
    let created = orders::create(&state, &customer, &request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// The customer's orders, newest first.
#[utoipa::path(get, path = "/orders", tag = "orders", responses((status = 200, body = [Order])))]
async fn orders_list(State(state): State<AppState>, customer: Customer) -> Result<Json<Vec<Order>>, AppError> {
    Ok(Json(orders::list(&state, &customer).await?))
}

/// The customer's newest order still being paid (however old) or paid in the
/// last ten minutes, or `null`: the page asks before a second purchase.
#[utoipa::path(get, path = "/orders/recent", tag = "orders", responses((status = 200, body = Option<Order>)))]
async fn orders_recent(State(state): State<AppState>, customer: Customer) -> Result<Json<Option<Order>>, AppError> {
    Ok(Json(orders::recent_payment(&state, &customer).await?))
}

/// One order of this customer, with its payment status.
#[utoipa::path(
    get,
    path = "/orders/{order_id}",
    tag = "orders",
    params(("order_id" = String, Path, description = "The order")),
    responses((status = 200, body = Order), (status = 404, body = ApiErrorBody))
)]
async fn orders_show(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
) -> Result<Json<Order>, AppError> {
    Ok(Json(orders::show(&state, &customer, &order_id).await?))
}

/// The page's checking window ended without the server having the confirm:
/// the server closes the order as FAILED `CONFIRM_NOT_RECEIVED` if it still has
/// no payment, and answers with the order as stored either way.
#[utoipa::path(
    post,
    path = "/orders/{order_id}/abandon",
    tag = "orders",
    params(("order_id" = String, Path, description = "The order")),
    responses((status = 200, body = Order), (status = 404, body = ApiErrorBody), (status = 429, body = ApiErrorBody))
)]
async fn orders_abandon(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
) -> Result<Json<Order>, AppError> {
    Ok(Json(abandon(&state, &customer, &order_id).await?))
}
