//! What the page may conclude from the confirm POST and from a check of the
//! order. Only an answer that is our API's final outcome is definitive; every
//! other answer means "not known yet", and the page checks instead of resending.

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
    Paid { amount: u64 },
    Failed(Failure),
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
            // The server refused the request before calling the PG: nothing was charged.
            Some(Verdict::Failed(Failure {
                code: error.code,
                message: format!("{}. You have not been charged.", sentence(&error.message)),
            }))
        }
        _ => None,
    }
}

/// What one check of the order learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// The order is paid or failed.
    Settled(Verdict),
    /// The server has the confirm and is still settling it.
    InProgress,
    /// The order exists but the server never received a confirm for it.
    NotReceived,
    /// The check itself failed (network, server error, timeout).
    NothingLearned,
}

/// What a check of the order says about its payment.
pub fn classify_poll(order: &Order) -> Check {
    match (order.status, final_verdict(order)) {
        (_, Some(verdict)) => Check::Settled(verdict),
        (OrderStatus::Created, None) => Check::NotReceived,
        (
            OrderStatus::Pending
            | OrderStatus::Unknown
            | OrderStatus::Paid
            | OrderStatus::Failed
            | OrderStatus::Canceled
            | OrderStatus::PartiallyRefunded,
            None,
        ) => Check::InProgress,
    }
}

/// "the amount ..." -> "The amount ...", without a trailing full stop.
fn sentence(message: &str) -> String {
    let message = message.trim().trim_end_matches('.');
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "The payment was refused".to_owned(),
    }
}

fn final_verdict(order: &Order) -> Option<Verdict> {
    match order.status {
        // Charged; what was refunded since is the order page's to tell.
        OrderStatus::Paid | OrderStatus::Canceled | OrderStatus::PartiallyRefunded => {
            Some(Verdict::Paid { amount: order.amount })
        }
        OrderStatus::Failed => Some(Verdict::Failed(order.failure.clone().unwrap_or_else(|| Failure {
            code: "PAYMENT_FAILED".to_owned(),
            message: "The payment failed. You have not been charged.".to_owned(),
        }))),
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown => None,
    }
}
