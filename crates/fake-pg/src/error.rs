//! Every error the fake PG answers with, as Toss shapes them: an HTTP status
//! and a `{code, message}` body.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// The body of every error answer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

/// Toss's documented error codes of the confirm, cancel and transaction
/// APIs and their statuses, for the `TossPayments-Test-Code` header. A code
/// not listed answers 400, the status Toss uses for most card and validation
/// errors.
const KNOWN_CODES: &[(&str, u16)] = &[
    ("ALREADY_PROCESSED_PAYMENT", 400),
    ("PROVIDER_ERROR", 400),
    ("EXCEED_MAX_CARD_INSTALLMENT_PLAN", 400),
    ("INVALID_REQUEST", 400),
    ("NOT_ALLOWED_POINT_USE", 400),
    ("INVALID_API_KEY", 400),
    ("INVALID_REJECT_CARD", 400),
    ("BELOW_MINIMUM_AMOUNT", 400),
    ("INVALID_CARD_EXPIRATION", 400),
    ("INVALID_STOPPED_CARD", 400),
    ("EXCEED_MAX_DAILY_PAYMENT_COUNT", 400),
    ("NOT_SUPPORTED_INSTALLMENT_PLAN_CARD_OR_MERCHANT", 400),
    ("INVALID_CARD_INSTALLMENT_PLAN", 400),
    ("NOT_SUPPORTED_MONTHLY_INSTALLMENT_PLAN", 400),
    ("EXCEED_MAX_PAYMENT_AMOUNT", 400),
    ("NOT_FOUND_TERMINAL_ID", 400),
    ("INVALID_AUTHORIZE_AUTH", 400),
    ("INVALID_CARD_LOST_OR_STOLEN", 400),
    ("RESTRICTED_TRANSFER_ACCOUNT", 400),
    ("INVALID_CARD_NUMBER", 400),
    ("INVALID_UNREGISTERED_SUBMALL", 400),
    ("NOT_REGISTERED_BUSINESS", 400),
    ("EXCEED_MAX_ONE_DAY_WITHDRAW_AMOUNT", 400),
    ("EXCEED_MAX_ONE_TIME_WITHDRAW_AMOUNT", 400),
    ("CARD_PROCESSING_ERROR", 400),
    ("EXCEED_MAX_AMOUNT", 400),
    ("INVALID_ACCOUNT_INFO_RE_REGISTER", 400),
    ("NOT_AVAILABLE_PAYMENT", 400),
    ("UNAPPROVED_ORDER_ID", 400),
    ("EXCEED_MAX_MONTHLY_PAYMENT_AMOUNT", 400),
    ("DUPLICATED_ORDER_ID", 400),
    ("INVALID_IDEMPOTENCY_KEY", 400),
    ("UNAUTHORIZED_KEY", 401),
    ("REJECT_ACCOUNT_PAYMENT", 403),
    ("REJECT_CARD_PAYMENT", 403),
    ("REJECT_CARD_COMPANY", 403),
    ("FORBIDDEN_REQUEST", 403),
    ("FORBIDDEN_CONSECUTIVE_REQUEST", 403),
    ("REJECT_TOSSPAY_INVALID_ACCOUNT", 403),
    ("EXCEED_MAX_AUTH_COUNT", 403),
    ("EXCEED_MAX_ONE_DAY_AMOUNT", 403),
    ("NOT_AVAILABLE_BANK", 403),
    ("INVALID_PASSWORD", 403),
    ("INCORRECT_BASIC_AUTH_FORMAT", 403),
    ("FDS_ERROR", 403),
    ("NOT_FOUND_PAYMENT", 404),
    ("NOT_FOUND_PAYMENT_SESSION", 404),
    ("IDEMPOTENT_REQUEST_PROCESSING", 409),
    ("TOO_MANY_REQUESTS", 429),
    ("FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING", 500),
    ("FAILED_INTERNAL_SYSTEM_PROCESSING", 500),
    ("UNKNOWN_PAYMENT_ERROR", 500),
    // Cancels.
    ("ALREADY_CANCELED_PAYMENT", 400),
    ("INVALID_REFUND_ACCOUNT_INFO", 400),
    ("EXCEED_CANCEL_AMOUNT_DISCOUNT_AMOUNT", 400),
    ("INVALID_REFUND_ACCOUNT_NUMBER", 400),
    ("INVALID_BANK", 400),
    ("NOT_MATCHES_REFUNDABLE_AMOUNT", 400),
    ("REFUND_REJECTED", 400),
    ("ALREADY_REFUND_PAYMENT", 400),
    ("FORBIDDEN_BANK_REFUND_REQUEST", 400),
    ("NOT_CANCELABLE_AMOUNT", 403),
    ("NOT_CANCELABLE_PAYMENT", 403),
    ("EXCEED_MAX_REFUND_DUE", 403),
    ("NOT_ALLOWED_PARTIAL_REFUND_WAITING_DEPOSIT", 403),
    ("NOT_ALLOWED_PARTIAL_REFUND", 403),
    ("NOT_CANCELABLE_PAYMENT_FOR_DORMANT_USER", 403),
    ("FAILED_REFUND_PROCESS", 500),
    ("FAILED_METHOD_HANDLING_CANCEL", 500),
    ("FAILED_PARTIAL_REFUND", 500),
    ("FAILED_CLOSED_ACCOUNT_REFUND", 500),
    ("COMMON_ERROR", 500),
    // Transactions.
    ("INVALID_DATE", 400),
    ("INVALID_TRANSACTION_KEY", 400),
];

