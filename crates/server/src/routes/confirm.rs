use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use payonce_api::{ApiErrorBody, ConfirmRequest, IDEMPOTENCY_KEY_HEADER, Order, PgWindow, WindowRequest};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::order_id::OrderIdPath;
use crate::checkouts;
use crate::customer::Customer;
use crate::error::{AppError, Json};
use crate::payment::confirm::{confirm, validate_idempotency_key};
use crate::payment::window;
use crate::pg::adapters::Adapters;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(orders_confirm)).routes(routes!(orders_window))
}

/// Confirms the payment the PG window authorised. Send it once, with a fresh
/// `Idempotency-Key`; the same key replays the stored answer.
#[utoipa::path(
    post,
    path = "/orders/{order_id}/confirm",
    tag = "payments",
    params(
        ("order_id" = String, Path, description = "The order"),
        ("Idempotency-Key" = String, Header, description = "A fresh UUID per attempt, at most 300 printable ASCII characters"),
    ),
    request_body = ConfirmRequest,
    responses(
        (status = 200, description = "Final: PAID or FAILED", body = Order),
        (status = 202, description = "Not known yet (PENDING or UNKNOWN): check the order, never resend", body = Order),
        (status = 400, description = "Bad input; nothing was sent to the PG", body = ApiErrorBody),
        (status = 404, description = "No such order for this customer", body = ApiErrorBody),
        (status = 409, description = "PAYMENT_IN_PROGRESS, ORDER_ALREADY_PAID or ORDER_ALREADY_FAILED, with the order", body = ApiErrorBody),
        (status = 422, description = "IDEMPOTENCY_KEY_REUSED for another order", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED; nothing was done", body = ApiErrorBody),
    )
)]
async fn orders_confirm(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
    headers: HeaderMap,
    body: Result<Json<ConfirmRequest>, AppError>,
) -> Result<(StatusCode, Json<Order>), AppError> {
    // Written as the request arrives, not when it is answered: a confirm whose
    // server dies mid-payment is still on record as received (the journeys'
    // invariants count these lines across restarts).
    tracing::info!(order_id = %order_id, "customer's confirm received");
    let key = headers.get(IDEMPOTENCY_KEY_HEADER).map(|value| value.to_str().unwrap_or("\u{0}"));
    let key = validate_idempotency_key(key)?;
    let Json(request) = body?;
    let pg = Adapters::checked(&request)?;
    checkouts::may_pay(&state, &order_id, pg).await?;
    let order = confirm(&state, &customer, &order_id, key, (pg, &request)).await?;
    let status = if order.status.is_final() { StatusCode::OK } else { StatusCode::ACCEPTED };
    Ok((status, Json(order)))
}

/// Prepares the order's payment at a PG that asks for it before its window
/// opens (KakaoPay), and says where the window is (a QR code on a PC, the PG's
/// app on a phone). Asked again while the prepared payment is fresh, it
/// answers the same window; nothing is charged until the customer's confirm,
/// with what the window gives (KakaoPay's `pg_token`), is approved.
#[utoipa::path(
    post,
    path = "/orders/{order_id}/window",
    tag = "payments",
    params(("order_id" = String, Path, description = "The order")),
    request_body = WindowRequest,
    responses(
        (status = 200, description = "The window of the order's prepared payment", body = PgWindow),
        (status = 400, description = "PG_NOT_OFFERED: the order cannot be paid there; INVALID_REQUEST: the page opens that PG's window by itself", body = ApiErrorBody),
        (status = 404, description = "No such order for this customer", body = ApiErrorBody),
        (status = 409, description = "The order's payment is under way or over (PAYMENT_IN_PROGRESS, ORDER_ALREADY_PAID, ORDER_ALREADY_FAILED)", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED; nothing was done", body = ApiErrorBody),
        (status = 502, description = "The PG did not prepare it (PG_BUSY, PG_UNREACHABLE, PG_REFUSED); nothing was charged, ask again", body = ApiErrorBody),
    )
)]
async fn orders_window(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
    body: Result<Json<WindowRequest>, AppError>,
) -> Result<Json<PgWindow>, AppError> {
    let Json(WindowRequest { pg }) = body?;
    checkouts::may_pay(&state, &order_id, pg).await?;
    Ok(Json(window::prepare(&state, &customer, &order_id, pg).await?))
}
