//! The operators' API, on the admin listener only, behind each operator's
//! bearer token (`operator_sign_in`): orders by how long they have waited, an
//! order's whole story, "ask the PG now", refunds, and reconciliation. Without
//! operators configured it is off (503), never open. Every action (each POST
//! that was carried out) is written to the audit log under the name of the
//! operator whose token it carried.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware;
use axum::routing::get;
use axum::{Extension, Router};
use payonce_api::{ApiErrorBody, IDEMPOTENCY_KEY_HEADER, OperatorCancelRequest, Order, OrderStatus};
use utoipa::OpenApi;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::cancel::refund_status;
use super::operator_sign_in::{SignedIn, require_operator, require_operator_when_set};
use super::operator_views::{EventList, EventView, OrderList, OrderRow, OrderStory, RefundView, Resent, SignedInView};
use super::order_id::OrderIdPath;
use crate::error::{AppError, Json};
use crate::events::operator as events;
use crate::payment::confirm::validate_idempotency_key;
use crate::payment::operator::{self, Asked};
use crate::payment::reconcile::{PassMode, Report};
use crate::payment::refund::cancel_for_operator;
use crate::state::AppState;

/// The operators' API's description, served at `GET /admin/openapi.json`
/// (open while there are no operators, then behind any operator's token);
/// made from the routers that serve it.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "payonce operators' API",
        description = "On the admin listener only. Every operation needs `Authorization: Bearer <an operator's token>`; \
                       the audit log names the operator that token belongs to (an `X-Operator` header is ignored). \
                       A `read-only` operator may read; every POST needs the `refund` role (403 OPERATOR_NOT_ALLOWED). \
                       After a few wrong or missing tokens from one address, its requests get 429 RATE_LIMITED with \
                       `Retry-After` for a while, whatever token they carry. A request for a host name other than an IP \
                       address, `localhost` or one of `--admin-hosts` gets 421 UNKNOWN_ADMIN_HOST."
    ),
    modifiers(&BearerToken),
    security(("admin_token" = [])),
    components(schemas(ApiErrorBody))
)]
struct OperatorApiDoc;

struct BearerToken;

impl utoipa::Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("admin_token", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

pub fn router(state: AppState) -> Router<AppState> {
    let (api, spec) = OpenApiRouter::with_openapi(OperatorApiDoc::openapi())
        .routes(routes!(admin_signed_in))
        .routes(routes!(admin_orders_list))
        .routes(routes!(admin_order_detail))
        .routes(routes!(admin_orders_cancel))
        .routes(routes!(admin_orders_recover))
        .routes(routes!(admin_reconcile_last, admin_reconcile_run))
        .routes(routes!(admin_events_failed))
        .routes(routes!(admin_event_resend))
        .routes(routes!(admin_shop_events_resend))
        .split_for_parts();
    let spec = Arc::new(spec);
    let described = Router::new()
        .route("/admin/openapi.json", get(move || async move { axum::Json(spec.as_ref().clone()) }))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_operator_when_set));
    api.route_layer(middleware::from_fn_with_state(state, require_operator)).merge(described)
}

/// Refunds `amount` of what is left of a paid order, or all of it. Answers like
/// the customer's cancel: 200 once the PG answered, 202 while it is being sent.
#[utoipa::path(
    post,
    path = "/admin/orders/{order_id}/cancel",
    tag = "operators",
    params(
        ("order_id" = String, Path, description = "The order"),
        ("Idempotency-Key" = String, Header, description = "A fresh UUID per refund; the same key is the same refund"),
    ),
    request_body = OperatorCancelRequest,
    responses(
        (status = 200, description = "The PG answered: CANCELED, PARTIALLY_REFUNDED (or as before, if it refused)", body = Order),
        (status = 202, description = "CANCEL_REQUESTED: stored, and sent until the PG answers", body = Order),
        (status = 400, description = "INVALID_REQUEST, INVALID_IDEMPOTENCY_KEY or INVALID_CANCEL_AMOUNT (over what is left); nothing was done", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED: no or a wrong token", body = ApiErrorBody),
        (status = 403, description = "OPERATOR_NOT_ALLOWED: a read-only operator; nothing was done", body = ApiErrorBody),
        (status = 404, description = "ORDER_NOT_FOUND", body = ApiErrorBody),
        (status = 409, description = "ORDER_NOT_PAID, CANCEL_IN_PROGRESS or ORDER_ALREADY_CANCELED; nothing was done", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED: too many wrong tokens from this address; see Retry-After", body = ApiErrorBody),
        (status = 503, description = "OPERATOR_API_OFF: the server has no operators", body = ApiErrorBody),
    )
)]
async fn admin_orders_cancel(
    State(state): State<AppState>,
    Extension(operator): Extension<SignedIn>,
    OrderIdPath(order_id): OrderIdPath,
    headers: HeaderMap,
    body: Result<Json<OperatorCancelRequest>, AppError>,
) -> Result<(StatusCode, Json<Order>), AppError> {
    let key = headers.get(IDEMPOTENCY_KEY_HEADER).map(|value| value.to_str().unwrap_or("\u{0}"));
    let key = validate_idempotency_key(key)?;
    let Json(request) = body?;
    let operator = operator.name;
    let refunded = cancel_for_operator(&state, &operator, &order_id, key, request.amount, &request.reason).await;
    // A refused request changes nothing, so it has no audit line; the log keeps who tried what.
    if let Err(error) = &refunded {
        tracing::warn!(operator, order_id, amount = request.amount, %error, "operator cancel refused");
    }
    let order = refunded?;
    Ok((refund_status(&order), Json(order)))
}

