//! What a PG answer proves about the money: the only place PG answers get a
//! meaning. Two steps, each a literal table:
//!
//! 1. the answer's *kind* ([`ConfirmAnswer`] for a confirm, [`StatusAnswer`] for
//!    a lookup of the payment), from the HTTP status, the documented code or
//!    the Payment's status;
//! 2. what that kind means for the attempt: [`CONFIRM_VERDICTS`] puts the
//!    customer's first call and recovery's resend side by side, and
//!    [`STATUS_VERDICTS`] says what a lookup settles.
//!
//! Refunds have their own two tables: [`CANCEL_VERDICTS`] for a cancel's
//! answer, and [`REFUND_LOOKUP_VERDICTS`] for what a lookup shows of a refund.
//! A cancel, unlike a confirm, is sent again until it goes out: only a
//! documented refusal ends it.
//!
//! Only codes Toss documents for these APIs are definitive. Any other code,
//! whatever it looks like, says nothing: the outcome stays unknown and a
//! lookup decides.

use payonce_api::{ErrorCode, Failure};

use super::client::PgAnswer;
use super::messages::customer_message;
use super::toss::{Payment, PaymentStatus};

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
    NoAnswer,
}

/// What a confirm answer means for the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmVerdict {
    /// PAID.
    Paid,
    /// FAILED with the PG's code: nothing was charged.
    Failed,
    /// FAILED `PG_UNREACHABLE`: the request never left.
    Unreachable,
    /// UNKNOWN: recovery will look the payment up.
    Unknown,
    /// Changes nothing (on a resend, an attempt is already UNKNOWN): the next
    /// lookup decides.
    Nothing,
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
    (A::NoAnswer, V::Unknown, V::Nothing),
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

/// What a lookup of the payment (`GET /v1/payments/{paymentKey}`) showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusAnswer {
    /// The attempt's payment, in this status.
    Payment(PaymentStatus),
    /// 404: the PG has no payment under this key (never confirmed, never opened).
    NotFound,
    /// A payment, but not this attempt's (another key, order or amount).
    NotThisPayment,
    /// No usable answer: not sent, no answer, 429 or 5xx. Worth a retry.
    Unavailable,
    /// Any other error, or an unreadable body.
    Unexpected,
}

/// What a lookup means for an unsettled attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusVerdict {
    Paid,
    /// FAILED: approval failed, or the session expired before any confirm.
    Failed,
    Canceled,
    PartiallyRefunded,
    /// Never confirmed (or being processed right now): resend the confirm with
    /// the attempt's own key, once this pass.
    NotConfirmed,
    /// Settles nothing; look again later.
    Nothing,
    /// Nothing learned; try the lookup again after a backoff.
    Retry,
}

use PaymentStatus as P;
use StatusAnswer as S;
use StatusVerdict as Q;

/// What each lookup settles. A payment that is not the attempt's settles nothing.
pub const STATUS_VERDICTS: [(StatusAnswer, StatusVerdict); 13] = [
    (S::Payment(P::Done), Q::Paid),
    (S::Payment(P::Aborted), Q::Failed),
    (S::Payment(P::Expired), Q::Failed),
    (S::Payment(P::Canceled), Q::Canceled),
    (S::Payment(P::PartialCanceled), Q::PartiallyRefunded),
    (S::Payment(P::Ready), Q::NotConfirmed),
    (S::Payment(P::InProgress), Q::NotConfirmed),
    (S::NotFound, Q::NotConfirmed),
    (S::Payment(P::WaitingForDeposit), Q::Nothing),
    (S::Payment(P::Unrecognised), Q::Nothing),
    (S::NotThisPayment, Q::Nothing),
    (S::Unexpected, Q::Nothing),
    (S::Unavailable, Q::Retry),
];

