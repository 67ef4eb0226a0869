use serde::{Deserialize, Serialize};

use crate::Order;

/// Every error the order server answers with: a stable code and a message a
/// person can read. Some errors carry the order they are about (for example
/// `ORDER_ALREADY_PAID` carries the paid order, so the page can show the truth).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiErrorBody {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
}

/// The error and failure codes of the order server's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The body is not JSON, or a field is missing or has the wrong type.
    InvalidRequest,
    /// `Idempotency-Key` is missing, empty, too long or not printable ASCII.
    InvalidIdempotencyKey,
    /// The key was already used for a different order.
    IdempotencyKeyReused,
    /// A payment for this order is being processed.
    PaymentInProgress,
    /// The order is already paid; the body carries it.
    OrderAlreadyPaid,
    /// The order's payment already failed; a new order is needed.
    OrderAlreadyFailed,
    /// The confirmed amount differs from the order's.
    AmountMismatch,
    /// No such order for this customer.
    OrderNotFound,
    /// `wait` on a check is not a duration of at most 2 s.
    InvalidWait,
    /// A SKU in the cart is not sold.
    UnknownSku,
    /// A quantity is zero or above the per-line limit.
    InvalidQuantity,
    /// The cart is empty or has too many lines.
    InvalidCart,
    /// The request body is larger than the server accepts.
    PayloadTooLarge,
    /// The client took too long to send its request.
    RequestTimeout,
    /// Too many requests from this customer or address; `Retry-After` says when to try again.
    RateLimited,
    /// Unknown route.
    NotFound,
    /// The route exists, but not with this method.
    MethodNotAllowed,
    /// Every PG place is taken; the payment was not sent. Nothing was charged.
    PgBusy,
    /// The PG could not be reached; the payment was not sent. Nothing was charged.
    PgUnreachable,
    /// The page's checking window ended and the server had never received the
    /// confirm, so it closed the order. Nothing was charged.
    ConfirmNotReceived,
    /// The shop's database cannot be reached now; nothing was half-written.
    /// Says nothing about a payment already sent: check the order again.
    DatabaseUnavailable,
    /// The server failed; details are in its log.
    Internal,
    /// A cancel of an order that was never paid (or whose payment is not settled yet).
    OrderNotPaid,
    /// A refund of this order is being sent; its outcome comes first.
    CancelInProgress,
    /// The order is already refunded (for a customer: in full or in part).
    OrderAlreadyCanceled,
    /// The customer's cancel window after paying has passed; the shop can still refund.
    CancelWindowPassed,
    /// A refund amount of 0 or more than what is left of the payment.
    InvalidCancelAmount,
    /// A partial refund of a payment the PG can only refund in full (an escrow
    /// order, a cash card); nothing was sent.
    PartialRefundNotAllowed,
    /// The PG refused the refund (the code it gave is stored with the refund).
    CancelRefused,
    /// The operators' API is off: the server has no admin token.
    OperatorApiOff,
    /// The operators' API needs `Authorization: Bearer <an operator's token>`.
    Unauthorized,
    /// The operator's role does not allow this: a read-only operator sent a POST
    /// (a refund, "ask the PG now", a reconciliation pass). Nothing was done.
    OperatorNotAllowed,
    /// The operators' listener was reached under a host name it does not
    /// answer to (not an IP address, `localhost` or one of `--admin-hosts`):
    /// what a DNS-rebinding page in an operator's browser would send.
    UnknownAdminHost,
    /// "Ask the PG now" of an order whose payment is not waiting for an outcome.
    NotUnsettled,
    /// A reconciliation pass is running (on this server or another); its report comes first.
    ReconcileRunning,
    /// The PG did not list its transactions; the pass changed nothing and can be run again.
    ReconcileFailed,
    /// The shop does not take payments through this PG (KakaoPay is not configured).
    PgNotOffered,
    /// A KakaoPay confirm for an order with no prepared KakaoPay payment (never
    /// prepared, or expired): open KakaoPay's window again. Nothing was charged.
    PaymentNotPrepared,
    /// The PG refused to prepare the payment; nothing was charged.
    PgRefused,
    /// A checkout's field is out of its bounds (the message names it); nothing was created.
    InvalidCheckout,
    /// The checkout's time was up before it was paid: it is closed, and nothing was charged.
    CheckoutExpired,
    /// The checkout's link was already opened in another browser, whose checkout it is now.
    CheckoutLinkUsed,
    /// The shop API is off: the server has no shops file.
    ShopApiOff,
    /// Not enough of a product is left: the order (or its payment) is refused,
    /// and nothing was charged.
    OutOfStock,
    /// No such event (an operator's resend).
    EventNotFound,
    /// No such shop in the shops file.
    ShopNotFound,
}

