//! Orders: creating them from a cart, and showing them to their customer.

use std::net::IpAddr;
use std::time::Duration;

use payonce_api::{CreateOrderRequest, CreatedOrder, Order};
use uuid::Uuid;

use crate::app::App;
use crate::catalog;
use crate::customer::Customer;
use crate::db::{NewOrder, now_ms};
use crate::error::AppError;
use crate::metrics;

/// How far back a paid order makes the page warn about a duplicate (an order
/// still being paid warns however old it is).
pub const RECENT_WINDOW: Duration = Duration::from_secs(10 * 60);
/// Most orders listed.
const LIST_LIMIT: u32 = 100;

/// Prices the cart, stores the order, and says where to pay for it.
pub async fn create(app: &App, customer: &Customer, request: &CreateOrderRequest) -> Result<CreatedOrder, AppError> {
    let cart = catalog::price(&app.config.catalog, &request.items)?;
    let stock = app.config.catalog.stock_lines(&cart.items);
    // Told now rather than at the payment: it is decided again, for good, when
    // the payment is stored (units are held from then until it fails).
    for line in &stock {
        if app.db.units_held(&line.sku).await? + u64::from(line.quantity) > u64::from(line.stock) {
            return Err(AppError::OutOfStock { sku: line.sku.clone() });
        }
    }
    let new_order = NewOrder {
        // Toss accepts 6-64 characters of [A-Za-z0-9_-]: the prefix's at most 32
        // and 32 here. Time-ordered (v7), so that orders made in the same
        // millisecond still list newest first.
        order_id: format!("{}{}", app.config.order_id_prefix, Uuid::now_v7().simple()),
        customer_id: customer.0.clone(),
        amount: cart.amount,
        order_name: cart.order_name,
        items: cart.items,
        created_at_ms: now_ms(),
        stock,
    };
    app.db.insert_order(&new_order).await?;
    let order = app.db.order(&new_order.order_id).await?.ok_or(AppError::OrderNotFound)?;
    let public = app.config.public_base_url();
    tracing::info!(order_id = order.order_id, amount = order.amount, "order created");
    Ok(CreatedOrder { order, success_url: format!("{public}/pay/success"), fail_url: format!("{public}/pay/fail") })
}

pub async fn list(app: &App, customer: &Customer) -> Result<Vec<Order>, AppError> {
    Ok(app.db.customer_orders(&customer.0, LIST_LIMIT).await?)
}

pub async fn show(app: &App, customer: &Customer, order_id: &str) -> Result<Order, AppError> {
    app.db.customer_order(&customer.0, order_id).await?.ok_or(AppError::OrderNotFound)
}

/// The order once its status changes, or as it is after `wait`, whichever comes
/// first; at once if it is final. The wait holds no database connection (each
/// read takes one and gives it back) and no thread. When the server, this
/// client or this customer already holds as many waits as allowed, or the server
/// is stopping, the order is answered as it is: the page asks again anyway.
pub async fn show_after_change(
    app: &App,
    client: IpAddr,
    customer: &Customer,
    order_id: &str,
    wait: Duration,
) -> Result<Order, AppError> {
    if wait.is_zero() {
        return show(app, customer, order_id).await;
    }
    let _place = match app.waiting_places.take(client, &customer.0) {
        Ok(place) => place,
        Err(no_place) => {
            metrics::order_wait(no_place.label());
            return show(app, customer, order_id).await;
        }
    };
    // Subscribed before reading, so a change committed in between still wakes it.
    let mut changes = app.db.changes().subscribe(order_id);
    let seen = show(app, customer, order_id).await?;
    if seen.status.is_final() || app.stopping.is_cancelled() {
        return Ok(seen);
    }
    let waiting = Waiting::start();
    let outcome = tokio::select! {
        () = changes.changed() => "changed",
        () = tokio::time::sleep(wait) => "timeout",
        () = app.stopping.cancelled() => "stopping",
    };
    drop(waiting);
    metrics::order_wait(outcome);
    drop(changes);
    show(app, customer, order_id).await
}

/// Counts a check among the waiting ones for as long as it waits, also when
/// its client hangs up mid-wait (the request's future is then dropped there).
struct Waiting;

impl Waiting {
    fn start() -> Self {
        metrics::order_waiting(1.0);
        Self
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        metrics::order_waiting(-1.0);
    }
}

/// The customer's newest order being paid (however old) or paid in the last ten minutes.
pub async fn recent_payment(app: &App, customer: &Customer) -> Result<Option<Order>, AppError> {
    let since = now_ms() - i64::try_from(RECENT_WINDOW.as_millis()).unwrap_or(i64::MAX);
    Ok(app.db.recent_payment(&customer.0, since).await?)
}
