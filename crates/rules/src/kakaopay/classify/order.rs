//! What a lookup (`order`, by `tid`) shows, and what that settles for an
//! attempt. There is no lookup by the shop's order id: an answer about
//! another payment settles nothing, and is an operator's to look at.

use super::{Expected, unavailable};
use crate::kakaopay::KakaoPayReply;
use crate::kakaopay::wire::{Order, Status};
use crate::settlement::StatusVerdict;

/// What a lookup of the payment showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusAnswer {
    /// The attempt's payment, in this status.
    Payment(Status),
    /// -721: KakaoPay has no payment under this tid.
    NotFound,
    /// A payment, but not this attempt's.
    NotThisPayment,
    /// No usable answer: not sent, no answer, load, 5xx, maintenance.
    Unavailable,
    /// Any other error, or an unreadable body.
    Unexpected,
}

use StatusAnswer as S;
use StatusVerdict as Q;

/// What each lookup settles. Every status before the approval is "not
/// confirmed": at KakaoPay only the shop's approve charges, so the age rule
/// settles it FAILED once the payment's 15 minutes are over.
pub const STATUS_VERDICTS: [(StatusAnswer, StatusVerdict); 18] = [
    (S::Payment(Status::SuccessPayment), Q::Paid),
    (S::Payment(Status::PartCancelPayment), Q::PartiallyRefunded),
    (S::Payment(Status::CancelPayment), Q::Canceled),
    (S::Payment(Status::FailAuthPassword), Q::Failed),
    (S::Payment(Status::QuitPayment), Q::Failed),
    (S::Payment(Status::FailPayment), Q::Failed),
    (S::Payment(Status::Ready), Q::NotConfirmed),
    (S::Payment(Status::SendTms), Q::NotConfirmed),
    (S::Payment(Status::OpenPayment), Q::NotConfirmed),
    (S::Payment(Status::SelectMethod), Q::NotConfirmed),
    (S::Payment(Status::ArsWaiting), Q::NotConfirmed),
    (S::Payment(Status::AuthPassword), Q::NotConfirmed),
    (S::NotFound, Q::NotConfirmed),
    (S::Payment(Status::IssuedSid), Q::Nothing),
    (S::Payment(Status::Unrecognised), Q::Nothing),
    (S::NotThisPayment, Q::Nothing),
    (S::Unexpected, Q::Nothing),
    (S::Unavailable, Q::Retry),
];

/// KakaoPay's code for a tid it does not have.
const NO_SUCH_TID: i32 = -721;

/// The kind of a lookup's answer.
pub fn status_answer(answer: &KakaoPayReply<Order>, expected: Expected<'_>) -> StatusAnswer {
    match answer {
        KakaoPayReply::Body { body, .. } if expected.matches(&body.tid, &body.partner_order_id, body.amount.total) => {
            S::Payment(body.status)
        }
        KakaoPayReply::Body { .. } => S::NotThisPayment,
        KakaoPayReply::NotSent { .. } | KakaoPayReply::NoReply { .. } => S::Unavailable,
        KakaoPayReply::Error { http_status, error_code, .. } if unavailable(*http_status, *error_code) => {
            S::Unavailable
        }
        KakaoPayReply::Unparsable { http_status } if unavailable(*http_status, 0) => S::Unavailable,
        KakaoPayReply::Error { error_code: NO_SUCH_TID, .. } => S::NotFound,
        KakaoPayReply::Error { .. } | KakaoPayReply::Unparsable { .. } => S::Unexpected,
    }
}

/// What a lookup settles.
pub fn status_verdict(kind: StatusAnswer) -> StatusVerdict {
    STATUS_VERDICTS.iter().find(|(answer, _)| *answer == kind).map_or(Q::Nothing, |(_, verdict)| *verdict)
}

/// How much of the payment KakaoPay shows cancelled, when it says.
pub fn refunded_total(answer: &KakaoPayReply<Order>) -> Option<u64> {
    match answer {
        KakaoPayReply::Body { body, .. } => body.canceled_amount.map(|amount| amount.total),
        _ => None,
    }
}
