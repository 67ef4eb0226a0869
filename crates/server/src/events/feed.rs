//! The shop's feed, `GET /v1/events?after=`: its events in the order they
//! were committed, oldest first, for a shop that takes no webhooks, that
//! catches up after its own outage, or that rebuilds its view from scratch
//! (`after` absent: from its first event). The cursor is an event's place in
//! commit order; a shop stores the last `next_cursor` and asks again from it,
//! and never misses an event committed meanwhile (`db/shop_events.rs` says how).

use payonce_api::{Event, EventList};

use crate::app::App;
use crate::error::AppError;
use crate::shops::Shop;

/// Events on a page when the shop does not say.
const PAGE_DEFAULT: u32 = 100;
/// The most a shop may ask for at once.
pub const PAGE_MOST: u32 = 500;

/// A page of the shop's events after `after` (a `next_cursor`).
pub async fn page(app: &App, shop: &Shop, after: Option<&str>, limit: Option<u32>) -> Result<EventList, AppError> {
    let limit = limit.unwrap_or(PAGE_DEFAULT);
    if !(1..=PAGE_MOST).contains(&limit) {
        return Err(AppError::InvalidRequest { message: format!("limit must be 1 to {PAGE_MOST}") });
    }
    let after = match after {
        None => 0,
        Some(cursor) => cursor.parse::<i64>().ok().filter(|position| *position >= 0).ok_or_else(|| {
            AppError::InvalidRequest { message: "after must be a next_cursor this feed gave".to_owned() }
        })?,
    };
    let rows = app.db.events_after(&shop.id, after, limit).await?;
    let next_cursor = rows.last().map_or(after, |(position, _)| *position).to_string();
    let events = rows
        .into_iter()
        .map(|(_, body)| serde_json::from_str::<Event>(&body))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| AppError::Internal(format!("a stored event does not read back: {error}")))?;
    Ok(EventList { events, next_cursor })
}