/// What one answer to a cancel is, before it means anything for a refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelAnswer {
    /// 200 with the refund's payment, its balance lowered by this refund.
    Refunded,
    /// 200 with a payment whose balance does not show this refund as expected,
    /// or that is not the refund's payment.
    NotThisRefund,
    /// `NOT_CANCELABLE_AMOUNT`, `NOT_CANCELABLE_PAYMENT`, `NOT_FOUND_PAYMENT`:
    /// the PG will not refund this, however often it is asked.
    NotCancelable,
    /// `ALREADY_CANCELED_PAYMENT`: nothing is left, perhaps because of this very
    /// refund, whose answer was lost. Only a lookup tells.
    AlreadyCanceled,
    /// `PROVIDER_ERROR`: processed and refused at the card company, nothing
    /// refunded; the PG replays that answer for the key.
    ProviderRefused,
    /// Refused before processing: 429, `FORBIDDEN_CONSECUTIVE_REQUEST` (another
    /// cancel of the payment within a second), credentials.
    TurnedAway,
    /// 409 `IDEMPOTENT_REQUEST_PROCESSING`: the first send with this key is still processing.
    StillProcessing,
    /// 5xx, or a documented "temporary error" code.
    ServerError,
    /// A code Toss does not document for cancels, or an unreadable body.
    Undocumented,
    /// The request never left.
    NotSent,
    /// The request left and no complete answer came back.
    NoAnswer,
}

/// What a cancel's answer means for the refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelVerdict {
    /// DONE: refunded, as the answer shows.
    Refunded,
    /// FAILED with the PG's code: nothing refunded, and nothing will be.
    Refused,
    /// Still REQUESTED; a lookup settles it or sends it again, with the same key.
    Retry,
    /// Still REQUESTED; nothing was refunded and the key's answer is spent: the
    /// next send, after a lookup, goes under a new key.
    NewKey,
}

use CancelAnswer as C;
use CancelVerdict as K;

/// What each kind of cancel answer means. The same on the first send and on
/// recovery's: a refund is sent until it goes out, so only a documented
/// refusal ends it, and an answer that may hide a done refund is looked up.
pub const CANCEL_VERDICTS: [(CancelAnswer, CancelVerdict); 11] = [
    (C::Refunded, K::Refunded),
    (C::NotCancelable, K::Refused),
    (C::ProviderRefused, K::NewKey),
    (C::AlreadyCanceled, K::Retry),
    (C::NotThisRefund, K::Retry),
    (C::TurnedAway, K::Retry),
    (C::StillProcessing, K::Retry),
    (C::ServerError, K::Retry),
    (C::Undocumented, K::Retry),
    (C::NotSent, K::Retry),
    (C::NoAnswer, K::Retry),
];

/// Codes Toss documents for `POST /v1/payments/{paymentKey}/cancel` (and for
/// every API), with what each says. Anything else is [`CancelAnswer::Undocumented`].
const CANCEL_CODES: [(&str, CancelAnswer); 14] = [
    ("NOT_CANCELABLE_AMOUNT", C::NotCancelable),
    ("NOT_CANCELABLE_PAYMENT", C::NotCancelable),
    ("NOT_FOUND_PAYMENT", C::NotCancelable),
    ("ALREADY_CANCELED_PAYMENT", C::AlreadyCanceled),
    ("PROVIDER_ERROR", C::ProviderRefused),
    ("IDEMPOTENT_REQUEST_PROCESSING", C::StillProcessing),
    ("FAILED_INTERNAL_SYSTEM_PROCESSING", C::ServerError),
    ("FAILED_REFUND_PROCESS", C::ServerError),
    ("FAILED_METHOD_HANDLING_CANCEL", C::ServerError),
    ("TOO_MANY_REQUESTS", C::TurnedAway),
    ("FORBIDDEN_CONSECUTIVE_REQUEST", C::TurnedAway),
    ("FORBIDDEN_REQUEST", C::TurnedAway),
    ("UNAUTHORIZED_KEY", C::TurnedAway),
    ("INVALID_API_KEY", C::TurnedAway),
];

/// What a lookup of the payment shows of a refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefundLookup {
    /// The refund's payment, its balance lowered by the refund.
    Shown,
    /// The refund's payment, its balance as it was before the refund: not refunded.
    NotShown,
    /// No usable answer: not sent, no answer, 429 or 5xx. Worth a retry.
    Unavailable,
    /// Any other balance, another payment, an error, an unreadable body.
    Unexpected,
}

/// What a lookup means for a requested refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundLookupVerdict {
    /// DONE, as the lookup shows.
    Refunded,
    /// Send the cancel (again, with the refund's key).
    Send,
    /// Nothing learned; try the lookup again after a backoff.
    Retry,
    /// Settles nothing and sends nothing: look again later (and alert, in time).
    Nothing,
}

use RefundLookup as L;
use RefundLookupVerdict as R;

/// What each lookup of a refund leads to.
pub const REFUND_LOOKUP_VERDICTS: [(RefundLookup, RefundLookupVerdict); 4] =
    [(L::Shown, R::Refunded), (L::NotShown, R::Send), (L::Unavailable, R::Retry), (L::Unexpected, R::Nothing)];

