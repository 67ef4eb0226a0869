//! Applying a transition: commit it, then log and count it. Nothing reports an
//! outcome that is not committed, and a transition that did not apply (someone
//! settled the attempt first) is not reported as applied.

use payonce_api::{Failure, Order, OrderStatus};

use crate::app::App;
use crate::db::{Lease, Writer, now_ms};
use crate::error::AppError;
use crate::metrics;
use payonce_rules::settlement::{ConfirmVerdict, Moved, Transition};

/// The order as stored after a transition was tried, and whether this call moved it.
#[derive(Debug)]
pub struct Applied {
    pub order: Order,
    pub moved: bool,
}

/// Moves the order's attempt from whichever of `from` it is in (the lifecycle
/// skips the moves it forbids, such as UNKNOWN to UNKNOWN), and returns the
/// order as stored afterwards. If another worker moved it elsewhere first, or
/// took over the lease a failure or an unknown outcome needs, the stored order
/// wins and nothing is logged.
pub async fn apply(
    app: &App,
    writer: Writer<'_>,
    order_id: &str,
    idempotency_key: &str,
    from: &[OrderStatus],
    transition: Transition,
) -> Result<Applied, AppError> {
    // An unsettled attempt is looked at again after a first short wait; recovery
    // backs off from there.
    let lease = Lease::Release { next_attempt_at_ms: now_ms() + app.timings().first_check_delay_ms() };
    for &status in from {
        if let Some(moved) = app.db.transition(order_id, status, &transition, lease, writer).await? {
            log_transition(order_id, idempotency_key, moved, &transition);
            let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
            return Ok(Applied { order, moved: true });
        }
    }
    tracing::debug!(order_id, idempotency_key, ?transition, "transition not applied: settled elsewhere");
    let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
    Ok(Applied { order, moved: false })
}

/// One line when an attempt is first stored (PENDING, or FAILED without a call).
pub fn log_attempt_stored(order_id: &str, idempotency_key: &str, status: OrderStatus, failure: Option<&Failure>) {
    metrics::order_transition(status);
    let code = failure.map(|failure| failure.code.as_str());
    tracing::info!(order_id, idempotency_key, from = "CREATED", to = status.as_str(), code, "payment transition");
}

/// One line per payment transition, with what operators search by.
pub fn log_transition(order_id: &str, idempotency_key: &str, moved: Moved, transition: &Transition) {
    metrics::order_transition(moved.to);
    tracing::info!(
        order_id,
        idempotency_key,
        from = moved.from.as_str(),
        to = moved.to.as_str(),
        code = transition.code(),
        reason = transition.unknown_reason(),
        "payment transition"
    );
}

/// The metric's label for a first confirm's verdict, at any PG.
pub fn first_call_label(verdict: ConfirmVerdict) -> &'static str {
    match verdict {
        ConfirmVerdict::Paid => "paid",
        ConfirmVerdict::Failed => "failed",
        ConfirmVerdict::Unreachable => "unreachable",
        ConfirmVerdict::Unknown | ConfirmVerdict::Nothing => "unknown",
    }
}
