//! A confirm's answer: its kind, and what it means on the customer's first call
//! and on recovery's resend, side by side.

use payonce_api::{ErrorCode, Failure};

use super::Expected;
use crate::settlement::ConfirmVerdict;
use crate::toss::TossReply;
use crate::toss::messages::customer_message;
use crate::toss::wire::PaymentStatus as P;

/// What one answer to a confirm is, before it means anything for an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmAnswer {
    /// 200 with this attempt's payment, `DONE`: charged.
    Approved,
    /// 200 with a payment that is not `DONE`, or not this attempt's.
    NotAnApproval,
    /// A documented code for a refusal after looking at the payment (card,
    /// account, limits, invalid request): nothing was charged.
    Declined,
    /// `NOT_FOUND_PAYMENT_SESSION` or `NOT_FOUND_PAYMENT`: the payment session is
    /// gone (expired, cancelled in the window) or never existed. Nothing was charged.
    SessionGone,
    /// Refused before processing: 429, `FORBIDDEN_CONSECUTIVE_REQUEST`,
    /// `FORBIDDEN_REQUEST`, credentials. Nothing was charged *by this request*.
    TurnedAway,
    /// 409 `IDEMPOTENT_REQUEST_PROCESSING`: the first request with this key is
    /// still being processed.
    StillProcessing,
    /// `ALREADY_PROCESSED_PAYMENT`, `DUPLICATED_ORDER_ID`: processed by another
    /// request; only a lookup tells how.
    AlreadyProcessed,
    /// 5xx, or a documented "temporary error, try again" code.
    ServerError,
    /// A code Toss does not document for confirm, or a body that is neither a
    /// Payment nor an error.
    Undocumented,
    /// The request never left: connection refused, connect timeout.
    NotSent,
    /// The request left and no complete answer came back (read timeout, reset).
    NoReply,
}

use ConfirmAnswer as A;
use ConfirmVerdict as V;

/// What each kind of confirm answer means: on the customer's first call, and on
/// recovery's resend with the same key (sent only after a lookup showed the
/// payment unconfirmed). A resend is never the first request with its key, so
/// a refusal at the door or a replayed error proves nothing about the first.
pub const CONFIRM_VERDICTS: [(ConfirmAnswer, ConfirmVerdict, ConfirmVerdict); 11] = [
    // answer               first call      resend
    (A::Approved, V::Paid, V::Paid),
    (A::Declined, V::Failed, V::Failed),
    (A::SessionGone, V::Failed, V::Failed),
    (A::TurnedAway, V::Failed, V::Nothing),
    (A::NotSent, V::Unreachable, V::Nothing),
    (A::StillProcessing, V::Unknown, V::Nothing),
    (A::AlreadyProcessed, V::Unknown, V::Nothing),
    (A::ServerError, V::Unknown, V::Nothing),
    (A::NoReply, V::Unknown, V::Nothing),
    (A::NotAnApproval, V::Unknown, V::Nothing),
    (A::Undocumented, V::Unknown, V::Nothing),
];

/// Codes Toss documents for `POST /v1/payments/confirm` (and for every API:
/// credentials, idempotency, rate), with what each says. Anything else is
/// [`ConfirmAnswer::Undocumented`].
const CONFIRM_CODES: [(&str, ConfirmAnswer); 48] = [
    ("ALREADY_PROCESSED_PAYMENT", A::AlreadyProcessed),
    ("DUPLICATED_ORDER_ID", A::AlreadyProcessed),
    ("IDEMPOTENT_REQUEST_PROCESSING", A::StillProcessing),
    ("NOT_FOUND_PAYMENT_SESSION", A::SessionGone),
    ("NOT_FOUND_PAYMENT", A::SessionGone),
    ("PROVIDER_ERROR", A::ServerError),
    ("FAILED_INTERNAL_SYSTEM_PROCESSING", A::ServerError),
    ("FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING", A::ServerError),
    ("UNKNOWN_PAYMENT_ERROR", A::ServerError),
    ("TOO_MANY_REQUESTS", A::TurnedAway),
    ("FORBIDDEN_CONSECUTIVE_REQUEST", A::TurnedAway),
    ("FORBIDDEN_REQUEST", A::TurnedAway),
    ("UNAUTHORIZED_KEY", A::TurnedAway),
    ("INVALID_API_KEY", A::TurnedAway),
    ("INCORRECT_BASIC_AUTH_FORMAT", A::TurnedAway),
    ("INVALID_REQUEST", A::Declined),
    ("PAY_PROCESS_ABORTED", A::Declined),
    ("PAY_PROCESS_CANCELED", A::Declined),
    ("EXCEED_MAX_CARD_INSTALLMENT_PLAN", A::Declined),
    ("NOT_ALLOWED_POINT_USE", A::Declined),
    ("INVALID_REJECT_CARD", A::Declined),
    ("BELOW_MINIMUM_AMOUNT", A::Declined),
    ("INVALID_CARD_EXPIRATION", A::Declined),
    ("INVALID_STOPPED_CARD", A::Declined),
    ("INVALID_CARD_NUMBER", A::Declined),
    ("EXCEED_MAX_AMOUNT", A::Declined),
    ("INVALID_CARD_LOST_OR_STOLEN", A::Declined),
    ("UNAPPROVED_ORDER_ID", A::Declined),
    ("EXCEED_MAX_DAILY_PAYMENT_COUNT", A::Declined),
    ("NOT_SUPPORTED_INSTALLMENT_PLAN_CARD_OR_MERCHANT", A::Declined),
    ("INVALID_CARD_INSTALLMENT_PLAN", A::Declined),
    ("NOT_SUPPORTED_MONTHLY_INSTALLMENT_PLAN", A::Declined),
    ("EXCEED_MAX_PAYMENT_AMOUNT", A::Declined),
    ("NOT_FOUND_TERMINAL_ID", A::Declined),
    ("INVALID_AUTHORIZE_AUTH", A::Declined),
    ("RESTRICTED_TRANSFER_ACCOUNT", A::Declined),
    ("INVALID_UNREGISTERED_SUBMALL", A::Declined),
    ("NOT_REGISTERED_BUSINESS", A::Declined),
    ("EXCEED_MAX_ONE_DAY_WITHDRAW_AMOUNT", A::Declined),
    ("EXCEED_MAX_ONE_TIME_WITHDRAW_AMOUNT", A::Declined),
    ("INVALID_ACCOUNT_INFO_RE_REGISTER", A::Declined),
    ("NOT_AVAILABLE_PAYMENT", A::Declined),
    ("EXCEED_MAX_MONTHLY_PAYMENT_AMOUNT", A::Declined),
    ("CARD_PROCESSING_ERROR", A::Declined),
    ("REJECT_CARD_PAYMENT", A::Declined),
    ("REJECT_CARD_COMPANY", A::Declined),
    ("REJECT_ACCOUNT_PAYMENT", A::Declined),
    ("FDS_ERROR", A::Declined),
];

