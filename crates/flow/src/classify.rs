//! What the page may conclude from the confirm POST, from a check of the order
//! and from the server's answer to closing it. Only an answer that is our API's
//! final outcome is definitive; every other answer means "not known yet", and
//! the page checks instead of resending. The words shown for a failure are the
//! server's: the page never adds a claim about charges of its own.

use payonce_api::{ApiErrorBody, ErrorCode, Failure, Order, OrderStatus};

/// How the confirm POST ended, as the browser saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmReply {
    /// A response arrived: its status and raw body.
    Response { status: u16, body: String },
    /// No response: a network error, or our own abort at `confirm_wait`.
    NoResponse { detail: String },
}

/// A definitive outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Paid {
        amount: u64,
    },
    /// Charged, then cancelled in full and refunded, or (`partial`) partly refunded.
    Refunded {
        amount: u64,
        partial: bool,
    },
    Failed(Failure),
    /// The server has no such order for this browser: the success link was opened
    /// in a browser other than the one that placed the order. Says nothing about
    /// the payment itself.
    Elsewhere,
}

/// The definitive outcome in a confirm reply, or `None` when it is ambiguous.
pub fn classify_confirm(reply: &ConfirmReply) -> Option<Verdict> {
    let ConfirmReply::Response { status, body } = reply else {
        return None;
    };
    match status {
        200..=299 => serde_json::from_str::<Order>(body).ok().and_then(|order| final_verdict(&order)),
        400..=499 => {
            let error: ApiErrorBody = serde_json::from_str(body).ok()?;
            if let Some(order) = &error.order {
                // ORDER_ALREADY_PAID and friends carry the truth about the order.
                return final_verdict(order);
            }
            if *status == 408 || *status == 429 || error.code == ErrorCode::PaymentInProgress {
                return None;
            }
            if error.code == ErrorCode::OrderNotFound {
                return Some(Verdict::Elsewhere);
            }
            // The server refused the request; its message says what that means.
            Some(Verdict::Failed(Failure { code: error.code, message: error.message }))
        }
        _ => None,
    }
}

/// What one check of the order learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// The order is final, or not this browser's to know.
    Settled(Verdict),
    /// The server has the confirm and is still settling it.
    InProgress,
    /// The order exists but the server never received a confirm for it.
    NotReceived,
    /// The check itself failed (network, server error, timeout).
    NothingLearned,
    /// The server asked the page to check less often (429): nothing learned, and
    /// the next check no sooner than it asked. Not a check of the payment at all.
    Throttled { retry_after_ms: u64 },
}

/// What the server's current view of the order says about its payment. Used for
/// checks and for the answer to closing the order alike.
pub fn classify_check(order: &Order) -> Check {
    match (order.status, final_verdict(order)) {
        (_, Some(verdict)) => Check::Settled(verdict),
        (OrderStatus::Created, None) => Check::NotReceived,
        (
            OrderStatus::Pending
            | OrderStatus::Unknown
            | OrderStatus::Paid
            | OrderStatus::Failed
            | OrderStatus::Canceled
            | OrderStatus::PartiallyRefunded
            | OrderStatus::CancelRequested,
            None,
        ) => Check::InProgress,
    }
}

/// `Retry-After` in seconds, as the server sends it (an HTTP date is not read: none is sent).
pub fn retry_after_ms(value: &str) -> Option<u64> {
    value.trim().parse::<u64>().ok().map(|seconds| seconds.saturating_mul(1_000))
}

/// What a refused check of the order learned: only "no such order for this
/// customer" is an answer; a 429 asks for a pause (a second when it does not
/// say how long); any other refusal learned nothing.
pub fn classify_refused_check(status: u16, code: Option<&str>, retry_after_ms: Option<u64>) -> Check {
    match code {
        Some(code) if *code == ErrorCode::OrderNotFound => Check::Settled(Verdict::Elsewhere),
        _ if status == 429 => Check::Throttled { retry_after_ms: retry_after_ms.unwrap_or(1_000) },
        _ => Check::NothingLearned,
    }
}

fn final_verdict(order: &Order) -> Option<Verdict> {
    let amount = order.amount;
    match order.status {
        // Charged; the refund asked for since is the order page's to show.
        OrderStatus::Paid | OrderStatus::CancelRequested => Some(Verdict::Paid { amount }),
        OrderStatus::Canceled => Some(Verdict::Refunded { amount, partial: false }),
        OrderStatus::PartiallyRefunded => Some(Verdict::Refunded { amount, partial: true }),
        // FAILED is the server's own word that nothing was charged.
        OrderStatus::Failed => Some(Verdict::Failed(order.failure.clone().unwrap_or_else(|| Failure {
            code: "PAYMENT_FAILED".to_owned(),
            message: "The payment failed. You have not been charged.".to_owned(),
        }))),
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown => None,
    }
}
