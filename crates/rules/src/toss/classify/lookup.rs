//! What a lookup of the payment shows, what that settles for an attempt, and
//! what a line of the PG's transaction listing records.

use super::Expected;
use crate::settlement::StatusVerdict;
use crate::toss::TossReply;
use crate::toss::wire::PaymentStatus;

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
    (S::NotThisPayment, Q::OtherPayment),
    (S::Unexpected, Q::Nothing),
    (S::Unavailable, Q::Retry),
];

/// The kind of a lookup answer.
pub fn status_answer(answer: &TossReply, expected: Expected<'_>) -> StatusAnswer {
    match answer {
        TossReply::Payment { payment, .. } if expected.matches(payment) => S::Payment(payment.status),
        TossReply::Payment { .. } => S::NotThisPayment,
        TossReply::NotSent { .. } | TossReply::NoReply { .. } => S::Unavailable,
        TossReply::Error { http_status, .. } | TossReply::Unparsable { http_status }
            if *http_status == 429 || *http_status >= 500 =>
        {
            S::Unavailable
        }
        TossReply::Error { http_status: 404, code, .. } if code == "NOT_FOUND_PAYMENT" || code == "NOT_FOUND" => {
            S::NotFound
        }
        TossReply::Error { .. } | TossReply::Unparsable { .. } => S::Unexpected,
    }
}

/// What a lookup by the order's id shows of this order's payment, whatever its
/// paymentKey: a payment of another order or another amount proves nothing.
pub fn order_status_answer(answer: &TossReply, order_id: &str, amount: u64) -> StatusAnswer {
    match answer {
        TossReply::Payment { payment, .. } if payment.order_id == order_id && payment.total_amount == amount => {
            S::Payment(payment.status)
        }
        TossReply::Payment { .. } => S::NotThisPayment,
        other => status_answer(other, Expected { payment_key: "", order_id, amount }),
    }
}

/// What a lookup means for an unsettled attempt.
pub fn status_verdict(answer: StatusAnswer) -> StatusVerdict {
    STATUS_VERDICTS.iter().find(|(kind, _)| *kind == answer).map_or(Q::Nothing, |(_, verdict)| *verdict)
}

/// What one line of the PG's transaction listing records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionKind {
    /// A payment approved (charged).
    Approval,
    /// Part or all of a payment cancelled (refunded).
    Cancel,
    /// Anything else (waiting for a deposit, aborted, expired): no money moved.
    Other,
}

/// What a listed transaction records, by its status.
pub fn transaction_kind(status: PaymentStatus) -> TransactionKind {
    match status {
        P::Done => TransactionKind::Approval,
        P::Canceled | P::PartialCanceled => TransactionKind::Cancel,
        _ => TransactionKind::Other,
    }
}
