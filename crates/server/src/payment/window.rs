//! The PG's window for an order, at a PG that asks for the payment to be
//! prepared before the customer opens it (KakaoPay's ready). Preparing it is
//! the PG's adapter's; what every PG asks of the order is here: its payment
//! has not begun. Nothing is charged until the customer's confirm, with what
//! the window gives, is approved.

use payonce_api::{OrderStatus, Pg, PgWindow};

use super::confirm::already_begun;
use crate::app::App;
use crate::customer::Customer;
use crate::error::AppError;
use crate::pg::adapters::WindowFor;

/// Where `pg`'s window for the customer's order is, prepared now or earlier.
pub async fn prepare(app: &App, customer: &Customer, order_id: &str, pg: Pg) -> Result<PgWindow, AppError> {
    let adapter = app.pgs.of(pg)?;
    let order = app.db.customer_order(&customer.0, order_id).await?.ok_or(AppError::OrderNotFound)?;
    // CREATED is an order without an attempt: no confirm was ever stored for it.
    if order.status != OrderStatus::Created {
        // An order whose payment is under way or over cannot be prepared again.
        return Err(already_begun(order));
    }
    let public_base_url = app.config.public_base_url();
    let window_for = WindowFor {
        order_id,
        customer_id: &customer.0,
        order_name: &order.order_name,
        amount: order.amount,
        public_base_url: &public_base_url,
    };
    adapter.prepare_window(&app.db, window_for).await
}
