//! The operators' API, on the admin listener only: refunds, behind a bearer
//! token. Without a token configured it is off (503), never open.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use payonce_api::{IDEMPOTENCY_KEY_HEADER, OPERATOR_HEADER, OperatorCancelRequest, Order};
use sha2::{Digest, Sha256};

use super::cancel::refund_status;
use super::order_id::OrderIdPath;
use crate::error::{AppError, Json};
use crate::payment::confirm::validate_idempotency_key;
use crate::payment::refund::cancel_for_operator;
use crate::state::AppState;

/// Who an action is recorded as when the request does not say.
const DEFAULT_OPERATOR: &str = "operator";
/// The longest operator name kept in the audit log.
const OPERATOR_MAX_LEN: usize = 100;

pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/admin/orders/{order_id}/cancel", post(admin_orders_cancel))
        .route_layer(middleware::from_fn_with_state(state, require_token))
}

/// Lets a request through only with `Authorization: Bearer <admin token>`.
async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Result<Response, AppError> {
    let Some(expected) = state.config.admin_token.as_deref().filter(|token| !token.is_empty()) else {
        return Err(AppError::OperatorApiOff);
    };
    let given = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    // Compared as digests, so the time taken says nothing about the token.
    if Sha256::digest(given.as_bytes()) != Sha256::digest(expected.as_bytes()) {
        return Err(AppError::Unauthorized);
    }
    Ok(next.run(request).await)
}

/// Refunds `amount` of what is left of a paid order, or all of it. Answers like
/// the customer's cancel: 200 once the PG answered, 202 while it is being sent.
async fn admin_orders_cancel(
    State(state): State<AppState>,
    OrderIdPath(order_id): OrderIdPath,
    headers: HeaderMap,
    body: Result<Json<OperatorCancelRequest>, AppError>,
) -> Result<(StatusCode, Json<Order>), AppError> {
    let key = headers.get(IDEMPOTENCY_KEY_HEADER).map(|value| value.to_str().unwrap_or("\u{0}"));
    let key = validate_idempotency_key(key)?;
    let Json(request) = body?;
    let operator = operator_name(&headers);
    let refunded = cancel_for_operator(&state, &operator, &order_id, key, request.amount, &request.reason).await;
    // A refused request changes nothing, so it has no audit line; the log keeps who tried what.
    if let Err(error) = &refunded {
        tracing::warn!(operator, order_id, amount = request.amount, %error, "operator cancel refused");
    }
    let order = refunded?;
    Ok((refund_status(&order), Json(order)))
}

/// The operator named by `X-Operator` (printable ASCII, at most 100 characters), or "operator".
fn operator_name(headers: &HeaderMap) -> String {
    headers
        .get(OPERATOR_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|name| {
            !name.is_empty()
                && name.len() <= OPERATOR_MAX_LEN
                && name.bytes().all(|byte| byte.is_ascii_graphic() || byte == b' ')
        })
        .unwrap_or(DEFAULT_OPERATOR)
        .to_owned()
}
