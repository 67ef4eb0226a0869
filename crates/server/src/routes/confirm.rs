use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use payonce_api::{ConfirmRequest, IDEMPOTENCY_KEY_HEADER, Order};

use crate::customer::Customer;
use crate::error::{AppError, Json};
use crate::payment::confirm::{confirm, validate_idempotency_key};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/orders/{order_id}/confirm", post(orders_confirm))
}

/// 200 with the order when the outcome is final, 202 while it is not known yet.
async fn orders_confirm(
    State(state): State<AppState>,
    customer: Customer,
    Path(order_id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<ConfirmRequest>, AppError>,
) -> Result<(StatusCode, Json<Order>), AppError> {
    let key = headers.get(IDEMPOTENCY_KEY_HEADER).map(|value| value.to_str().unwrap_or("\u{0}"));
    let key = validate_idempotency_key(key)?;
    let Json(request) = body?;
    let order = confirm(&state, &customer, &order_id, key, &request).await?;
    let status = if order.status.is_final() { StatusCode::OK } else { StatusCode::ACCEPTED };
    Ok((status, Json(order)))
}
