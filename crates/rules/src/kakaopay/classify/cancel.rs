//! A cancel's answer, and what a lookup shows of a refund. No key makes a
//! cancel sent again the same request as the first: each is a new one, and
//! carries the balance the shop expects (`cancel_available_amount`). So a
//! refusal proves nothing was refunded only for the first send; for one sent
//! again it may mean the first went through meanwhile, and a lookup decides.

use super::unavailable;
use crate::kakaopay::KakaoPayReply;
use crate::kakaopay::wire::{Cancellation, Order, Status};
use crate::settlement::{CancelVerdict, RefundLookupVerdict, Sent};

/// The refund a cancel or a lookup is read against.
#[derive(Debug, Clone, Copy)]
pub struct ExpectedRefund<'a> {
    pub tid: &'a str,
    /// What was left to cancel before this refund.
    pub balance_before: u64,
    /// What this refund cancels.
    pub amount: u64,
}

impl ExpectedRefund<'_> {
    fn balance_after(&self) -> u64 {
        self.balance_before.saturating_sub(self.amount)
    }
}

/// What one answer to a cancel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelAnswer {
    /// 200, and the balance left is this refund's.
    Refunded,
    /// 200 with another payment, or another balance.
    NotThisRefund,
    /// -710 (more than is left: the balance the shop sent is not KakaoPay's)
    /// or -784 (not in a state that can be cancelled).
    Refused,
    /// -781: the payment method refused the cancel; it may be sent again.
    MethodRefused,
    /// -785: a cancel of it is being processed.
    Duplicate,
    /// Refused before processing (credentials, registration, quota).
    TurnedAway,
    /// 5xx, or KakaoPay's internal error or maintenance.
    ServerError,
    /// A code KakaoPay does not document for cancel, or a body that is neither.
    Undocumented,
    NotSent,
    NoReply,
}

use CancelAnswer as C;
use CancelVerdict as K;

/// What each kind of cancel answer means for the refund, on its first send
/// and when sent again after a lookup. A first send's refusal ends a refund
/// refused; a refusal of one sent again ends it only once a lookup made at
/// once shows the balance still as before it (else the first went through).
pub const CANCEL_VERDICTS: [(CancelAnswer, CancelVerdict, CancelVerdict); 10] = [
    // answer          first send   sent again
    (C::Refunded, K::Refunded, K::Refunded),
    (C::Refused, K::Refused, K::RefusedUnlessDone),
    (C::MethodRefused, K::Retry, K::Retry),
    (C::Duplicate, K::Retry, K::Retry),
    (C::TurnedAway, K::Retry, K::Retry),
    (C::ServerError, K::Retry, K::Retry),
    (C::Undocumented, K::Retry, K::Retry),
    (C::NotSent, K::Retry, K::Retry),
    (C::NoReply, K::Retry, K::Retry),
    (C::NotThisRefund, K::Retry, K::Retry),
];

/// Codes KakaoPay documents for `cancel`.
pub const CANCEL_CODES: [(i32, CancelAnswer); 12] = [
    (-710, C::Refused), // more than can be cancelled
    (-711, C::Refused), // more than was approved
    (-784, C::Refused), // not in a state that can be cancelled
    (-781, C::MethodRefused),
    (-785, C::Duplicate),
    (-721, C::Refused), // no such tid
    (-400, C::TurnedAway),
    (-401, C::TurnedAway),
    (-403, C::TurnedAway),
    (-429, C::TurnedAway),
    (-500, C::ServerError),
    (-503, C::ServerError),
];

