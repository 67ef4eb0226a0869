//! Closing an order that never got a confirm. The page calls this when its
//! checking window ends and the server, when last asked, still had no confirm
//! for the order: only the server may then say "not charged", and only if it
//! is true at that moment.

use payonce_api::{ErrorCode, Failure, Order, OrderStatus};

use super::settle::log_attempt_stored;
use crate::app::App;
use crate::customer::Customer;
use crate::db::Actor;
use crate::error::AppError;

/// Closes the order as FAILED `CONFIRM_NOT_RECEIVED` if it has no attempt, and
/// returns the order as stored: closed, or in whatever state its attempt is
/// (a confirm that arrived first wins; one that arrives later gets
/// `ORDER_ALREADY_FAILED` and never reaches the PG).
pub async fn abandon(app: &App, customer: &Customer, order_id: &str) -> Result<Order, AppError> {
    let order = app.db.customer_order(&customer.0, order_id).await?.ok_or(AppError::OrderNotFound)?;
    if order.status == OrderStatus::Created {
        let failure = Failure {
            code: ErrorCode::ConfirmNotReceived.as_str().to_owned(),
            message: "The shop did not receive your payment confirmation, so the payment was not made. \
                      You have not been charged; please try again."
                .to_owned(),
        };
        if app.db.close_unconfirmed(order_id, order.amount, &failure, Actor::Abandon).await? {
            log_attempt_stored(order_id, "-", OrderStatus::Failed, Some(&failure));
        }
    }
    app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)
}
