//! A cancel's answer and what it means for a refund; what a lookup shows of a
//! refund; and a reconciliation refund's answer, read the same way.

use payonce_api::ErrorCode;

use super::Expected;
pub use crate::settlement::OrphanCancel;
use crate::settlement::{CancelVerdict, RefundLookupVerdict, RefundStep, after_cancel_of_orphan};
use crate::toss::TossReply;
use crate::toss::wire::Payment;

/// What one answer to a cancel is, before it means anything for a refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelAnswer {
    /// 200 with the refund's payment, its balance lowered by this refund.
    Refunded,
    /// 200 with a payment whose balance does not show this refund as expected,
    /// or that is not the refund's payment.
    NotThisRefund,
    /// `NOT_CANCELABLE_AMOUNT`, `EXCEED_MAX_REFUND_DUE`, `NOT_ALLOWED_PARTIAL_REFUND`,
    /// `REFUND_REJECTED`, ... (see `CANCEL_CODES`): the PG will not refund
    /// this, however often it is asked.
    NotCancelable,
    /// `ALREADY_CANCELED_PAYMENT`: nothing is left, perhaps because of this very
    /// refund, whose answer was lost. Only a lookup tells.
    AlreadyCanceled,
    /// `PROVIDER_ERROR`, `NOT_AVAILABLE_BANK`: processed and refused for now
    /// (the card company, the bank's hours), nothing refunded; the PG replays
    /// that answer for the key.
    ProviderRefused,
    /// Refused before processing: 429, `FORBIDDEN_CONSECUTIVE_REQUEST` (another
    /// cancel of the payment within a second), credentials, the key's form.
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
    NoReply,
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
    (C::NoReply, K::Retry),
];

