//! What a PG answer proves about the money: the only place PG answers get a
//! meaning. Two steps, each a literal table:
//!
//! 1. the answer's *kind* ([`ConfirmAnswer`] for a confirm, [`StatusAnswer`] for
//!    a lookup of the payment), from the HTTP status, the documented code or
//!    the Payment's status;
//! 2. what that kind means for the attempt: `CONFIRM_VERDICTS` (`confirm.rs`) puts the
//!    customer's first call and recovery's resend side by side, and
//!    `STATUS_VERDICTS` (`lookup.rs`) says what a lookup settles.
//!
//! Refunds have their own two tables: `CANCEL_VERDICTS` for a cancel's
//! answer, and `REFUND_LOOKUP_VERDICTS` (both in `cancel.rs`) for what a lookup shows of a refund.
//! A cancel, unlike a confirm, is sent again until it goes out: only a
//! documented refusal ends it.
//!
//! Only codes Toss documents for these APIs are definitive. Any other code,
//! whatever it looks like, says nothing: the outcome stays unknown and a
//! lookup decides.

mod cancel;
mod confirm;
mod lookup;
#[cfg(test)]
mod tests;

pub use cancel::{
    CancelAnswer, ExpectedRefund, OrphanCancel, RefundLookup, cancel_answer, cancel_verdict, orphan_cancel,
    refund_lookup, refund_lookup_verdict, refunded_only_in_full, refunded_total, refusal_code,
};
pub use confirm::{ConfirmAnswer, confirm_answer, failure_of, first_call_verdict, resend_verdict};
pub use lookup::{StatusAnswer, TransactionKind, order_status_answer, status_answer, status_verdict, transaction_kind};

use super::TossReply;
use super::wire::Payment;

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

/// One line for logs and operators: what the PG said.
pub fn describe(answer: &TossReply) -> String {
    match answer {
        TossReply::Payment { http_status, payment } => {
            format!("HTTP {http_status} payment {} {:?}", payment.payment_key, payment.status)
        }
        TossReply::Error { http_status, code, .. } => format!("HTTP {http_status} {code}"),
        TossReply::Unparsable { http_status } => format!("HTTP {http_status} with an unreadable body"),
        TossReply::NotSent { detail } => format!("not sent: {detail}"),
        TossReply::NoReply { detail, .. } => format!("no answer: {detail}"),
    }
}
