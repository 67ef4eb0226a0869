//! The operators' API, on the admin listener only, behind a bearer token:
//! orders by how long they have waited, an order's whole story, "ask the PG
//! now", refunds, and reconciliation. Without a token configured it is off
//! (503), never open. Every action (each POST that was carried out) is written
//! to the audit log.

use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use payonce_api::{IDEMPOTENCY_KEY_HEADER, OPERATOR_HEADER, OperatorCancelRequest, Order, OrderStatus};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::cancel::refund_status;
use super::order_id::OrderIdPath;
use crate::db::{Refund, now_ms, rfc3339};
use crate::error::{AppError, Json};
use crate::payment::confirm::validate_idempotency_key;
use crate::payment::reconcile::{Report, StartedBy, run_pass};
use crate::payment::refund::cancel_for_operator;
use crate::state::AppState;

/// The most orders one list answers with.
const LIST_LIMIT: u32 = 500;
/// How long "ask the PG now" waits for the answer to settle the order before
/// answering 202 with the order as it stands.
const RECOVER_WAIT: Duration = Duration::from_secs(10);

/// Who an action is recorded as when the request does not say.
const DEFAULT_OPERATOR: &str = "operator";
/// The longest operator name kept in the audit log.
const OPERATOR_MAX_LEN: usize = 100;

pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/admin/orders", get(admin_orders_list))
        .route("/admin/orders/{order_id}", get(admin_order_detail))
        .route("/admin/orders/{order_id}/cancel", post(admin_orders_cancel))
        .route("/admin/orders/{order_id}/recover", post(admin_orders_recover))
        .route("/admin/reconcile", get(admin_reconcile_last).post(admin_reconcile_run))
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

/// `GET /admin/orders?status=&older_than=`: orders (with `status`; that have
/// not changed for `older_than`, such as `5m`), UNKNOWN first, then
/// CANCEL_REQUESTED, each longest waiting first, with the PG's last answer.
async fn admin_orders_list(State(state): State<AppState>, RawQuery(query): RawQuery) -> Result<Json<Value>, AppError> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query.as_deref().unwrap_or_default())
        .map_err(|error| AppError::InvalidRequest { message: format!("the query cannot be read: {error}") })?;
    let mut status = None;
    let mut older_than = Duration::ZERO;
    for (name, value) in &fields {
        match name.as_str() {
            "status" if value.is_empty() => {}
            "status" => {
                let parsed =
                    OrderStatus::parse(&value.to_ascii_uppercase()).ok_or_else(|| AppError::InvalidRequest {
                        message: format!(
                            "status must be an order status such as UNKNOWN or CANCEL_REQUESTED, got {value:?}"
                        ),
                    })?;
                status = Some(parsed);
            }
            "older_than" if value.is_empty() => {}
            "older_than" => {
                older_than = humantime::parse_duration(value).map_err(|error| AppError::InvalidRequest {
                    message: format!("older_than must be a duration such as 30s or 5m, got {value:?}: {error}"),
                })?;
            }
            other => {
                return Err(AppError::InvalidRequest {
                    message: format!("unknown parameter {other:?}: use status and older_than"),
                });
            }
        }
    }
    let now = now_ms();
    let before = now - i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX).min(now);
    let rows = state.db.operator_orders(status.map(OrderStatus::as_str), before, LIST_LIMIT).await?;
    let orders: Vec<Value> = rows
        .into_iter()
        .map(|row| {
            json!({
                "order_id": row.order_id,
                "status": row.status.as_deref().unwrap_or(OrderStatus::Created.as_str()),
                "amount": row.amount,
                "refunded_amount": row.refunded_amount.unwrap_or(0),
                "created_at": rfc3339(row.created_at_ms),
                "changed_at": rfc3339(row.changed_at_ms),
                "waiting_s": (now - row.changed_at_ms).max(0) / 1_000,
                "last_pg_answer": row.last_pg_answer,
                "unknown_reason": row.unknown_reason,
                "recovery_passes": row.recovery_passes.unwrap_or(0),
            })
        })
        .collect();
    Ok(Json(json!({ "orders": orders })))
}

