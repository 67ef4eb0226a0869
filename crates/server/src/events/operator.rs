//! What operators do with events: read an order's events and every send of
//! each (in the order's story), send one again, or send again every event of
//! a shop that failed (once the shop's endpoint is mended). Each is audited.

use crate::app::App;
use crate::db::EventRow;
use crate::error::AppError;

/// The most failed events one list answers with.
const FAILED_LIST_LIMIT: u32 = 500;

/// Sends the event again: pending once more, due now, with a new retry
/// window. The shop may get it twice, with its one id.
pub async fn resend(app: &App, operator: &str, event_id: &str) -> Result<(), AppError> {
    let events = app.db.event(event_id).await?.ok_or(AppError::EventNotFound)?;
    if !app.db.resend_event(event_id).await? {
        return Err(AppError::InvalidRequest {
            message: "this event's shop has no events_url: it reads the feed, and nothing is sent".to_owned(),
        });
    }
    let detail = format!("sent event {event_id} ({}, was {}) again", events.kind, events.delivery);
    app.db.audit(operator, "resend_event", Some(&events.order_id), &detail).await?;
    app.db.changes().notify(&events.order_id);
    Ok(())
}

/// Sends every failed event of `shop_id` again; answers how many.
pub async fn resend_failed(app: &App, operator: &str, shop_id: &str) -> Result<u64, AppError> {
    if app.config.shops.by_id(shop_id).is_none() {
        return Err(AppError::ShopNotFound);
    }
    let resent = app.db.resend_failed(shop_id).await?;
    app.db
        .audit(operator, "resend_failed_events", None, &format!("sent {resent} failed events of shop {shop_id} again"))
        .await?;
    app.db.changes().notify("");
    Ok(resent)
}

/// Events that failed, newest first: of one shop, or of every shop.
pub async fn failed(app: &App, shop_id: Option<&str>) -> Result<Vec<EventRow>, AppError> {
    Ok(app.db.failed_events(shop_id, FAILED_LIST_LIMIT).await?)
}
