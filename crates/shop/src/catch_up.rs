//! Catching up on start: events payonce sent while the shop was down are
//! retried by payonce, but the shop need not wait for the next try. It
//! reads payonce's feed (`GET /v1/events?after=`) from the cursor it keeps,
//! and applies each event through the same once-per-id path as a delivery,
//! so an event that comes both ways acts once. Once at start only: after
//! that, deliveries keep the shop up to date.

use crate::events::now_ms;
use crate::payonce::Payonce;
use crate::store::{Applied, Store};

/// Reads the feed to its end, a page at a time (each page applied and the
/// cursor moved past it in one transaction), and says how many events were
/// new to the shop. Stops at the first failure: what was applied stays, and
/// the rest comes by delivery, or at the next start.
pub async fn catch_up(store: &Store, payonce: &Payonce) -> Result<usize, String> {
    let mut cursor = store.feed_cursor().await.map_err(|error| error.to_string())?;
    let mut new = 0;
    loop {
        let page = payonce
            .events_after(cursor.as_deref())
            .await
            .map_err(|error| format!("reading payonce's feed: {error}"))?;
        let applied = store.take_feed_page(&page, now_ms()).await.map_err(|error| error.to_string())?;
        new += applied.iter().filter(|applied| **applied != Applied::AlreadyReceived).count();
        // An empty page, or one that does not move on, is the end for now.
        if page.events.is_empty() || cursor.as_deref() == Some(page.next_cursor.as_str()) {
            return Ok(new);
        }
        cursor = Some(page.next_cursor);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::extract::{Query, State};
    use axum::http::HeaderMap;
    use axum::routing::get;
    use axum::{Json, Router};
    use payonce_api::{CheckoutStatus, Event, EventData, EventList, EventType};
    use reqwest::Url;

    use super::*;
    use crate::store::OrderLine;

    fn event(id: &str, sequence: u64, kind: EventType, status: CheckoutStatus) -> Event {
        Event {
            id: id.into(),
            kind,
            timestamp: "2026-12-05T08:00:00.000Z".into(),
            data: EventData {
                checkout_id: "po_1".into(),
                reference: "r".into(),
                sequence,
                status,
                amount: 14_000,
                amount_refunded: 0,
                failure_code: None,
            },
        }
    }

    /// A feed of two pages (`c1` after the first), served on a real port;
    /// it keeps each `after` it was asked for, and the bearer it was given.
    async fn serve_feed() -> (Url, Arc<Mutex<Vec<String>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        async fn feed(
            State(asked): State<Arc<Mutex<Vec<String>>>>,
            headers: HeaderMap,
            Query(query): Query<Vec<(String, String)>>,
        ) -> Json<EventList> {
            let after = query.into_iter().find(|(name, _)| name == "after").map(|(_, value)| value);
            let bearer = headers.get("authorization").and_then(|value| value.to_str().ok()).unwrap_or_default();
            asked.lock().unwrap().push(format!("{} {}", after.as_deref().unwrap_or("-"), bearer));
            Json(match after.as_deref() {
                None => EventList {
                    events: vec![
                        event("evt_1", 1, EventType::Paid, CheckoutStatus::Paid),
                        event("evt_2", 2, EventType::Refunded, CheckoutStatus::Canceled),
                    ],
                    next_cursor: "c1".into(),
                },
                Some(after) => EventList { events: vec![], next_cursor: after.into() },
            })
        }
        let app = Router::new().route("/v1/events", get(feed)).with_state(asked.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (Url::parse(&format!("http://{address}")).unwrap(), asked)
    }

    #[tokio::test]
    async fn the_feed_is_read_from_the_stored_cursor_and_each_event_applied_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("shop.sqlite3")).await.unwrap();
        let line =
            OrderLine { sku: "a".into(), name_en: "A".into(), name_ko: "가".into(), quantity: 1, unit_amount: 14_000 };
        let order = store.insert_new_order(&[line]).await.unwrap();
        store.record_checkout_id(&order.id, "po_1").await.unwrap();
        let (url, asked) = serve_feed().await;
        let payonce = Payonce::new(url, "shop-key".into()).unwrap();

        assert_eq!(catch_up(&store, &payonce).await.unwrap(), 2);
        let order = store.order(&order.id).await.unwrap().unwrap();
        assert_eq!((order.status.as_str(), order.event_sequence), ("CANCELED", 2));
        assert_eq!(store.feed_cursor().await.unwrap().as_deref(), Some("c1"));
        assert_eq!(*asked.lock().unwrap(), ["- Bearer shop-key", "c1 Bearer shop-key"]);

        // The next start asks from where the last one stopped.
        assert_eq!(catch_up(&store, &payonce).await.unwrap(), 0);
        assert_eq!(asked.lock().unwrap().last().map(String::as_str), Some("c1 Bearer shop-key"));
    }

    #[tokio::test]
    async fn a_feed_that_does_not_answer_is_an_error_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("shop.sqlite3")).await.unwrap();
        // A port nothing listens on: the port of a listener just closed.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        drop(listener);
        let payonce = Payonce::new(url, "shop-key".into()).unwrap();
        assert!(catch_up(&store, &payonce).await.unwrap_err().contains("reading payonce's feed"));
        assert_eq!(store.feed_cursor().await.unwrap(), None);
    }
}