/// `GET /admin/orders/{id}`: the order, its attempt, every status change, its refunds, audit lines
/// and the calls to the PG about it (the newest `KEPT_PER_ORDER`, oldest first).
async fn admin_order_detail(
    State(state): State<AppState>,
    OrderIdPath(order_id): OrderIdPath,
) -> Result<Json<Value>, AppError> {
    let order = state.db.order(&order_id).await?.ok_or(AppError::OrderNotFound)?;
    let attempt = state.db.attempt_detail(&order_id).await?.map(|attempt| {
        json!({
            "idempotency_key": attempt.idempotency_key,
            "payment_key": attempt.payment_key,
            "amount": attempt.amount,
            "status": attempt.status,
            "failure_code": attempt.failure_code,
            "failure_message": attempt.failure_message,
            "unknown_reason": attempt.unknown_reason,
            "last_pg_answer": attempt.last_pg_answer,
            "recovery_passes": attempt.recovery_passes,
            "next_recovery_at": (attempt.next_recovery_at_ms > 0).then(|| rfc3339(attempt.next_recovery_at_ms)),
            "lease_until": (attempt.lease_until_ms > 0).then(|| rfc3339(attempt.lease_until_ms)),
            "lease_owner": attempt.lease_owner,
            "created_at": rfc3339(attempt.created_at_ms),
            "updated_at": rfc3339(attempt.updated_at_ms),
        })
    });
    let history: Vec<Value> = state
        .db
        .events(&order_id)
        .await?
        .into_iter()
        .map(|event| {
            json!({
                "at": rfc3339(event.at_ms),
                "actor": event.actor,
                "from": event.from_status,
                "to": event.to_status,
                "code": event.code,
                "detail": event.detail,
            })
        })
        .collect();
    let refunds: Vec<Value> = state.db.refunds(&order_id).await?.iter().map(refund_json).collect();
    let audit: Vec<Value> = state
        .db
        .audit_log(&order_id)
        .await?
        .into_iter()
        .map(|line| json!({"at": rfc3339(line.at_ms), "operator": line.operator, "action": line.action, "detail": line.detail}))
        .collect();
    let pg_calls: Vec<Value> = state
        .db
        .pg_calls(&order_id)
        .await?
        .into_iter()
        .map(|call| {
            json!({
                "at": rfc3339(call.started_at_ms),
                "kind": call.kind,
                "caller": call.caller,
                "idempotency_key": call.idempotency_key,
                "server": call.server,
                "took_ms": call.took_ms,
                "answer": call.answer,
            })
        })
        .collect();
    Ok(Json(json!({
        "order": order,
        "attempt": attempt,
        "history": history,
        "refunds": refunds,
        "audit": audit,
        "pg_calls": pg_calls,
    })))
}

fn refund_json(refund: &Refund) -> Value {
    json!({
        "refund_id": refund.refund_id,
        "amount": refund.amount,
        "balance_before": refund.balance_before,
        "reason": refund.reason,
        "status": refund.status.as_str(),
        "failure_code": refund.failure_code,
        "previous_status": refund.previous_status.as_str(),
        "pg_idempotency_key": refund.pg_idempotency_key,
        "calls": refund.calls,
        "recovery_passes": refund.recovery_passes,
    })
}

/// `POST /admin/orders/{id}/recover`: hands an unsettled payment (PENDING,
/// UNKNOWN) to recovery now, which asks the PG what became of it. Answers 200
/// with the order once settled, 202 if the PG has not settled it within 10 s.
async fn admin_orders_recover(
    State(state): State<AppState>,
    OrderIdPath(order_id): OrderIdPath,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Order>), AppError> {
    let order = state.db.order(&order_id).await?.ok_or(AppError::OrderNotFound)?;
    let operator = operator_name(&headers);
    if !state.db.recover_now(&order_id).await? {
        tracing::warn!(operator, order_id, status = order.status.as_str(), "operator recover refused: not unsettled");
        return Err(AppError::NotUnsettled { order: Box::new(order) });
    }
    let detail = format!("asked the PG now about a {} payment", order.status.as_str());
    state.db.audit(&operator, "recover", Some(&order_id), &detail).await?;
    tracing::info!(operator, order_id, "operator asked the PG now");
    state.recovery_wake.notify_one();
    let deadline = tokio::time::Instant::now() + RECOVER_WAIT;
    loop {
        let order = state.db.order(&order_id).await?.ok_or(AppError::OrderNotFound)?;
        if !matches!(order.status, OrderStatus::Pending | OrderStatus::Unknown) {
            return Ok((StatusCode::OK, Json(order)));
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok((StatusCode::ACCEPTED, Json(order)));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `POST /admin/reconcile`: runs a reconciliation pass now and answers its report.
async fn admin_reconcile_run(State(state): State<AppState>, headers: HeaderMap) -> Result<Json<Report>, AppError> {
    let operator = operator_name(&headers);
    let report = match run_pass(&state, StartedBy::Operator).await {
        Ok(Some(report)) => report,
        Ok(None) => return Err(AppError::ReconcileRunning),
        Err(error) => {
            tracing::warn!(operator, %error, "operator reconciliation did not run");
            return Err(error);
        }
    };
    let detail = format!(
        "reconciliation run {}: {} approvals, {} mismatches",
        report.run_id.unwrap_or_default(),
        report.approvals,
        report.mismatches.len()
    );
    state.db.audit(&operator, "reconcile", None, &detail).await?;
    Ok(Json(report))
}

/// `GET /admin/reconcile`: the last pass's report (404 before the first).
async fn admin_reconcile_last(State(state): State<AppState>) -> Result<Json<Report>, AppError> {
    let run = state.db.last_reconcile_run().await?.ok_or(AppError::NotFound)?;
    let report: Report =
        serde_json::from_str(&run.report).map_err(|error| AppError::Internal(format!("run {}: {error}", run.id)))?;
    Ok(Json(report))
}