/// The kind of a cancel's answer.
pub fn cancel_answer(answer: &KakaoPayReply<Cancellation>, expected: ExpectedRefund<'_>) -> CancelAnswer {
    match answer {
        KakaoPayReply::Body { body, .. } => {
            let left = body.cancel_available_amount.map(|amount| amount.total);
            let shows_it = body.tid == expected.tid
                && matches!(body.status, Status::CancelPayment | Status::PartCancelPayment)
                && left == Some(expected.balance_after());
            if shows_it { C::Refunded } else { C::NotThisRefund }
        }
        KakaoPayReply::Error { http_status, error_code, .. } => {
            match CANCEL_CODES.iter().find(|(code, _)| code == error_code) {
                // As for the approve: a refusal under a server error's status proves nothing.
                Some((_, C::Refused)) if *http_status >= 500 => C::ServerError,
                Some((_, kind)) => *kind,
                None if unavailable(*http_status, *error_code) => C::ServerError,
                None => C::Undocumented,
            }
        }
        KakaoPayReply::Unparsable { http_status } if unavailable(*http_status, 0) => C::ServerError,
        KakaoPayReply::Unparsable { .. } => C::Undocumented,
        KakaoPayReply::NotSent { .. } => C::NotSent,
        KakaoPayReply::NoReply { .. } => C::NoReply,
    }
}

/// What a cancel's answer means for the refund.
pub fn cancel_verdict(kind: CancelAnswer, send: Sent) -> CancelVerdict {
    CANCEL_VERDICTS
        .iter()
        .find(|(answer, _, _)| *answer == kind)
        .map_or(K::Retry, |(_, first, again)| if send == Sent::First { *first } else { *again })
}

/// What a lookup shows of a requested refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefundLookup {
    /// The balance left is the refund's: refunded.
    Refunded,
    /// The balance is as before the refund: not refunded (yet).
    NotRefunded,
    /// Another balance, or another payment: an operator's to look at.
    Other,
    /// No usable answer.
    Unavailable,
}

use RefundLookup as L;
use RefundLookupVerdict as R;

/// What each lookup of a refund leads to. A cancel sent again carries the
/// balance it expects, so one that is still at KakaoPay and one sent now
/// cannot both go through where KakaoPay checks it.
pub const REFUND_LOOKUP_VERDICTS: [(RefundLookup, RefundLookupVerdict); 4] =
    [(L::Refunded, R::Refunded), (L::NotRefunded, R::Send), (L::Other, R::Nothing), (L::Unavailable, R::Retry)];

/// The kind of a lookup's answer about a refund.
pub fn refund_lookup(answer: &KakaoPayReply<Order>, expected: ExpectedRefund<'_>) -> RefundLookup {
    match answer {
        KakaoPayReply::Body { body, .. } if body.tid == expected.tid => {
            match body.cancel_available_amount.map(|amount| amount.total) {
                Some(left) if left == expected.balance_after() => L::Refunded,
                Some(left) if left == expected.balance_before => L::NotRefunded,
                _ => L::Other,
            }
        }
        KakaoPayReply::Body { .. } => L::Other,
        KakaoPayReply::NotSent { .. } | KakaoPayReply::NoReply { .. } => L::Unavailable,
        KakaoPayReply::Error { http_status, error_code, .. } if unavailable(*http_status, *error_code) => {
            L::Unavailable
        }
        KakaoPayReply::Unparsable { http_status } if unavailable(*http_status, 0) => L::Unavailable,
        KakaoPayReply::Error { .. } | KakaoPayReply::Unparsable { .. } => L::Other,
    }
}

/// What a lookup of a refund leads to.
pub fn refund_lookup_verdict(kind: RefundLookup) -> RefundLookupVerdict {
    REFUND_LOOKUP_VERDICTS.iter().find(|(lookup, _)| *lookup == kind).map_or(R::Nothing, |(_, verdict)| *verdict)
}

/// How much of the payment a cancel's answer shows refunded in all, when it says.
pub fn canceled_total(answer: &KakaoPayReply<Cancellation>) -> Option<u64> {
    match answer {
        KakaoPayReply::Body { body, .. } => body.canceled_amount.map(|amount| amount.total),
        _ => None,
    }
}

/// The code a refund refused by KakaoPay keeps: its error code, or a word of
/// ours when the refusal had none.
pub fn refusal_code(answer: &KakaoPayReply<Cancellation>) -> String {
    match answer {
        KakaoPayReply::Error { error_code, .. } => format!("KAKAOPAY_{}", error_code.unsigned_abs()),
        _ => "KAKAOPAY_REFUSED".to_owned(),
    }
}