/// One variant per way a request can fail. `Clone` because an idempotency
/// record keeps a decline to answer it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgError {
    /// The `Authorization` header is missing, malformed or has another key.
    #[error("The secret key is missing or wrong. Send `Authorization: Basic base64(secretKey + \":\")`.")]
    UnauthorizedKey,
    /// A `Basic` header whose credentials have no `:` after the secret key.
    #[error("Encode the secret key followed by ':' in the Basic header.")]
    IncorrectBasicAuthFormat,
    /// `Idempotency-Key` is empty, not ASCII or longer than 300 characters.
    #[error("{0}")]
    InvalidIdempotencyKey(String),
    /// The body or a query is malformed, a field is missing or has the wrong
    /// type, or it does not match the payment window (orderId, amount).
    #[error("{0}")]
    InvalidRequest(String),
    /// No payment with that paymentKey or orderId.
    #[error("No payment was found for {0}.")]
    NotFoundPayment(String),
    /// Strict sessions: no window issued this paymentKey; or the customer
    /// canceled it in the window.
    #[error("{0}")]
    NotFoundPaymentSession(String),
    /// The paymentKey is being or was processed, and this request has another
    /// idempotency key (or none).
    #[error("This payment has already been processed.")]
    AlreadyProcessedPayment,
    /// The orderId already has a DONE payment under another paymentKey.
    #[error("The orderId already has an approved payment; use a new orderId.")]
    DuplicatedOrderId,
    /// A request with the same idempotency key is still being processed.
    #[error("A request with this Idempotency-Key is still being processed.")]
    IdempotentRequestProcessing,
    /// Contract limit or an injected rate limit; nothing was processed.
    #[error("{0}")]
    TooManyRequests(String),
    /// Injected: the PG refused a burst of requests; nothing was processed.
    #[error("Consecutive requests are blocked for now; nothing was processed.")]
    ForbiddenConsecutiveRequest,
    /// Processed and declined by the card issuer; nothing was charged.
    #[error("The card company rejected the payment.")]
    RejectCardPayment,
    /// Processed and declined: expired card; nothing was charged.
    #[error("Check the card's expiration date.")]
    InvalidCardExpiration,
    /// A cancel of more than the balance, or of nothing (0 or less).
    #[error("{0}")]
    NotCancelableAmount(String),
    /// A cancel of a payment that was never approved (READY, IN_PROGRESS,
    /// ABORTED, EXPIRED).
    #[error("{0}")]
    NotCancelablePayment(String),
    /// A cancel of a payment whose refund period is over.
    #[error("The refund period of this payment is over.")]
    ExceedMaxRefundDue,
    /// A partial cancel of a payment that can only be cancelled in full
    /// (`isPartialCancelable: false`).
    #[error("This payment cannot be refunded in part (an escrow order or a cash card): cancel it in full.")]
    NotAllowedPartialRefund,
    /// A cancel of a payment whose whole amount was refunded already.
    #[error("The payment has already been canceled in full.")]
    AlreadyCanceledPayment,
    /// The card company did not take the cancel (injected); nothing was refunded.
    #[error("A temporary error occurred at the card company; nothing was refunded. Try again in a few minutes.")]
    ProviderError,
    /// `startDate` or `endDate` of a transaction listing is not a date-time, or
    /// the range ends before it starts.
    #[error("{0}")]
    InvalidDate(String),
    /// `startingAfter` names no transaction.
    #[error("startingAfter {0:?} is not the transactionKey of any transaction.")]
    InvalidTransactionKey(String),
    /// Processing stopped because the caller hung up (only with
    /// `continue_after_disconnect: false`); nothing was charged.
    #[error("The payment was aborted because the caller disconnected during processing.")]
    PayProcessAborted,
    /// An internal failure of the PG (injected).
    #[error("An internal error occurred while processing the request.")]
    FailedInternalSystemProcessing,
    /// A simulated outage: the PG serves nothing.
    #[error("The payment service is unavailable; nothing was processed.")]
    Unavailable,
    /// The code asked for with `TossPayments-Test-Code`.
    #[error("Test error requested with the TossPayments-Test-Code header.")]
    TestCode(String),
    /// `PUT /__admin/config` with a bad field.
    #[error("{0}")]
    InvalidConfig(String),
    /// No such route.
    #[error("No such endpoint.")]
    NotFound,
    /// The route exists, but not with this method.
    #[error("This endpoint does not take this method.")]
    MethodNotAllowed,
}