/// The payment a refund expects, and its balance before and after the refund.
#[derive(Debug, Clone, Copy)]
pub struct ExpectedRefund<'a> {
    pub payment: Expected<'a>,
    pub balance_before: u64,
    pub balance_after: u64,
}

impl ExpectedRefund<'_> {
    /// The refund's payment's balance, if the payment is the refund's.
    fn balance(&self, payment: &Payment) -> Option<u64> {
        self.payment.matches(payment).then_some(payment.balance_amount).flatten()
    }
}

/// The kind of a cancel answer.
pub fn cancel_answer(answer: &PgAnswer, expected: ExpectedRefund<'_>) -> CancelAnswer {
    match answer {
        PgAnswer::Payment { payment, .. } if expected.balance(payment) == Some(expected.balance_after) => C::Refunded,
        PgAnswer::Payment { .. } => C::NotThisRefund,
        PgAnswer::Error { http_status, .. } if *http_status >= 500 => C::ServerError,
        PgAnswer::Error { http_status: 429, .. } => C::TurnedAway,
        PgAnswer::Error { code, .. } => {
            CANCEL_CODES.iter().find(|(known, _)| known == code).map_or(C::Undocumented, |(_, meaning)| *meaning)
        }
        PgAnswer::Unparsable { http_status } if *http_status >= 500 => C::ServerError,
        PgAnswer::Unparsable { .. } => C::Undocumented,
        PgAnswer::NotSent { .. } => C::NotSent,
        PgAnswer::NoAnswer { .. } => C::NoAnswer,
    }
}

/// What a cancel answer means for the refund.
pub fn cancel_verdict(answer: CancelAnswer) -> CancelVerdict {
    CANCEL_VERDICTS.iter().find(|(kind, _)| *kind == answer).map_or(K::Retry, |(_, verdict)| *verdict)
}

/// What a lookup shows of a refund.
pub fn refund_lookup(answer: &PgAnswer, expected: ExpectedRefund<'_>) -> RefundLookup {
    match answer {
        PgAnswer::Payment { payment, .. } => match expected.balance(payment) {
            Some(balance) if balance == expected.balance_after => L::Shown,
            Some(balance) if balance == expected.balance_before => L::NotShown,
            Some(_) | None => L::Unexpected,
        },
        PgAnswer::NotSent { .. } | PgAnswer::NoAnswer { .. } => L::Unavailable,
        PgAnswer::Error { http_status, .. } | PgAnswer::Unparsable { http_status }
            if *http_status == 429 || *http_status >= 500 =>
        {
            L::Unavailable
        }
        PgAnswer::Error { .. } | PgAnswer::Unparsable { .. } => L::Unexpected,
    }
}

/// What a lookup means for a requested refund.
pub fn refund_lookup_verdict(lookup: RefundLookup) -> RefundLookupVerdict {
    REFUND_LOOKUP_VERDICTS.iter().find(|(kind, _)| *kind == lookup).map_or(R::Nothing, |(_, verdict)| *verdict)
}

/// What the PG has refunded of a payment, by its answer: its amount less its balance.
pub fn refunded_total(answer: &PgAnswer) -> Option<u64> {
    match answer {
        PgAnswer::Payment { payment, .. } => {
            payment.balance_amount.map(|balance| payment.total_amount.saturating_sub(balance))
        }
        PgAnswer::Error { .. } | PgAnswer::Unparsable { .. } | PgAnswer::NotSent { .. } | PgAnswer::NoAnswer { .. } => {
            None
        }
    }
}

/// The code a refused cancel is stored with.
pub fn refusal_code(answer: &PgAnswer) -> String {
    match answer {
        PgAnswer::Error { code, .. } => code.clone(),
        PgAnswer::Payment { .. }
        | PgAnswer::Unparsable { .. }
        | PgAnswer::NotSent { .. }
        | PgAnswer::NoAnswer { .. } => ErrorCode::CancelRefused.as_str().to_owned(),
    }
}

/// The payment an attempt expects: anything else proves nothing about it.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub payment_key: &'a str,
    pub order_id: &'a str,
    pub amount: u64,
}

