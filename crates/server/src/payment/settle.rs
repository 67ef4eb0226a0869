//! Applying a transition: commit it, then log and count it. Nothing reports an
//! outcome that is not committed.

use payonce_api::{Failure, Order, OrderStatus};

use super::can_transition;
use crate::db::Transition;
use crate::error::AppError;
use crate::metrics;
use crate::state::AppState;

impl Transition {
    pub fn paid() -> Self {
        Self { to: OrderStatus::Paid, failure: None, unknown_reason: None }
    }

    pub fn failed(failure: Failure) -> Self {
        Self { to: OrderStatus::Failed, failure: Some(failure), unknown_reason: None }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Self { to: OrderStatus::Unknown, failure: None, unknown_reason: Some(reason.into()) }
    }
}

/// Moves the order's attempt from whichever of `from` it is in, and returns the order
/// as stored afterwards. If another worker moved it elsewhere first, the stored order
/// wins and nothing is logged twice.
pub async fn apply(
    state: &AppState,
    order_id: &str,
    idempotency_key: &str,
    from: &[OrderStatus],
    transition: Transition,
) -> Result<Order, AppError> {
    for &status in from {
        debug_assert!(can_transition(status, transition.to), "{status:?} -> {:?}", transition.to);
        if state.db.transition(order_id, status, &transition).await? {
            log_transition(order_id, idempotency_key, status, &transition);
            return state.db.order(order_id).await?.ok_or(AppError::OrderNotFound);
        }
    }
    tracing::debug!(order_id, idempotency_key, "transition already applied elsewhere");
    state.db.order(order_id).await?.ok_or(AppError::OrderNotFound)
}

/// One line per payment transition, with what operators search by.
pub fn log_transition(order_id: &str, idempotency_key: &str, from: OrderStatus, transition: &Transition) {
    metrics::order_transition(transition.to);
    let code = transition.failure.as_ref().map(|failure| failure.code.as_str());
    tracing::info!(
        order_id,
        idempotency_key,
        from = from.as_str(),
        to = transition.to.as_str(),
        code,
        reason = transition.unknown_reason.as_deref(),
        "payment transition"
    );
}