impl ErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::InvalidIdempotencyKey => "INVALID_IDEMPOTENCY_KEY",
            ErrorCode::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            ErrorCode::PaymentInProgress => "PAYMENT_IN_PROGRESS",
            ErrorCode::OrderAlreadyPaid => "ORDER_ALREADY_PAID",
            ErrorCode::OrderAlreadyFailed => "ORDER_ALREADY_FAILED",
            ErrorCode::AmountMismatch => "AMOUNT_MISMATCH",
            ErrorCode::OrderNotFound => "ORDER_NOT_FOUND",
            ErrorCode::InvalidWait => "INVALID_WAIT",
            ErrorCode::UnknownSku => "UNKNOWN_SKU",
            ErrorCode::InvalidQuantity => "INVALID_QUANTITY",
            ErrorCode::InvalidCart => "INVALID_CART",
            ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorCode::RequestTimeout => "REQUEST_TIMEOUT",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ErrorCode::PgBusy => "PG_BUSY",
            ErrorCode::PgUnreachable => "PG_UNREACHABLE",
            ErrorCode::ConfirmNotReceived => "CONFIRM_NOT_RECEIVED",
            ErrorCode::DatabaseUnavailable => "DATABASE_UNAVAILABLE",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::OrderNotPaid => "ORDER_NOT_PAID",
            ErrorCode::CancelInProgress => "CANCEL_IN_PROGRESS",
            ErrorCode::OrderAlreadyCanceled => "ORDER_ALREADY_CANCELED",
            ErrorCode::CancelWindowPassed => "CANCEL_WINDOW_PASSED",
            ErrorCode::InvalidCancelAmount => "INVALID_CANCEL_AMOUNT",
            ErrorCode::PartialRefundNotAllowed => "PARTIAL_REFUND_NOT_ALLOWED",
            ErrorCode::CancelRefused => "CANCEL_REFUSED",
            ErrorCode::OperatorApiOff => "OPERATOR_API_OFF",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::OperatorNotAllowed => "OPERATOR_NOT_ALLOWED",
            ErrorCode::UnknownAdminHost => "UNKNOWN_ADMIN_HOST",
            ErrorCode::NotUnsettled => "NOT_UNSETTLED",
            ErrorCode::ReconcileRunning => "RECONCILE_RUNNING",
            ErrorCode::ReconcileFailed => "RECONCILE_FAILED",
            ErrorCode::PgNotOffered => "PG_NOT_OFFERED",
            ErrorCode::PaymentNotPrepared => "PAYMENT_NOT_PREPARED",
            ErrorCode::PgRefused => "PG_REFUSED",
            ErrorCode::InvalidCheckout => "INVALID_CHECKOUT",
            ErrorCode::CheckoutExpired => "CHECKOUT_EXPIRED",
            ErrorCode::CheckoutLinkUsed => "CHECKOUT_LINK_USED",
            ErrorCode::ShopApiOff => "SHOP_API_OFF",
            ErrorCode::OutOfStock => "OUT_OF_STOCK",
            ErrorCode::EventNotFound => "EVENT_NOT_FOUND",
            ErrorCode::ShopNotFound => "SHOP_NOT_FOUND",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<ErrorCode> for str {
    fn eq(&self, other: &ErrorCode) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ErrorCode> for String {
    fn eq(&self, other: &ErrorCode) -> bool {
        self.as_str() == other.as_str()
    }
}
