//! Toss's webhooks: a hint, never the truth. An event naming an order whose
//! payment (or refund) is still open makes its job due at once, so the job
//! engine looks the payment up, under the PG limit, the breaker and the retry
//! budget, and settles it through the same rules as recovery. Nothing in the
//! event itself is believed: a forged one only brings a lookup forward.

use payonce_rules::toss::webhook::{WebhookEvent, order_to_look_up};

use crate::app::App;
use crate::error::AppError;
use crate::metrics;

/// What an event came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hinted {
    /// An open job of the order is due now: the job engine looks at once.
    LookingUp,
    /// Nothing to do: not a payment's event, no such order, already settled, or already due.
    Nothing,
}

impl Hinted {
    fn label(self) -> &'static str {
        match self {
            Hinted::LookingUp => "looking_up",
            Hinted::Nothing => "nothing",
        }
    }
}

pub async fn received(app: &App, event: &WebhookEvent) -> Result<Hinted, AppError> {
    let hinted = match order_to_look_up(event) {
        Some(order_id) if app.db.due_now_for_order(order_id).await? => {
            app.recovery_wake.notify_one();
            tracing::info!(order_id, event = event.event_type, "webhook: looking the payment up now");
            Hinted::LookingUp
        }
        Some(_) | None => Hinted::Nothing,
    };
    metrics::webhook_received(hinted.label());
    Ok(hinted)
}