/// Declines Toss documents with 403 (the table above keeps one line per code;
/// these share its meaning).
const MORE_DECLINES: [&str; 6] = [
    "REJECT_TOSSPAY_INVALID_ACCOUNT",
    "EXCEED_MAX_AUTH_COUNT",
    "EXCEED_MAX_ONE_DAY_AMOUNT",
    "NOT_AVAILABLE_BANK",
    "INVALID_PASSWORD",
    "NOT_SUPPORTED_MONTHLY_INSTALLMENT_PLAN_BELOW_AMOUNT",
];

/// The kind of a confirm answer.
pub fn confirm_answer(answer: &TossReply, expected: Expected<'_>) -> ConfirmAnswer {
    match answer {
        TossReply::Payment { payment, .. } if payment.status == P::Done && expected.matches(payment) => A::Approved,
        TossReply::Payment { .. } => A::NotAnApproval,
        TossReply::Error { http_status, .. } if *http_status >= 500 => A::ServerError,
        TossReply::Error { http_status: 429, .. } => A::TurnedAway,
        TossReply::Error { code, .. } => documented_meaning(code).unwrap_or(A::Undocumented),
        TossReply::Unparsable { http_status } if *http_status >= 500 => A::ServerError,
        TossReply::Unparsable { .. } => A::Undocumented,
        TossReply::NotSent { .. } => A::NotSent,
        TossReply::NoReply { .. } => A::NoReply,
    }
}

fn documented_meaning(code: &str) -> Option<ConfirmAnswer> {
    CONFIRM_CODES
        .iter()
        .find(|(known, _)| *known == code)
        .map(|(_, meaning)| *meaning)
        .or_else(|| MORE_DECLINES.contains(&code).then_some(A::Declined))
}

/// What a confirm answer means on the customer's first call.
pub fn first_call_verdict(answer: ConfirmAnswer) -> ConfirmVerdict {
    row(answer).1
}

/// What a confirm answer means on recovery's resend.
pub fn resend_verdict(answer: ConfirmAnswer) -> ConfirmVerdict {
    row(answer).2
}

pub(super) fn row(answer: ConfirmAnswer) -> (ConfirmAnswer, ConfirmVerdict, ConfirmVerdict) {
    *CONFIRM_VERDICTS.iter().find(|(kind, _, _)| *kind == answer).expect("every confirm answer has a row")
}

/// The failure to store when an answer made the attempt FAILED.
pub fn failure_of(answer: &TossReply) -> Failure {
    match answer {
        TossReply::NotSent { .. } => failure(ErrorCode::PgUnreachable.as_str(), None),
        TossReply::Error { code, message, .. } => failure(code, Some(message)),
        TossReply::Payment { payment, .. } => match (&payment.failure, payment.status) {
            (Some(pg_failure), _) => failure(&pg_failure.code, Some(&pg_failure.message)),
            (None, P::Expired) => failure("EXPIRED_PAYMENT", None),
            (None, _) => failure("PAYMENT_ABORTED", None),
        },
        TossReply::Unparsable { .. } | TossReply::NoReply { .. } => failure("PAYMENT_FAILED", None),
    }
}

fn failure(code: &str, pg_message: Option<&str>) -> Failure {
    Failure { code: code.to_owned(), message: customer_message(code, pg_message) }
}
