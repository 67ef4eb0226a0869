//! What a KakaoPay answer proves about the money: the only place its answers
//! get a meaning, in the same two steps as Toss's tables: the answer's kind
//! (from the `error_code`, never the HTTP status alone, or the body), then what
//! that kind means as a verdict of the settlement core.
//!
//! The differences from Toss's tables follow from KakaoPay having no
//! idempotency key: an approve is sent once, so there is no resend column; a
//! cancel sent again after a lookup is a new request, so a refusal of one sent
//! again may only mean the first went through, and settles nothing (a lookup
//! decides). Only codes KakaoPay documents are definitive; any other code says
//! nothing and a lookup decides.

mod approve;
mod cancel;
mod order;
#[cfg(test)]
mod tests;

/// Which send of a call an answer is to (the settlement rules').
pub use crate::settlement::Sent;
pub use approve::{ApproveAnswer, approve_answer, approve_verdict};
pub use cancel::{
    CancelAnswer, ExpectedRefund, RefundLookup, cancel_answer, cancel_verdict, canceled_total, refund_lookup,
    refund_lookup_verdict, refusal_code,
};
pub use order::{StatusAnswer, refunded_total, status_answer, status_verdict};

use super::KakaoPayReply;
use super::reply::unavailable;

/// The payment an attempt expects: its `tid` (from `ready`), the shop's
/// order id and the amount. Anything else proves nothing about it.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub tid: &'a str,
    pub order_id: &'a str,
    pub amount: u64,
}

impl Expected<'_> {
    fn matches(&self, tid: &str, order_id: &str, amount: u64) -> bool {
        let matches = tid == self.tid && order_id == self.order_id && amount == self.amount;
        if !matches {
            tracing::error!(
                order_id = self.order_id,
                tid = self.tid,
                amount = self.amount,
                pg_order_id = order_id,
                pg_tid = tid,
                pg_amount = amount,
                "KakaoPay answered with another payment"
            );
        }
        matches
    }
}

/// One line for logs and operators: what KakaoPay said.
pub fn describe<T>(answer: &KakaoPayReply<T>) -> String {
    match answer {
        KakaoPayReply::Body { http_status, .. } => format!("HTTP {http_status}"),
        KakaoPayReply::Error { http_status, error_code, method_result_code: Some(method), .. } => {
            format!("HTTP {http_status} {error_code} ({method})")
        }
        KakaoPayReply::Error { http_status, error_code, .. } => format!("HTTP {http_status} {error_code}"),
        KakaoPayReply::Unparsable { http_status } => format!("HTTP {http_status} with an unreadable body"),
        KakaoPayReply::NotSent { detail } => format!("not sent: {detail}"),
        KakaoPayReply::NoReply { detail, .. } => format!("no answer: {detail}"),
    }
}
