use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use payonce_api::{ApiErrorBody, IDEMPOTENCY_KEY_HEADER, Order};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::order_id::OrderIdPath;
use crate::customer::Customer;
use crate::error::{AppError, Json};
use crate::payment::confirm::validate_idempotency_key;
use crate::payment::refund::cancel_for_customer;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(orders_cancel))
}

/// Cancels the customer's paid order and refunds it in full, within the cancel
/// window after paying. Send it with a fresh `Idempotency-Key`; the same key
/// (a double click) is the same refund.
#[utoipa::path(
    post,
    path = "/orders/{order_id}/cancel",
    tag = "payments",
    params(
        ("order_id" = String, Path, description = "The order"),
        ("Idempotency-Key" = String, Header, description = "A fresh UUID per cancel, at most 300 printable ASCII characters"),
    ),
    responses(
        (status = 200, description = "The PG answered: CANCELED (or PAID again if it refused)", body = Order),
        (status = 202, description = "CANCEL_REQUESTED: stored, and sent until the PG answers; check the order", body = Order),
        (status = 400, description = "INVALID_IDEMPOTENCY_KEY; nothing was done", body = ApiErrorBody),
        (status = 404, description = "No such order for this customer", body = ApiErrorBody),
        (status = 409, description = "ORDER_NOT_PAID, CANCEL_IN_PROGRESS, ORDER_ALREADY_CANCELED or CANCEL_WINDOW_PASSED; nothing was done", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED; nothing was done", body = ApiErrorBody),
    )
)]
async fn orders_cancel(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Order>), AppError> {
    let key = headers.get(IDEMPOTENCY_KEY_HEADER).map(|value| value.to_str().unwrap_or("\u{0}"));
    let key = validate_idempotency_key(key)?;
    let order = cancel_for_customer(&state, &customer, &order_id, key).await?;
    Ok((refund_status(&order), Json(order)))
}

/// 202 while the refund's outcome is not known, 200 once the PG answered.
pub fn refund_status(order: &Order) -> StatusCode {
    if order.status.is_refund_in_progress() { StatusCode::ACCEPTED } else { StatusCode::OK }
}
