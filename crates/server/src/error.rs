//! The server's one error type. User errors carry their code and status;
//! internal errors are logged with their cause and answered without it.

use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use payonce_api::{ApiErrorBody, ErrorCode, Order, Pg};

/// Largest request body the API reads. Carts and confirms are a few hundred
/// bytes. Here, beside the error that names it, for the routes to apply.
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{message}")]
    InvalidRequest { message: String },
    #[error("{0}")]
    InvalidIdempotencyKey(&'static str),
    #[error("this idempotency key was already used for another order")]
    IdempotencyKeyReused,
    #[error("a payment for this order is being processed")]
    PaymentInProgress { order: Box<Order> },
    #[error("this order is already paid")]
    OrderAlreadyPaid { order: Box<Order> },
    #[error("this order's payment failed; place a new order to try again")]
    OrderAlreadyFailed { order: Box<Order> },
    #[error("the amount {confirmed} does not match the order's amount {expected}")]
    AmountMismatch { confirmed: u64, expected: u64 },
    #[error("no such order")]
    OrderNotFound,
    #[error("{0}")]
    InvalidWait(String),
    #[error("unknown product {sku:?}")]
    UnknownSku { sku: String },
    #[error("{0}")]
    InvalidQuantity(String),
    #[error("{0}")]
    InvalidCart(&'static str),
    #[error("the request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("the request body took too long to arrive; nothing was done")]
    RequestTimeout,
    #[error("too many requests; try again in {retry_after_s} s. Nothing was done")]
    RateLimited { retry_after_s: u64 },
    #[error("no such API route")]
    NotFound,
    #[error("this API route does not take this method")]
    MethodNotAllowed,
    #[error("this order is not paid, so there is nothing to refund")]
    OrderNotPaid { order: Box<Order> },
    #[error("a refund of this order is being sent; its outcome comes first")]
    CancelInProgress { order: Box<Order> },
    #[error("this order is already refunded")]
    OrderAlreadyCanceled { order: Box<Order> },
    #[error("orders can be cancelled here within {window} of paying; please contact the shop")]
    CancelWindowPassed { window: String },
    #[error("{0}")]
    InvalidCancelAmount(String),
    #[error("the PG can refund this payment only in full (an escrow order or a cash card); nothing was sent")]
    PartialRefundNotAllowed { order: Box<Order> },
    #[error("the operators' API is off: start the server with --operators-file or --admin-token to turn it on")]
    OperatorApiOff,
    #[error("send Authorization: Bearer <your operator's token>")]
    Unauthorized,
    #[error(
        "{operator} is a read-only operator: refunds, asking the PG and reconciliation passes need the refund role. Nothing was done"
    )]
    OperatorNotAllowed { operator: String },
    #[error(
        "the operators' listener does not answer to the host {host:?}: reach it by its IP address, as localhost, or by a name given to --admin-hosts"
    )]
    UnknownAdminHost { host: String },
    #[error("this order's payment is not waiting for an outcome; there is nothing to ask the PG")]
    NotUnsettled { order: Box<Order> },
    #[error("a reconciliation pass is running; see GET /admin/reconcile once it ends")]
    ReconcileRunning,
    #[error("the PG did not list its transactions ({0}); nothing was changed")]
    ReconcileFailed(String),
    #[error("this order cannot be paid with {}: pay another way", .0.known_as())]
    PgNotOffered(Pg),
    #[error(
        "this order has no KakaoPay payment prepared (or it expired): open KakaoPay's window again. Nothing was charged"
    )]
    PaymentNotPrepared,
    #[error("KakaoPay could not prepare the payment ({detail}); nothing was charged, try again")]
    PgNotReady { code: ErrorCode, detail: String },
    #[error("{0}")]
    InvalidCheckout(String),
    #[error("this checkout's time ran out before it was paid; nothing was charged")]
    CheckoutExpired { order: Box<Order> },
    #[error("this checkout's link was already opened in another browser; go back to the shop and start again")]
    CheckoutLinkUsed,
    #[error("the shop API is off: start the server with --shops-file to turn it on")]
    ShopApiOff,
    #[error("send Authorization: Bearer <your shop's API key>")]
    ShopKeyRefused,
    #[error("not enough of {sku} is left for this order; nothing was charged")]
    OutOfStock { sku: String },
    #[error("no such event")]
    EventNotFound,
    #[error("no such shop in the shops file")]
    ShopNotFound,
    #[error("database error")]
    Database(#[from] sqlx::Error),
    #[error("internal error: {0}")]
    Internal(String),
}

