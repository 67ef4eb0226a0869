//! Closing checkouts whose time ran out before any payment was stored: FAILED
//! `CHECKOUT_EXPIRED`, nothing charged. The close is the same atomic insert
//! the page's "close the order" uses, so a confirm stored first wins (and is
//! settled as any payment is), and one that comes after is refused before it
//! reaches the PG. A sweep closes them as their time comes; reading a
//! checkout closes it too if the sweep has not yet, so nobody is ever shown
//! a checkout open past its time.

use std::time::Duration;

use payonce_api::{ErrorCode, Failure};
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::db::{Actor, CheckoutRow, now_ms};

/// How often the sweep looks.
const EVERY: Duration = Duration::from_secs(1);
/// Most checkouts one look closes.
const MOST_PER_LOOK: u32 = 200;

/// The failure an expired checkout's order is closed with.
pub fn expired_failure() -> Failure {
    Failure {
        code: ErrorCode::CheckoutExpired.as_str().to_owned(),
        message: "The checkout's time ran out before it was paid. You have not been charged.".to_owned(),
    }
}

/// Closes the checkout's order if its time ran out with no payment stored.
pub async fn close_if_due(app: &App, row: &CheckoutRow) -> Result<(), sqlx::Error> {
    if now_ms() < row.expires_at_ms {
        return Ok(());
    }
    close(app, &row.order_id).await
}

async fn close(app: &App, order_id: &str) -> Result<(), sqlx::Error> {
    let Some(order) = app.db.order(order_id).await? else { return Ok(()) };
    if order.status != payonce_api::OrderStatus::Created {
        return Ok(());
    }
    if app.db.close_unconfirmed(order_id, order.amount, &expired_failure(), Actor::Expiry).await? {
        tracing::info!(order_id, "checkout expired unpaid; closed");
        crate::metrics::checkout_expired();
    }
    Ok(())
}

/// Closes checkouts as their time runs out, until `stopping`. Every server
/// of a cluster sweeps; a close is one insert that only one of them makes.
pub async fn run(app: App, stopping: CancellationToken) {
    // Everything that ran out before this server started is looked at once.
    let mut swept_until_ms = 0;
    loop {
        let now = now_ms();
        match sweep(&app, swept_until_ms, now).await {
            Ok(()) => swept_until_ms = now,
            // Looked at again next time: the watermark stays where it was.
            Err(error) => tracing::warn!(%error, "expiry sweep failed; it runs again"),
        }
        tokio::select! {
            () = tokio::time::sleep(EVERY) => {}
            () = stopping.cancelled() => return,
        }
    }
}

async fn sweep(app: &App, after_ms: i64, until_ms: i64) -> Result<(), sqlx::Error> {
    let mut after = after_ms;
    loop {
        let due = app.db.expired_checkouts(after, until_ms, MOST_PER_LOOK).await?;
        for (order_id, _) in &due {
            close(app, order_id).await?;
        }
        match due.last() {
            Some((_, expires_at_ms)) if due.len() == MOST_PER_LOOK as usize => after = *expires_at_ms - 1,
            _ => return Ok(()),
        }
    }
}