/// The operator the token belongs to: who the audit log will name, and what they may do.
#[utoipa::path(
    get,
    path = "/admin/operator",
    tag = "operators",
    responses(
        (status = 200, description = "The signed-in operator", body = SignedInView),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
    )
)]
async fn admin_signed_in(Extension(operator): Extension<SignedIn>) -> Json<SignedInView> {
    Json(SignedInView { name: operator.name, role: operator.role.as_str().to_owned() })
}

/// Orders (with `status`; that have not changed for `older_than`, such as
/// `5m`), UNKNOWN first, then CANCEL_REQUESTED, each longest waiting first, with
/// the PG's last answer.
#[utoipa::path(
    get,
    path = "/admin/orders",
    tag = "operators",
    params(
        ("status" = Option<String>, Query, description = "Only orders in this status, such as UNKNOWN (any case)"),
        ("older_than" = Option<String>, Query, description = "Only orders unchanged for this long, such as 30s or 5m"),
    ),
    responses(
        (status = 200, description = "At most 500 orders", body = OrderList),
        (status = 400, description = "INVALID_REQUEST: an unknown parameter, status or duration", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
    )
)]
async fn admin_orders_list(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<OrderList>, AppError> {
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
    let (rows, now) = operator::orders(&state, status, older_than).await?;
    let orders = rows.into_iter().map(|row| OrderRow::new(row, now)).collect();
    Ok(Json(OrderList { orders }))
}

/// The order, its attempt, every status change, its refunds, audit lines and
/// the calls to the PG about it (the newest `KEPT_PER_ORDER`, oldest first).
#[utoipa::path(
    get,
    path = "/admin/orders/{order_id}",
    tag = "operators",
    params(("order_id" = String, Path, description = "The order")),
    responses(
        (status = 200, description = "The order's whole story", body = OrderStory),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 404, description = "ORDER_NOT_FOUND", body = ApiErrorBody),
    )
)]
async fn admin_order_detail(
    State(state): State<AppState>,
    OrderIdPath(order_id): OrderIdPath,
) -> Result<Json<OrderStory>, AppError> {
    let story = operator::story(&state, &order_id).await?;
    Ok(Json(OrderStory {
        order: story.order,
        attempt: story.attempt.map(Into::into),
        history: story.history.into_iter().map(Into::into).collect(),
        refunds: story.refunds.iter().map(|refund| RefundView::new(refund, &story.refund_answers)).collect(),
        audit: story.audit.into_iter().map(Into::into).collect(),
        pg_calls: story.pg_calls.into_iter().map(Into::into).collect(),
        events: story.events.into_iter().map(|event| EventView::new(event, &story.event_sends)).collect(),
    }))
}

/// Hands an unsettled payment (PENDING, UNKNOWN) to recovery now, which asks
/// the PG what became of it. Answers 200 with the order once settled, 202 if the
/// PG has not settled it within 10 s.
#[utoipa::path(
    post,
    path = "/admin/orders/{order_id}/recover",
    tag = "operators",
    params(("order_id" = String, Path, description = "The order")),
    responses(
        (status = 200, description = "Settled: PAID or FAILED", body = Order),
        (status = 202, description = "Asked; the PG has not settled it yet (recovery goes on)", body = Order),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 403, description = "OPERATOR_NOT_ALLOWED: a read-only operator; nothing was done", body = ApiErrorBody),
        (status = 404, description = "ORDER_NOT_FOUND", body = ApiErrorBody),
        (status = 409, description = "NOT_UNSETTLED: the payment is not PENDING or UNKNOWN", body = ApiErrorBody),
    )
)]
async fn admin_orders_recover(
    State(state): State<AppState>,
    Extension(operator): Extension<SignedIn>,
    OrderIdPath(order_id): OrderIdPath,
) -> Result<(StatusCode, Json<Order>), AppError> {
    match operator::ask_pg_now(&state, &operator.name, &order_id).await? {
        Asked::Settled(order) => Ok((StatusCode::OK, Json(order))),
        Asked::StillOpen(order) => Ok((StatusCode::ACCEPTED, Json(order))),
    }
}