impl PgError {
    pub fn code(&self) -> &str {
        match self {
            PgError::UnauthorizedKey => "UNAUTHORIZED_KEY",
            PgError::IncorrectBasicAuthFormat => "INCORRECT_BASIC_AUTH_FORMAT",
            PgError::InvalidIdempotencyKey(_) => "INVALID_IDEMPOTENCY_KEY",
            PgError::InvalidRequest(_) => "INVALID_REQUEST",
            PgError::NotFoundPayment(_) => "NOT_FOUND_PAYMENT",
            PgError::NotFoundPaymentSession(_) => "NOT_FOUND_PAYMENT_SESSION",
            PgError::AlreadyProcessedPayment => "ALREADY_PROCESSED_PAYMENT",
            PgError::DuplicatedOrderId => "DUPLICATED_ORDER_ID",
            PgError::IdempotentRequestProcessing => "IDEMPOTENT_REQUEST_PROCESSING",
            PgError::TooManyRequests(_) => "TOO_MANY_REQUESTS",
            PgError::ForbiddenConsecutiveRequest => "FORBIDDEN_CONSECUTIVE_REQUEST",
            PgError::RejectCardPayment => "REJECT_CARD_PAYMENT",
            PgError::InvalidCardExpiration => "INVALID_CARD_EXPIRATION",
            PgError::NotCancelableAmount(_) => "NOT_CANCELABLE_AMOUNT",
            PgError::NotCancelablePayment(_) => "NOT_CANCELABLE_PAYMENT",
            PgError::AlreadyCanceledPayment => "ALREADY_CANCELED_PAYMENT",
            PgError::ExceedMaxRefundDue => "EXCEED_MAX_REFUND_DUE",
            PgError::NotAllowedPartialRefund => "NOT_ALLOWED_PARTIAL_REFUND",
            PgError::ProviderError => "PROVIDER_ERROR",
            PgError::InvalidDate(_) => "INVALID_DATE",
            PgError::InvalidTransactionKey(_) => "INVALID_TRANSACTION_KEY",
            PgError::PayProcessAborted => "PAY_PROCESS_ABORTED",
            PgError::FailedInternalSystemProcessing | PgError::Unavailable => "FAILED_INTERNAL_SYSTEM_PROCESSING",
            PgError::TestCode(code) => code,
            PgError::InvalidConfig(_) => "INVALID_CONFIG",
            PgError::NotFound => "NOT_FOUND",
            PgError::MethodNotAllowed => "METHOD_NOT_ALLOWED",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            PgError::UnauthorizedKey => StatusCode::UNAUTHORIZED,
            PgError::InvalidIdempotencyKey(_)
            | PgError::InvalidRequest(_)
            | PgError::AlreadyProcessedPayment
            | PgError::DuplicatedOrderId
            | PgError::InvalidCardExpiration
            | PgError::PayProcessAborted
            | PgError::AlreadyCanceledPayment
            | PgError::ProviderError
            | PgError::InvalidDate(_)
            | PgError::InvalidTransactionKey(_)
            | PgError::InvalidConfig(_) => StatusCode::BAD_REQUEST,
            PgError::ForbiddenConsecutiveRequest
            | PgError::RejectCardPayment
            | PgError::NotCancelableAmount(_)
            | PgError::NotCancelablePayment(_)
            | PgError::IncorrectBasicAuthFormat
            | PgError::ExceedMaxRefundDue
            | PgError::NotAllowedPartialRefund => StatusCode::FORBIDDEN,
            PgError::NotFoundPayment(_) | PgError::NotFoundPaymentSession(_) | PgError::NotFound => {
                StatusCode::NOT_FOUND
            }
            PgError::IdempotentRequestProcessing => StatusCode::CONFLICT,
            PgError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            PgError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            PgError::FailedInternalSystemProcessing => StatusCode::INTERNAL_SERVER_ERROR,
            PgError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            PgError::TestCode(code) => status_of_code(code),
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody { code: self.code().to_owned(), message: self.to_string() }
    }
}

/// The status Toss answers a code with; 400 for codes it does not document.
pub(crate) fn status_of_code(code: &str) -> StatusCode {
    KNOWN_CODES
        .iter()
        .find(|(known, _)| *known == code)
        .and_then(|(_, status)| StatusCode::from_u16(*status).ok())
        .unwrap_or(StatusCode::BAD_REQUEST)
}

impl IntoResponse for PgError {
    fn into_response(self) -> Response {
        (self.status(), Json(self.body())).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_codes_answer_with_toss_statuses() {
        let status = |code: &str| PgError::TestCode(code.into()).status();
        assert_eq!(status("REJECT_CARD_PAYMENT"), StatusCode::FORBIDDEN);
        assert_eq!(status("INVALID_CARD_EXPIRATION"), StatusCode::BAD_REQUEST);
        assert_eq!(status("UNAUTHORIZED_KEY"), StatusCode::UNAUTHORIZED);
        assert_eq!(status("NOT_FOUND_PAYMENT_SESSION"), StatusCode::NOT_FOUND);
        assert_eq!(status("FAILED_INTERNAL_SYSTEM_PROCESSING"), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(status("SOMETHING_NEW"), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn named_variants_agree_with_the_toss_table() {
        let variants = [
            PgError::UnauthorizedKey,
            PgError::IncorrectBasicAuthFormat,
            PgError::InvalidIdempotencyKey(String::new()),
            PgError::InvalidRequest(String::new()),
            PgError::NotFoundPayment(String::new()),
            PgError::NotFoundPaymentSession(String::new()),
            PgError::AlreadyProcessedPayment,
            PgError::DuplicatedOrderId,
            PgError::IdempotentRequestProcessing,
            PgError::TooManyRequests(String::new()),
            PgError::ForbiddenConsecutiveRequest,
            PgError::RejectCardPayment,
            PgError::InvalidCardExpiration,
            PgError::FailedInternalSystemProcessing,
            PgError::NotCancelableAmount(String::new()),
            PgError::NotCancelablePayment(String::new()),
            PgError::AlreadyCanceledPayment,
            PgError::ExceedMaxRefundDue,
            PgError::NotAllowedPartialRefund,
            PgError::ProviderError,
            PgError::InvalidDate(String::new()),
            PgError::InvalidTransactionKey(String::new()),
        ];
        for error in variants {
            assert_eq!(error.status(), status_of_code(error.code()), "{}", error.code());
        }
    }
}