/// Every code Toss documents for `POST /v1/payments/{paymentKey}/cancel` (its
/// error table's thirty, grouped by what they say of the refund), and the
/// codes every API may answer. Anything else is [`CancelAnswer::Undocumented`].
/// The 5xx codes (`FAILED_REFUND_PROCESS`, `FAILED_METHOD_HANDLING_CANCEL`,
/// `FAILED_PARTIAL_REFUND`, `COMMON_ERROR`, ...) are server errors by their status.
const CANCEL_CODES: [(&str, CancelAnswer); 29] = [
    // Refused for good: asked again, the PG would only refuse again.
    ("NOT_CANCELABLE_AMOUNT", C::NotCancelable),
    ("NOT_CANCELABLE_PAYMENT", C::NotCancelable),
    ("NOT_FOUND_PAYMENT", C::NotCancelable),
    ("EXCEED_MAX_REFUND_DUE", C::NotCancelable),
    ("NOT_ALLOWED_PARTIAL_REFUND", C::NotCancelable),
    ("NOT_ALLOWED_PARTIAL_REFUND_WAITING_DEPOSIT", C::NotCancelable),
    ("EXCEED_CANCEL_AMOUNT_DISCOUNT_AMOUNT", C::NotCancelable),
    ("EXCEED_CANCEL_LIMIT", C::NotCancelable),
    ("NOT_CANCELABLE_PAYMENT_FOR_DORMANT_USER", C::NotCancelable),
    ("NOT_MATCHES_REFUNDABLE_AMOUNT", C::NotCancelable),
    ("REFUND_REJECTED", C::NotCancelable),
    ("FORBIDDEN_BANK_REFUND_REQUEST", C::NotCancelable),
    ("INVALID_REFUND_ACCOUNT_INFO", C::NotCancelable),
    ("INVALID_REFUND_ACCOUNT_NUMBER", C::NotCancelable),
    ("INVALID_BANK", C::NotCancelable),
    ("INVALID_REQUEST", C::NotCancelable),
    ("INVALID_IDEMPOTENCY_KEY", C::NotCancelable),
    // A definitive 403 about this request, not about its timing.
    ("FORBIDDEN_REQUEST", C::NotCancelable),
    // Nothing is left: perhaps this refund's own doing. A lookup tells.
    ("ALREADY_CANCELED_PAYMENT", C::AlreadyCanceled),
    ("ALREADY_REFUND_PAYMENT", C::AlreadyCanceled),
    // Processed and refused for now (the card company, the bank's hours):
    // the key replays it, a new key later may go through.
    ("PROVIDER_ERROR", C::ProviderRefused),
    ("NOT_AVAILABLE_BANK", C::ProviderRefused),
    ("IDEMPOTENT_REQUEST_PROCESSING", C::StillProcessing),
    ("FAILED_INTERNAL_SYSTEM_PROCESSING", C::ServerError),
    // Turned away before processing: timing, or the shop's credentials.
    ("TOO_MANY_REQUESTS", C::TurnedAway),
    ("FORBIDDEN_CONSECUTIVE_REQUEST", C::TurnedAway),
    ("UNAUTHORIZED_KEY", C::TurnedAway),
    ("INVALID_API_KEY", C::TurnedAway),
    ("INCORRECT_BASIC_AUTH_FORMAT", C::TurnedAway),
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
pub fn cancel_answer(answer: &TossReply, expected: ExpectedRefund<'_>) -> CancelAnswer {
    match answer {
        TossReply::Payment { payment, .. } if expected.balance(payment) == Some(expected.balance_after) => C::Refunded,
        TossReply::Payment { .. } => C::NotThisRefund,
        TossReply::Error { http_status, .. } if *http_status >= 500 => C::ServerError,
        TossReply::Error { http_status: 429, .. } => C::TurnedAway,
        TossReply::Error { code, .. } => {
            CANCEL_CODES.iter().find(|(known, _)| known == code).map_or(C::Undocumented, |(_, meaning)| *meaning)
        }
        TossReply::Unparsable { http_status } if *http_status >= 500 => C::ServerError,
        TossReply::Unparsable { .. } => C::Undocumented,
        TossReply::NotSent { .. } => C::NotSent,
        TossReply::NoReply { .. } => C::NoReply,
    }
}

/// What a cancel answer means for the refund.
pub fn cancel_verdict(answer: CancelAnswer) -> CancelVerdict {
    CANCEL_VERDICTS.iter().find(|(kind, _)| *kind == answer).map_or(K::Retry, |(_, verdict)| *verdict)
}

/// What a lookup shows of a refund.
pub fn refund_lookup(answer: &TossReply, expected: ExpectedRefund<'_>) -> RefundLookup {
    match answer {
        TossReply::Payment { payment, .. } => match expected.balance(payment) {
            Some(balance) if balance == expected.balance_after => L::Shown,
            Some(balance) if balance == expected.balance_before => L::NotShown,
            Some(_) | None => L::Unexpected,
        },
        TossReply::NotSent { .. } | TossReply::NoReply { .. } => L::Unavailable,
        TossReply::Error { http_status, .. } | TossReply::Unparsable { http_status }
            if *http_status == 429 || *http_status >= 500 =>
        {
            L::Unavailable
        }
        TossReply::Error { .. } | TossReply::Unparsable { .. } => L::Unexpected,
    }
}

/// What a lookup means for a requested refund.
pub fn refund_lookup_verdict(lookup: RefundLookup) -> RefundLookupVerdict {
    REFUND_LOOKUP_VERDICTS.iter().find(|(kind, _)| *kind == lookup).map_or(R::Nothing, |(_, verdict)| *verdict)
}

/// Whether a lookup shows the expected payment as one the PG refunds only in
/// full (`isPartialCancelable: false`). Any other answer says nothing of it:
/// a partial refund then goes out, and the PG's refusal ends it.
pub fn refunded_only_in_full(answer: &TossReply, expected: Expected<'_>) -> bool {
    match answer {
        TossReply::Payment { payment, .. } => payment.is_partial_cancelable == Some(false) && expected.matches(payment),
        TossReply::Error { .. }
        | TossReply::Unparsable { .. }
        | TossReply::NotSent { .. }
        | TossReply::NoReply { .. } => false,
    }
}

/// What the PG has refunded of a payment, by its answer: its amount less its balance.
pub fn refunded_total(answer: &TossReply) -> Option<u64> {
    match answer {
        TossReply::Payment { payment, .. } => {
            payment.balance_amount.map(|balance| payment.total_amount.saturating_sub(balance))
        }
        TossReply::Error { .. }
        | TossReply::Unparsable { .. }
        | TossReply::NotSent { .. }
        | TossReply::NoReply { .. } => None,
    }
}

/// The code a refused cancel is stored with.
pub fn refusal_code(answer: &TossReply) -> String {
    match answer {
        TossReply::Error { code, .. } => code.clone(),
        TossReply::Payment { .. }
        | TossReply::Unparsable { .. }
        | TossReply::NotSent { .. }
        | TossReply::NoReply { .. } => ErrorCode::CancelRefused.as_str().to_owned(),
    }
}

/// Reads a reconciliation refund's answer as `CANCEL_VERDICTS` read a refund's,
/// and as `settlement::after_cancel_of_orphan` says it ends.
pub fn orphan_cancel(answer: &TossReply, payment_key: &str, order_id: &str, amount: u64) -> OrphanCancel {
    let expected = ExpectedRefund {
        payment: Expected { payment_key, order_id, amount },
        balance_before: amount,
        balance_after: 0,
    };
    match after_cancel_of_orphan(cancel_verdict(cancel_answer(answer, expected))) {
        RefundStep::SettleRefunded => OrphanCancel::Refunded,
        RefundStep::SettleRefused => OrphanCancel::Refused(refusal_code(answer)),
        // Toss's tables never ask to look a refusal up (a key replays its answer).
        RefundStep::NewKey | RefundStep::Send | RefundStep::LookAgainLater | RefundStep::LookUpTheRefusal => {
            OrphanCancel::Retry
        }
    }
}
