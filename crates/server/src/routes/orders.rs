use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use payonce_api::{AbandonRequest, ApiErrorBody, CreateOrderRequest, CreatedOrder, Order};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::order_id::OrderIdPath;
use crate::client_address::ClientIp;
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

/// One order of this customer, with its payment status. With `wait`, the
/// answer comes as soon as the order's status changes, or when the wait is over.
#[utoipa::path(
    get,
    path = "/orders/{order_id}",
    tag = "orders",
    params(
        ("order_id" = String, Path, description = "The order"),
        ("wait" = Option<String>, Query,
            description = "Wait up to this long (at most 2s, e.g. `2s`, `500ms`) for the order's status to change; \
                           answered at once when it does, or when the order is final"),
    ),
    responses(
        (status = 200, body = Order),
        (status = 400, description = "INVALID_WAIT", body = ApiErrorBody),
        (status = 404, body = ApiErrorBody),
    )
)]
async fn orders_show(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
    RawQuery(query): RawQuery,
) -> Result<Json<Order>, AppError> {
    let wait = check_wait(query.as_deref().unwrap_or_default())?;
    Ok(Json(orders::show_after_change(&state, client, &customer, &order_id, wait).await?))
}

/// The `wait` of a check: none, or a duration of at most two seconds.
fn check_wait(query: &str) -> Result<Duration, AppError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
        .map_err(|_| AppError::InvalidRequest { message: "the query string cannot be read".to_owned() })?;
    let mut waits = pairs.iter().filter(|(name, _)| name == "wait").map(|(_, value)| value.as_str());
    let (Some(value), None) = (waits.next(), waits.next()) else {
        return if pairs.iter().any(|(name, _)| name == "wait") {
            Err(AppError::InvalidWait("give wait once".to_owned()))
        } else {
            Ok(Duration::ZERO)
        };
    };
    let max = Duration::from_millis(payonce_api::MAX_CHECK_WAIT_MS);
    match humantime::parse_duration(value) {
        Ok(wait) if wait <= max => Ok(wait),
        Ok(_) => Err(AppError::InvalidWait(format!("wait {value:?} is longer than the most a check may wait, 2s"))),
        Err(_) => Err(AppError::InvalidWait(format!("wait {value:?} is not a duration such as 2s or 500ms"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_a_short_duration_given_once() {
        assert_eq!(check_wait("").unwrap(), Duration::ZERO);
        assert_eq!(check_wait("wait=2s").unwrap(), Duration::from_secs(2));
        assert_eq!(check_wait("other=1&wait=500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(check_wait("wait=0s").unwrap(), Duration::ZERO);
        for bad in ["wait=3s", "wait=2001ms", "wait=2", "wait=soon", "wait=", "wait=-1s", "wait=1s&wait=1s"] {
            assert!(matches!(check_wait(bad), Err(AppError::InvalidWait(_))), "{bad}");
        }
    }
}

/// The page's checking window ended without the server having the confirm:
/// the server closes the order as FAILED `CONFIRM_NOT_RECEIVED` if it still has
/// no payment, and answers with the order as stored either way.
#[utoipa::path(
    post,
    path = "/orders/{order_id}/abandon",
    tag = "orders",
    params(("order_id" = String, Path, description = "The order")),
    request_body = AbandonRequest,
    responses(
        (status = 200, body = Order),
        (status = 400, description = "INVALID_REQUEST: not `{}` sent as application/json", body = ApiErrorBody),
        (status = 404, body = ApiErrorBody),
        (status = 429, body = ApiErrorBody),
    )
)]
async fn orders_abandon(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
    // Nothing in it is read: see `AbandonRequest`.
    Json(AbandonRequest {}): Json<AbandonRequest>,
) -> Result<Json<Order>, AppError> {
    Ok(Json(abandon(&state, &customer, &order_id).await?))
}