impl Expected<'_> {
    fn matches(&self, payment: &Payment) -> bool {
        let matches = payment.payment_key == self.payment_key
            && payment.order_id == self.order_id
            && payment.total_amount == self.amount;
        if !matches {
            tracing::error!(
                order_id = self.order_id,
                payment_key = self.payment_key,
                amount = self.amount,
                pg_order_id = payment.order_id,
                pg_payment_key = payment.payment_key,
                pg_amount = payment.total_amount,
                "the PG answered with another payment"
            );
        }
        matches
    }
}

/// The kind of a confirm answer.
pub fn confirm_answer(answer: &PgAnswer, expected: Expected<'_>) -> ConfirmAnswer {
    match answer {
        PgAnswer::Payment { payment, .. } if payment.status == P::Done && expected.matches(payment) => A::Approved,
        PgAnswer::Payment { .. } => A::NotAnApproval,
        PgAnswer::Error { http_status, .. } if *http_status >= 500 => A::ServerError,
        PgAnswer::Error { http_status: 429, .. } => A::TurnedAway,
        PgAnswer::Error { code, .. } => documented_meaning(code).unwrap_or(A::Undocumented),
        PgAnswer::Unparsable { http_status } if *http_status >= 500 => A::ServerError,
        PgAnswer::Unparsable { .. } => A::Undocumented,
        PgAnswer::NotSent { .. } => A::NotSent,
        PgAnswer::NoAnswer { .. } => A::NoAnswer,
    }
}

fn documented_meaning(code: &str) -> Option<ConfirmAnswer> {
    CONFIRM_CODES
        .iter()
        .find(|(known, _)| *known == code)
        .map(|(_, meaning)| *meaning)
        .or_else(|| MORE_DECLINES.contains(&code).then_some(A::Declined))
}

/// The kind of a lookup answer.
pub fn status_answer(answer: &PgAnswer, expected: Expected<'_>) -> StatusAnswer {
    match answer {
        PgAnswer::Payment { payment, .. } if expected.matches(payment) => S::Payment(payment.status),
        PgAnswer::Payment { .. } => S::NotThisPayment,
        PgAnswer::NotSent { .. } | PgAnswer::NoAnswer { .. } => S::Unavailable,
        PgAnswer::Error { http_status, .. } | PgAnswer::Unparsable { http_status }
            if *http_status == 429 || *http_status >= 500 =>
        {
            S::Unavailable
        }
        PgAnswer::Error { http_status: 404, code, .. } if code == "NOT_FOUND_PAYMENT" || code == "NOT_FOUND" => {
            S::NotFound
        }
        PgAnswer::Error { .. } | PgAnswer::Unparsable { .. } => S::Unexpected,
    }
}

/// What a confirm answer means on the customer's first call.
pub fn first_call_verdict(answer: ConfirmAnswer) -> ConfirmVerdict {
    row(answer).1
}

/// What a confirm answer means on recovery's resend.
pub fn resend_verdict(answer: ConfirmAnswer) -> ConfirmVerdict {
    row(answer).2
}

fn row(answer: ConfirmAnswer) -> (ConfirmAnswer, ConfirmVerdict, ConfirmVerdict) {
    *CONFIRM_VERDICTS.iter().find(|(kind, _, _)| *kind == answer).expect("every confirm answer has a row")
}

/// What a lookup means for an unsettled attempt.
pub fn status_verdict(answer: StatusAnswer) -> StatusVerdict {
    STATUS_VERDICTS.iter().find(|(kind, _)| *kind == answer).map_or(Q::Nothing, |(_, verdict)| *verdict)
}

/// The failure to store when an answer made the attempt FAILED.
pub fn failure_of(answer: &PgAnswer) -> Failure {
    match answer {
        PgAnswer::NotSent { .. } => failure(ErrorCode::PgUnreachable.as_str(), None),
        PgAnswer::Error { code, message, .. } => failure(code, Some(message)),
        PgAnswer::Payment { payment, .. } => match (&payment.failure, payment.status) {
            (Some(pg_failure), _) => failure(&pg_failure.code, Some(&pg_failure.message)),
            (None, P::Expired) => failure("EXPIRED_PAYMENT", None),
            (None, _) => failure("PAYMENT_ABORTED", None),
        },
        PgAnswer::Unparsable { .. } | PgAnswer::NoAnswer { .. } => failure("PAYMENT_FAILED", None),
    }
}

fn failure(code: &str, pg_message: Option<&str>) -> Failure {
    Failure { code: code.to_owned(), message: customer_message(code, pg_message) }
}