/// Runs a reconciliation pass now and answers its report.
#[utoipa::path(
    post,
    path = "/admin/reconcile",
    tag = "operators",
    params(
        ("dry_run" = Option<bool>, Query, description = "true: refund nothing, store nothing; the report says what a pass would do"),
    ),
    responses(
        (status = 200, description = "The pass's report", body = Report),
        (status = 400, description = "INVALID_REQUEST: an unknown parameter, or dry_run not true or false", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 403, description = "OPERATOR_NOT_ALLOWED: a read-only operator; nothing was done", body = ApiErrorBody),
        (status = 409, description = "RECONCILE_RUNNING: a pass is running (on this server or another)", body = ApiErrorBody),
        (status = 502, description = "RECONCILE_FAILED: the PG's listing could not be read", body = ApiErrorBody),
    )
)]
async fn admin_reconcile_run(
    State(state): State<AppState>,
    Extension(operator): Extension<SignedIn>,
    RawQuery(query): RawQuery,
) -> Result<Json<Report>, AppError> {
    let mode = pass_mode(query.as_deref())?;
    Ok(Json(operator::reconcile_now(&state, &operator.name, mode).await?))
}

/// `?dry_run=true` (or `false`, or nothing); anything else is refused.
fn pass_mode(query: Option<&str>) -> Result<PassMode, AppError> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query.unwrap_or_default())
        .map_err(|error| AppError::InvalidRequest { message: format!("the query cannot be read: {error}") })?;
    let mut mode = PassMode::Act;
    for (name, value) in fields {
        mode = match (name.as_str(), value.as_str()) {
            ("dry_run", "true") => PassMode::DryRun,
            ("dry_run", "false") => PassMode::Act,
            ("dry_run", other) => {
                return Err(AppError::InvalidRequest {
                    message: format!("dry_run must be true or false, got {other:?}"),
                });
            }
            (other, _) => {
                return Err(AppError::InvalidRequest { message: format!("unknown parameter {other:?}; only dry_run") });
            }
        };
    }
    Ok(mode)
}

/// The last pass's report.
#[utoipa::path(
    get,
    path = "/admin/reconcile",
    tag = "operators",
    responses(
        (status = 200, description = "The last pass's report", body = Report),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no pass has run yet", body = ApiErrorBody),
    )
)]
async fn admin_reconcile_last(State(state): State<AppState>) -> Result<Json<Report>, AppError> {
    Ok(Json(operator::last_reconcile(&state).await?))
}

/// `GET /admin/events`'s query.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
struct FailedEventsParams {
    /// Only this shop's.
    shop: Option<String>,
}

/// Events not delivered within their retry window (FAILED), newest first:
/// what an operator sends again once the shop's endpoint is mended.
#[utoipa::path(
    get,
    path = "/admin/events",
    tag = "operators",
    params(FailedEventsParams),
    responses(
        (status = 200, body = EventList),
        (status = 400, description = "INVALID_REQUEST", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
    )
)]
async fn admin_events_failed(
    State(state): State<AppState>,
    query: Result<axum::extract::Query<FailedEventsParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<EventList>, AppError> {
    let axum::extract::Query(params) =
        query.map_err(|rejection| AppError::InvalidRequest { message: rejection.body_text() })?;
    let rows = events::failed(&state, params.shop.as_deref()).await?;
    Ok(Json(EventList { events: rows.into_iter().map(|event| EventView::new(event, &[])).collect() }))
}

/// Sends one event to its shop again, whatever its delivery came to; the
/// shop may get it twice, under its one id.
#[utoipa::path(
    post,
    path = "/admin/events/{event_id}/resend",
    tag = "operators",
    params(("event_id" = String, Path, description = "The event")),
    responses(
        (status = 200, body = Resent),
        (status = 400, description = "INVALID_REQUEST: its shop has no endpoint (it reads the feed)", body = ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 403, description = "OPERATOR_NOT_ALLOWED: a read-only operator; nothing was done", body = ApiErrorBody),
        (status = 404, description = "EVENT_NOT_FOUND: no such event", body = ApiErrorBody),
    )
)]
async fn admin_event_resend(
    State(state): State<AppState>,
    Extension(operator): Extension<SignedIn>,
    axum::extract::Path(event_id): axum::extract::Path<String>,
) -> Result<Json<Resent>, AppError> {
    events::resend(&state, &operator.name, &event_id).await?;
    Ok(Json(Resent { resent: 1 }))
}

/// Sends every failed event of the shop again.
#[utoipa::path(
    post,
    path = "/admin/shops/{shop_id}/events/resend",
    tag = "operators",
    params(("shop_id" = String, Path, description = "The shop, as the shops file names it")),
    responses(
        (status = 200, body = Resent),
        (status = 401, description = "UNAUTHORIZED", body = ApiErrorBody),
        (status = 403, description = "OPERATOR_NOT_ALLOWED: a read-only operator; nothing was done", body = ApiErrorBody),
        (status = 404, description = "SHOP_NOT_FOUND: no such shop in the shops file", body = ApiErrorBody),
    )
)]
async fn admin_shop_events_resend(
    State(state): State<AppState>,
    Extension(operator): Extension<SignedIn>,
    axum::extract::Path(shop_id): axum::extract::Path<String>,
) -> Result<Json<Resent>, AppError> {
    let resent = events::resend_failed(&state, &operator.name, &shop_id).await?;
    Ok(Json(Resent { resent }))
}