impl AppError {
    fn code(&self) -> ErrorCode {
        match self {
            AppError::InvalidRequest { .. } => ErrorCode::InvalidRequest,
            AppError::InvalidIdempotencyKey(_) => ErrorCode::InvalidIdempotencyKey,
            AppError::IdempotencyKeyReused => ErrorCode::IdempotencyKeyReused,
            AppError::PaymentInProgress { .. } => ErrorCode::PaymentInProgress,
            AppError::OrderAlreadyPaid { .. } => ErrorCode::OrderAlreadyPaid,
            AppError::OrderAlreadyFailed { .. } => ErrorCode::OrderAlreadyFailed,
            AppError::AmountMismatch { .. } => ErrorCode::AmountMismatch,
            AppError::OrderNotFound => ErrorCode::OrderNotFound,
            AppError::InvalidWait(_) => ErrorCode::InvalidWait,
            AppError::UnknownSku { .. } => ErrorCode::UnknownSku,
            AppError::InvalidQuantity(_) => ErrorCode::InvalidQuantity,
            AppError::InvalidCart(_) => ErrorCode::InvalidCart,
            AppError::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            AppError::RequestTimeout => ErrorCode::RequestTimeout,
            AppError::RateLimited { .. } => ErrorCode::RateLimited,
            AppError::NotFound => ErrorCode::NotFound,
            AppError::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            AppError::OrderNotPaid { .. } => ErrorCode::OrderNotPaid,
            AppError::CancelInProgress { .. } => ErrorCode::CancelInProgress,
            AppError::OrderAlreadyCanceled { .. } => ErrorCode::OrderAlreadyCanceled,
            AppError::CancelWindowPassed { .. } => ErrorCode::CancelWindowPassed,
            AppError::InvalidCancelAmount(_) => ErrorCode::InvalidCancelAmount,
            AppError::PartialRefundNotAllowed { .. } => ErrorCode::PartialRefundNotAllowed,
            AppError::OperatorApiOff => ErrorCode::OperatorApiOff,
            AppError::Unauthorized | AppError::ShopKeyRefused => ErrorCode::Unauthorized,
            AppError::InvalidCheckout(_) => ErrorCode::InvalidCheckout,
            AppError::CheckoutExpired { .. } => ErrorCode::CheckoutExpired,
            AppError::CheckoutLinkUsed => ErrorCode::CheckoutLinkUsed,
            AppError::ShopApiOff => ErrorCode::ShopApiOff,
            AppError::OutOfStock { .. } => ErrorCode::OutOfStock,
            AppError::EventNotFound => ErrorCode::EventNotFound,
            AppError::ShopNotFound => ErrorCode::ShopNotFound,
            AppError::OperatorNotAllowed { .. } => ErrorCode::OperatorNotAllowed,
            AppError::UnknownAdminHost { .. } => ErrorCode::UnknownAdminHost,
            AppError::NotUnsettled { .. } => ErrorCode::NotUnsettled,
            AppError::ReconcileRunning => ErrorCode::ReconcileRunning,
            AppError::ReconcileFailed(_) => ErrorCode::ReconcileFailed,
            AppError::PgNotOffered(_) => ErrorCode::PgNotOffered,
            AppError::PaymentNotPrepared => ErrorCode::PaymentNotPrepared,
            AppError::PgNotReady { code, .. } => *code,
            AppError::Database(error) if unavailable(error) => ErrorCode::DatabaseUnavailable,
            AppError::Database(_) | AppError::Internal(_) => ErrorCode::Internal,
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            AppError::InvalidRequest { .. }
            | AppError::InvalidIdempotencyKey(_)
            | AppError::AmountMismatch { .. }
            | AppError::InvalidWait(_)
            | AppError::UnknownSku { .. }
            | AppError::InvalidQuantity(_)
            | AppError::InvalidCart(_)
            | AppError::InvalidCancelAmount(_)
            | AppError::PgNotOffered(_)
            | AppError::InvalidCheckout(_) => StatusCode::BAD_REQUEST,
            AppError::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::PaymentInProgress { .. }
            | AppError::OrderAlreadyPaid { .. }
            | AppError::OrderAlreadyFailed { .. }
            | AppError::OrderNotPaid { .. }
            | AppError::CancelInProgress { .. }
            | AppError::OrderAlreadyCanceled { .. }
            | AppError::CancelWindowPassed { .. }
            | AppError::PartialRefundNotAllowed { .. }
            | AppError::NotUnsettled { .. }
            | AppError::PaymentNotPrepared
            | AppError::CheckoutExpired { .. }
            | AppError::CheckoutLinkUsed
            | AppError::OutOfStock { .. }
            | AppError::ReconcileRunning => StatusCode::CONFLICT,
            // Not 503: that one says the shop's database is out of reach.
            AppError::ReconcileFailed(_) | AppError::PgNotReady { .. } => StatusCode::BAD_GATEWAY,
            AppError::Unauthorized | AppError::ShopKeyRefused => StatusCode::UNAUTHORIZED,
            AppError::OperatorNotAllowed { .. } => StatusCode::FORBIDDEN,
            AppError::UnknownAdminHost { .. } => StatusCode::MISDIRECTED_REQUEST,
            AppError::OperatorApiOff | AppError::ShopApiOff => StatusCode::SERVICE_UNAVAILABLE,
            AppError::OrderNotFound | AppError::NotFound | AppError::EventNotFound | AppError::ShopNotFound => {
                StatusCode::NOT_FOUND
            }
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            AppError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            AppError::Database(error) if unavailable(error) => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Database(_) | AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn order(self) -> Option<Order> {
        match self {
            AppError::PaymentInProgress { order }
            | AppError::OrderAlreadyPaid { order }
            | AppError::OrderAlreadyFailed { order }
            | AppError::OrderNotPaid { order }
            | AppError::CancelInProgress { order }
            | AppError::OrderAlreadyCanceled { order }
            | AppError::PartialRefundNotAllowed { order }
            | AppError::NotUnsettled { order }
            | AppError::CheckoutExpired { order } => Some(*order),
            _ => None,
        }
    }
}

/// Whether the database is out of reach (down, restarting, or every
/// connection busy past the wait), as opposed to refusing a statement.
fn unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => true,
        // PostgreSQL's connection exceptions (class 08) and "shutting down" or
        // "starting up" (57P01 to 57P03).
        sqlx::Error::Database(error) => {
            error.code().is_some_and(|code| code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03"))
        }
        _ => false,
    }
}

/// How long a client should wait before trying again when the database is unavailable.
const DATABASE_RETRY_AFTER_S: u64 = 5;

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status == StatusCode::SERVICE_UNAVAILABLE && !matches!(self, AppError::OperatorApiOff) {
            tracing::error!(error = ?self, "the database is unavailable");
            let body = ApiErrorBody {
                code: self.code().as_str().to_owned(),
                message: "The shop's database cannot be reached right now. Nothing was half-done; \
                          a payment already sent is still being settled. Check again in a moment."
                    .to_owned(),
                order: None,
            };
            let retry_after = [(axum::http::header::RETRY_AFTER, DATABASE_RETRY_AFTER_S.to_string())];
            return (status, retry_after, axum::Json(body)).into_response();
        }
        let message =
            if status.is_server_error() && !matches!(self, AppError::OperatorApiOff | AppError::ReconcileFailed(_)) {
                tracing::error!(error = ?self, "request failed");
                "Something went wrong on our side. Your payment state is safe; please retry.".to_owned()
            } else {
                self.to_string()
            };
        let code = self.code().as_str().to_owned();
        let body = ApiErrorBody { code, message, order: self.order() };
        (status, axum::Json(body)).into_response()
    }
}

/// `axum::Json`, but malformed bodies are answered in our `{code, message}` shape.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(AppError))]
pub struct Json<T>(pub T);

impl<T: serde::Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

impl From<JsonRejection> for AppError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::BytesRejection(_) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                AppError::PayloadTooLarge { limit: BODY_LIMIT_BYTES }
            }
            JsonRejection::BytesRejection(_) if timed_out(&rejection) => AppError::RequestTimeout,
            JsonRejection::MissingJsonContentType(_) => AppError::InvalidRequest {
                message: "send the body as JSON with Content-Type: application/json".to_owned(),
            },
            other => AppError::InvalidRequest { message: other.body_text() },
        }
    }
}

/// Whether an error was caused by the request body's read timeout.
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = error.source();
    }
    false
}