/// One line for logs and operators: what the PG said.
pub fn describe(answer: &PgAnswer) -> String {
    match answer {
        PgAnswer::Payment { http_status, payment } => {
            format!("HTTP {http_status} payment {} {:?}", payment.payment_key, payment.status)
        }
        PgAnswer::Error { http_status, code, .. } => format!("HTTP {http_status} {code}"),
        PgAnswer::Unparsable { http_status } => format!("HTTP {http_status} with an unreadable body"),
        PgAnswer::NotSent { detail } => format!("not sent: {detail}"),
        PgAnswer::NoAnswer { detail, .. } => format!("no answer: {detail}"),
    }
}

/// What a cancel of a charge no order made (a reconciliation refund, sent in
/// full under a key derived from its paymentKey) came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrphanCancel {
    /// Refunded in full, as the answer shows.
    Refunded,
    /// Refused with this code; the same key would only replay it: an operator's now.
    Refused(String),
    /// Not known yet: the next pass sends it again, with the same key.
    Retry,
}

/// Reads a reconciliation refund's answer as `CANCEL_VERDICTS` read a refund's.
pub fn orphan_cancel(answer: &PgAnswer, payment_key: &str, order_id: &str, amount: u64) -> OrphanCancel {
    let expected = ExpectedRefund {
        payment: Expected { payment_key, order_id, amount },
        balance_before: amount,
        balance_after: 0,
    };
    match cancel_verdict(cancel_answer(answer, expected)) {
        CancelVerdict::Refunded => OrphanCancel::Refunded,
        CancelVerdict::Refused | CancelVerdict::NewKey => OrphanCancel::Refused(refusal_code(answer)),
        CancelVerdict::Retry => OrphanCancel::Retry,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::pg::toss::ErrorBody;

    const EXPECTED: Expected<'static> = Expected { payment_key: "pk", order_id: "ord", amount: 1000 };

    fn payment(status: PaymentStatus) -> PgAnswer {
        PgAnswer::Payment {
            http_status: 200,
            payment: Payment {
                payment_key: "pk".into(),
                order_id: "ord".into(),
                status,
                total_amount: 1000,
                balance_amount: Some(1000),
                failure: None,
            },
        }
    }

    fn error(http_status: u16, code: &str) -> PgAnswer {
        PgAnswer::Error { http_status, code: code.into(), message: "PG message".into() }
    }

    /// An answer of each kind, as the wire brings it.
    fn confirm_example(kind: ConfirmAnswer) -> Vec<PgAnswer> {
        match kind {
            A::Approved => vec![payment(P::Done)],
            A::NotAnApproval => vec![payment(P::InProgress), payment(P::Canceled), {
                let PgAnswer::Payment { payment, .. } = payment(P::Done) else { unreachable!() };
                PgAnswer::Payment { http_status: 200, payment: Payment { order_id: "other".into(), ..payment } }
            }],
            A::Declined => vec![
                error(403, "REJECT_CARD_PAYMENT"),
                error(400, "INVALID_CARD_EXPIRATION"),
                error(400, "INVALID_REQUEST"),
                error(403, "EXCEED_MAX_AUTH_COUNT"),
            ],
            A::SessionGone => vec![error(404, "NOT_FOUND_PAYMENT_SESSION"), error(404, "NOT_FOUND_PAYMENT")],
            A::TurnedAway => vec![
                error(429, "TOO_MANY_REQUESTS"),
                error(429, "ANYTHING"),
                error(403, "FORBIDDEN_CONSECUTIVE_REQUEST"),
                error(401, "UNAUTHORIZED_KEY"),
            ],
            A::StillProcessing => vec![error(409, "IDEMPOTENT_REQUEST_PROCESSING")],
            A::AlreadyProcessed => vec![error(400, "ALREADY_PROCESSED_PAYMENT"), error(400, "DUPLICATED_ORDER_ID")],
            A::ServerError => vec![
                error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
                error(502, "REJECT_CARD_PAYMENT"),
                error(400, "PROVIDER_ERROR"),
                PgAnswer::Unparsable { http_status: 503 },
            ],
            A::Undocumented => vec![
                error(400, "SOMETHING_NEW"),
                error(400, "REJECT_SOMETHING_NEW"),
                error(403, "EXCEED_SOMETHING_NEW"),
                PgAnswer::Unparsable { http_status: 200 },
                PgAnswer::Unparsable { http_status: 400 },
            ],
            A::NotSent => vec![PgAnswer::NotSent { detail: "connection refused".into() }],
            A::NoAnswer => vec![PgAnswer::NoAnswer { detail: "read timeout".into(), timed_out: true }],
        }
    }

    fn check_confirm_row(kind: ConfirmAnswer, first: ConfirmVerdict, resend: ConfirmVerdict) {
        let (_, table_first, table_resend) = row(kind);
        assert_eq!((table_first, table_resend), (first, resend), "{kind:?}");
        for answer in confirm_example(kind) {
            assert_eq!(confirm_answer(&answer, EXPECTED), kind, "{answer:?}");
        }
    }

    #[test]
    fn confirm_approved_is_paid_on_either_call() {
        check_confirm_row(A::Approved, V::Paid, V::Paid);
    }

    #[test]
    fn confirm_declined_fails_on_either_call() {
        check_confirm_row(A::Declined, V::Failed, V::Failed);
    }

    #[test]
    fn confirm_session_gone_fails_on_either_call() {
        check_confirm_row(A::SessionGone, V::Failed, V::Failed);
    }

    #[test]
    fn confirm_turned_away_fails_the_first_call_and_says_nothing_on_a_resend() {
        check_confirm_row(A::TurnedAway, V::Failed, V::Nothing);
    }

    #[test]
    fn confirm_not_sent_is_unreachable_first_and_nothing_on_a_resend() {
        check_confirm_row(A::NotSent, V::Unreachable, V::Nothing);
    }

    #[test]
    fn confirm_still_processing_is_unknown() {
        check_confirm_row(A::StillProcessing, V::Unknown, V::Nothing);
    }

    #[test]
    fn confirm_already_processed_is_unknown() {
        check_confirm_row(A::AlreadyProcessed, V::Unknown, V::Nothing);
    }

    #[test]
    fn confirm_server_errors_are_unknown_whatever_their_code() {
        check_confirm_row(A::ServerError, V::Unknown, V::Nothing);
    }

    #[test]
    fn confirm_no_answer_is_unknown() {
        check_confirm_row(A::NoAnswer, V::Unknown, V::Nothing);
    }

    #[test]
    fn confirm_a_payment_that_is_not_this_approval_is_unknown() {
        check_confirm_row(A::NotAnApproval, V::Unknown, V::Nothing);
    }

    #[test]
    fn confirm_undocumented_codes_are_unknown_whatever_their_prefix() {
        check_confirm_row(A::Undocumented, V::Unknown, V::Nothing);
    }

    #[test]
    fn the_confirm_table_has_one_row_per_answer_and_a_test_above_per_row() {
        let kinds: HashSet<_> = CONFIRM_VERDICTS.iter().map(|(kind, _, _)| *kind).collect();
        assert_eq!(kinds.len(), CONFIRM_VERDICTS.len(), "one row per kind");
        assert_eq!(kinds.len(), 11, "a new kind needs a row, and a test of its own above");
    }

    fn status_example(kind: StatusAnswer) -> Vec<PgAnswer> {
        match kind {
            S::Payment(status) => vec![payment(status)],
            S::NotFound => vec![error(404, "NOT_FOUND_PAYMENT"), error(404, "NOT_FOUND")],
            S::NotThisPayment => {
                let PgAnswer::Payment { payment, .. } = payment(P::Done) else { unreachable!() };
                vec![PgAnswer::Payment { http_status: 200, payment: Payment { payment_key: "pk-2".into(), ..payment } }]
            }
            S::Unavailable => vec![
                PgAnswer::NotSent { detail: String::new() },
                PgAnswer::NoAnswer { detail: String::new(), timed_out: false },
                error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
                error(429, "TOO_MANY_REQUESTS"),
                PgAnswer::Unparsable { http_status: 502 },
            ],
            S::Unexpected => vec![error(403, "FORBIDDEN_CONSECUTIVE_REQUEST"), error(400, "SOMETHING_NEW")],
        }
    }

    fn check_status_row(kind: StatusAnswer, verdict: StatusVerdict) {
        assert_eq!(status_verdict(kind), verdict, "{kind:?}");
        for answer in status_example(kind) {
            assert_eq!(status_answer(&answer, EXPECTED), kind, "{answer:?}");
        }
    }

    #[test]
    fn status_done_is_paid() {
        check_status_row(S::Payment(P::Done), Q::Paid);
    }

    #[test]
    fn status_aborted_is_failed() {
        check_status_row(S::Payment(P::Aborted), Q::Failed);
    }

    #[test]
    fn status_expired_is_failed() {
        check_status_row(S::Payment(P::Expired), Q::Failed);
    }

    #[test]
    fn status_canceled_is_canceled_not_paid() {
        check_status_row(S::Payment(P::Canceled), Q::Canceled);
    }

    #[test]
    fn status_partial_canceled_is_partially_refunded() {
        check_status_row(S::Payment(P::PartialCanceled), Q::PartiallyRefunded);
    }

    #[test]
    fn status_ready_is_not_confirmed() {
        check_status_row(S::Payment(P::Ready), Q::NotConfirmed);
    }

    #[test]
    fn status_in_progress_is_not_confirmed() {
        check_status_row(S::Payment(P::InProgress), Q::NotConfirmed);
    }

    #[test]
    fn status_not_found_is_not_confirmed() {
        check_status_row(S::NotFound, Q::NotConfirmed);
    }

    #[test]
    fn status_waiting_for_deposit_settles_nothing() {
        check_status_row(S::Payment(P::WaitingForDeposit), Q::Nothing);
    }

    #[test]
    fn status_unrecognised_settles_nothing() {
        check_status_row(S::Payment(P::Unrecognised), Q::Nothing);
    }

    #[test]
    fn status_of_another_payment_settles_nothing() {
        check_status_row(S::NotThisPayment, Q::Nothing);
    }

    #[test]
    fn status_unexpected_errors_settle_nothing() {
        check_status_row(S::Unexpected, Q::Nothing);
    }

    #[test]
    fn status_unavailable_is_retried() {
        check_status_row(S::Unavailable, Q::Retry);
    }

    #[test]
    fn the_status_table_has_one_row_per_answer() {
        let kinds: HashSet<_> = STATUS_VERDICTS.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds.len(), STATUS_VERDICTS.len());
        assert_eq!(kinds.len(), 13, "a new kind needs a row, and a test of its own above");
    }

    #[test]
    fn failures_carry_the_pg_code_and_words_for_the_customer() {
        let declined = failure_of(&error(403, "REJECT_CARD_PAYMENT"));
        assert_eq!(declined.code, "REJECT_CARD_PAYMENT");
        assert!(declined.message.contains("not been charged"), "{}", declined.message);
        assert!(!declined.message.contains("PG message"));
        assert_eq!(failure_of(&PgAnswer::NotSent { detail: String::new() }).code, "PG_UNREACHABLE");
        assert_eq!(failure_of(&payment(P::Expired)).code, "EXPIRED_PAYMENT");
        let PgAnswer::Payment { payment: aborted, .. } = payment(P::Aborted) else { unreachable!() };
        let aborted =
            Payment { failure: Some(ErrorBody { code: "REJECT_CARD_COMPANY".into(), message: "m".into() }), ..aborted };
        assert_eq!(failure_of(&PgAnswer::Payment { http_status: 200, payment: aborted }).code, "REJECT_CARD_COMPANY");
    }

    /// A refund of 400 of the 1000 payment, from a balance of 1000.
    const REFUND: ExpectedRefund<'static> =
        ExpectedRefund { payment: EXPECTED, balance_before: 1000, balance_after: 600 };

    fn with_balance(status: PaymentStatus, balance: u64) -> PgAnswer {
        let PgAnswer::Payment { payment, .. } = payment(status) else { unreachable!() };
        PgAnswer::Payment { http_status: 200, payment: Payment { balance_amount: Some(balance), ..payment } }
    }

    fn cancel_example(kind: CancelAnswer) -> Vec<PgAnswer> {
        match kind {
            C::Refunded => vec![with_balance(P::PartialCanceled, 600)],
            C::NotThisRefund => vec![with_balance(P::Done, 1000), with_balance(P::Canceled, 0), {
                let PgAnswer::Payment { payment, .. } = with_balance(P::PartialCanceled, 600) else { unreachable!() };
                PgAnswer::Payment { http_status: 200, payment: Payment { payment_key: "pk-2".into(), ..payment } }
            }],
            C::NotCancelable => vec![
                error(403, "NOT_CANCELABLE_AMOUNT"),
                error(403, "NOT_CANCELABLE_PAYMENT"),
                error(404, "NOT_FOUND_PAYMENT"),
            ],
            C::AlreadyCanceled => vec![error(400, "ALREADY_CANCELED_PAYMENT")],
            C::ProviderRefused => vec![error(400, "PROVIDER_ERROR")],
            C::TurnedAway => vec![
                error(403, "FORBIDDEN_CONSECUTIVE_REQUEST"),
                error(429, "TOO_MANY_REQUESTS"),
                error(429, "ANYTHING"),
                error(401, "UNAUTHORIZED_KEY"),
            ],
            C::StillProcessing => vec![error(409, "IDEMPOTENT_REQUEST_PROCESSING")],
            C::ServerError => vec![
                error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
                error(500, "NOT_CANCELABLE_AMOUNT"),
                PgAnswer::Unparsable { http_status: 503 },
            ],
            C::Undocumented => vec![error(400, "SOMETHING_NEW"), PgAnswer::Unparsable { http_status: 400 }],
            C::NotSent => vec![PgAnswer::NotSent { detail: "connection refused".into() }],
            C::NoAnswer => vec![PgAnswer::NoAnswer { detail: "reset".into(), timed_out: false }],
        }
    }

    fn check_cancel_row(kind: CancelAnswer, verdict: CancelVerdict) {
        assert_eq!(cancel_verdict(kind), verdict, "{kind:?}");
        for answer in cancel_example(kind) {
            assert_eq!(cancel_answer(&answer, REFUND), kind, "{answer:?}");
        }
    }

    #[test]
    fn cancel_refunded_is_done() {
        check_cancel_row(C::Refunded, K::Refunded);
    }

    #[test]
    fn cancel_documented_refusals_end_the_refund() {
        check_cancel_row(C::NotCancelable, K::Refused);
    }

    #[test]
    fn cancel_refused_by_the_card_company_goes_again_under_a_new_key() {
        check_cancel_row(C::ProviderRefused, K::NewKey);
    }

    #[test]
    fn cancel_already_canceled_is_settled_by_a_lookup() {
        check_cancel_row(C::AlreadyCanceled, K::Retry);
    }

    #[test]
    fn cancel_a_payment_not_showing_this_refund_is_settled_by_a_lookup() {
        check_cancel_row(C::NotThisRefund, K::Retry);
    }

    #[test]
    fn cancel_turned_away_is_sent_again() {
        check_cancel_row(C::TurnedAway, K::Retry);
    }

    #[test]
    fn cancel_still_processing_is_sent_again() {
        check_cancel_row(C::StillProcessing, K::Retry);
    }

    #[test]
    fn cancel_server_errors_are_sent_again_whatever_their_code() {
        check_cancel_row(C::ServerError, K::Retry);
    }

    #[test]
    fn cancel_undocumented_codes_are_sent_again() {
        check_cancel_row(C::Undocumented, K::Retry);
    }

    #[test]
    fn cancel_not_sent_is_sent_again() {
        check_cancel_row(C::NotSent, K::Retry);
    }

    #[test]
    fn cancel_no_answer_is_sent_again() {
        check_cancel_row(C::NoAnswer, K::Retry);
    }

    #[test]
    fn the_cancel_table_has_one_row_per_answer_and_a_test_above_per_row() {
        let kinds: HashSet<_> = CANCEL_VERDICTS.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds.len(), CANCEL_VERDICTS.len(), "one row per kind");
        assert_eq!(kinds.len(), 11, "a new kind needs a row, and a test of its own above");
    }

    #[test]
    fn a_lookup_settles_a_refund_only_by_the_balance_it_leaves() {
        let cases = [
            (with_balance(P::PartialCanceled, 600), L::Shown, R::Refunded),
            (with_balance(P::Done, 1000), L::NotShown, R::Send),
            (with_balance(P::Canceled, 0), L::Unexpected, R::Nothing),
            (with_balance(P::PartialCanceled, 300), L::Unexpected, R::Nothing),
            (error(404, "NOT_FOUND_PAYMENT"), L::Unexpected, R::Nothing),
            (error(503, "FAILED_INTERNAL_SYSTEM_PROCESSING"), L::Unavailable, R::Retry),
            (PgAnswer::NoAnswer { detail: String::new(), timed_out: true }, L::Unavailable, R::Retry),
        ];
        for (answer, lookup, verdict) in cases {
            assert_eq!(refund_lookup(&answer, REFUND), lookup, "{answer:?}");
            assert_eq!(refund_lookup_verdict(lookup), verdict, "{lookup:?}");
        }
        let kinds: HashSet<_> = REFUND_LOOKUP_VERDICTS.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds.len(), 4, "a new kind needs a row, and a case above");
        assert_eq!(refunded_total(&with_balance(P::PartialCanceled, 600)), Some(400));
    }
}
