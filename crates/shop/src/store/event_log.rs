//! What payonce told the shop, and what the shop did with it: every event
//! acted on once (`received_events`), every delivery as it came
//! (`deliveries`), and where the shop stands in payonce's feed
//! (`feed_cursor`).
//!
//! An event is applied to its order in the transaction that records its id,
//! so a delivery sent again (payonce retries; a connection reset after the
//! shop took it) finds the id and changes nothing, and a crash leaves
//! either both or neither. An order takes an event's status only when the
//! event's `sequence` is higher than the one it holds: a late, older event
//! never moves it back.

use payonce_api::{CheckoutStatus, Event, EventList, EventType};
use serde::Serialize;
use sqlx::{Row, SqliteConnection};

use super::{Store, StoreError, to_sql};
use crate::status::{PaymentState, PaymentStatus};

pub(super) const SCHEMA: [&str; 3] = [
    // One row per event id: its presence is what makes an event act once.
    "CREATE TABLE IF NOT EXISTS received_events (
        id TEXT PRIMARY KEY NOT NULL,
        type TEXT NOT NULL,
        checkout_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        received_at_ms INTEGER NOT NULL
    )",
    // One row per verified delivery, duplicates included, as it came: with
    // the headers and the body as sent, the signature can be checked again
    // by anyone holding the secret.
    "CREATE TABLE IF NOT EXISTS deliveries (
        number INTEGER PRIMARY KEY AUTOINCREMENT,
        received_at_ms INTEGER NOT NULL,
        webhook_id TEXT NOT NULL,
        webhook_timestamp TEXT NOT NULL,
        webhook_signature TEXT NOT NULL,
        body TEXT NOT NULL
    )",
    // A single row: the `after` to give the feed next.
    "CREATE TABLE IF NOT EXISTS feed_cursor (
        only_row INTEGER PRIMARY KEY NOT NULL CHECK (only_row = 1),
        after TEXT NOT NULL
    )",
];

/// A verified delivery, exactly as it came: its Standard Webhooks headers
/// and its body (text, as a signed body always is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    pub webhook_id: String,
    pub webhook_timestamp: String,
    pub webhook_signature: String,
    pub body: String,
    pub received_at_ms: i64,
}

/// What an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Seen for the first time, and its order now holds what it says.
    ToOrder,
    /// Seen for the first time, but its order holds a later event already
    /// (or an equal one): the order was left as it was.
    Outdated,
    /// Seen for the first time, but no order of this shop is its checkout's
    /// (a checkout made by other means than this shop's pages).
    NoOrder,
    /// Seen before: nothing was done again.
    AlreadyReceived,
}

impl Applied {
    pub fn as_str(self) -> &'static str {
        match self {
            Applied::ToOrder => "applied",
            Applied::Outdated => "outdated",
            Applied::NoOrder => "no_order",
            Applied::AlreadyReceived => "already_received",
        }
    }
}

impl Store {
    /// Logs `delivery` and applies its `event`, once per event id, in one
    /// transaction: both are kept, or neither (and payonce sends it again).
    pub async fn receive_event(&self, delivery: &Delivery, event: &Event) -> Result<Applied, StoreError> {
        let mut transaction = self.pool.begin().await?;
        // A write first, so the transaction holds SQLite's write lock from
        // its start and waits its turn, instead of failing to upgrade from a read.
        insert_delivery(&mut transaction, delivery).await?;
        let applied = apply_once(&mut transaction, event, delivery.received_at_ms).await?;
        transaction.commit().await?;
        Ok(applied)
    }

    /// Logs a verified delivery whose body is no event the shop can read:
    /// kept to be looked at, as it came; nothing is applied.
    pub async fn log_delivery(&self, delivery: &Delivery) -> Result<(), StoreError> {
        insert_delivery(&mut *self.pool.acquire().await?, delivery).await
    }

    /// Every delivery, in the order received.
    pub async fn deliveries(&self) -> Result<Vec<Delivery>, StoreError> {
        let rows = sqlx::query(
            "SELECT webhook_id, webhook_timestamp, webhook_signature, body, received_at_ms
             FROM deliveries ORDER BY number",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Delivery {
                    webhook_id: row.try_get("webhook_id")?,
                    webhook_timestamp: row.try_get("webhook_timestamp")?,
                    webhook_signature: row.try_get("webhook_signature")?,
                    body: row.try_get("body")?,
                    received_at_ms: row.try_get("received_at_ms")?,
                })
            })
            .collect()
    }

    /// Where to read payonce's feed from: `None` before the first page.
    pub async fn feed_cursor(&self) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT after FROM feed_cursor WHERE only_row = 1").fetch_optional(&self.pool).await?)
    }

    /// Applies a page of the feed, each event once (an event delivered to
    /// the endpoint already is not applied again), and moves the cursor past
    /// it, in one transaction.
    pub async fn take_feed_page(&self, page: &EventList, now_ms: i64) -> Result<Vec<Applied>, StoreError> {
        let mut transaction = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO feed_cursor (only_row, after) VALUES (1, ?)
             ON CONFLICT (only_row) DO UPDATE SET after = excluded.after",
        )
        .bind(&page.next_cursor)
        .execute(&mut *transaction)
        .await?;
        let mut applied = Vec::with_capacity(page.events.len());
        for event in &page.events {
            applied.push(apply_once(&mut transaction, event, now_ms).await?);
        }
        transaction.commit().await?;
        Ok(applied)
    }
}

async fn insert_delivery(connection: &mut SqliteConnection, delivery: &Delivery) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO deliveries (received_at_ms, webhook_id, webhook_timestamp, webhook_signature, body)
         VALUES (?, ?, ?, ?, ?)",
    )
    .bind(delivery.received_at_ms)
    .bind(&delivery.webhook_id)
    .bind(&delivery.webhook_timestamp)
    .bind(&delivery.webhook_signature)
    .bind(&delivery.body)
    .execute(connection)
    .await?;
    Ok(())
}

/// Records `event`'s id and, the first time only, applies it to its order.
async fn apply_once(connection: &mut SqliteConnection, event: &Event, now_ms: i64) -> Result<Applied, StoreError> {
    let sequence = to_sql(event.data.sequence)?;
    let first_time = sqlx::query(
        "INSERT INTO received_events (id, type, checkout_id, sequence, received_at_ms)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&event.id)
    .bind(event.kind.as_str())
    .bind(&event.data.checkout_id)
    .bind(sequence)
    .bind(now_ms)
    .execute(&mut *connection)
    .await?
    .rows_affected()
        == 1;
    if !first_time {
        return Ok(Applied::AlreadyReceived);
    }

    // The order whose checkout it is; or, when the create's answer was lost
    // before the shop stored the checkout's id, the order the checkout's
    // `reference` names (the shop's order id), for the same amount.
    let Some(row) = sqlx::query(
        "SELECT id, status, amount_refunded, event_sequence FROM orders
         WHERE checkout_id = ? OR (checkout_id IS NULL AND id = ? AND amount = ?)
         LIMIT 1",
    )
    .bind(&event.data.checkout_id)
    .bind(&event.data.reference)
    .bind(to_sql(event.data.amount)?)
    .fetch_optional(&mut *connection)
    .await?
    else {
        return Ok(Applied::NoOrder);
    };
    let order_id: String = row.try_get("id")?;
    let held_sequence: i64 = row.try_get("event_sequence")?;
    if sequence <= held_sequence {
        return Ok(Applied::Outdated);
    }
    let held_status: String = row.try_get("status")?;
    let held = PaymentState {
        status: PaymentStatus::parse(&held_status)
            .ok_or_else(|| StoreError::Unreadable(format!("order {order_id}: status {held_status:?}")))?,
        amount_refunded: u64::try_from(row.try_get::<i64, _>("amount_refunded")?)
            .map_err(|_| StoreError::Unreadable(format!("order {order_id}: negative refund")))?,
    };
    let after = state_after(event, held);
    sqlx::query("UPDATE orders SET checkout_id = ?, status = ?, amount_refunded = ?, event_sequence = ? WHERE id = ?")
        .bind(&event.data.checkout_id)
        .bind(after.status.as_str())
        .bind(to_sql(after.amount_refunded)?)
        .bind(sequence)
        .bind(&order_id)
        .execute(&mut *connection)
        .await?;
    Ok(Applied::ToOrder)
}

/// What an order holds after `event`, newer than any it applied before.
fn state_after(event: &Event, held: PaymentState) -> PaymentState {
    match event.kind {
        // Not a verdict: the customer may or may not have been charged. An
        // order still waiting for its outcome is shown as being confirmed
        // (payonce's UNKNOWN: neither "pay" nor "order again" is offered);
        // one already paid, refunded or closed stays exactly as it was.
        EventType::Unresolved if held.status.awaits_outcome() => {
            PaymentState { status: PaymentStatus::Checkout(CheckoutStatus::Unknown), ..held }
        }
        EventType::Unresolved => held,
        _ => PaymentState {
            status: PaymentStatus::Checkout(event.data.status),
            amount_refunded: event.data.amount_refunded,
        },
    }
}

#[cfg(test)]
mod tests {
    use payonce_api::EventData;

    use super::*;
    use crate::store::OrderLine;

    fn event(id: &str, kind: EventType, checkout_id: &str, sequence: u64, status: CheckoutStatus) -> Event {
        Event {
            id: id.into(),
            kind,
            timestamp: "2026-12-05T08:00:00.000Z".into(),
            data: EventData {
                checkout_id: checkout_id.into(),
                reference: "not-an-order".into(),
                sequence,
                status,
                amount: 14_000,
                amount_refunded: if status == CheckoutStatus::Canceled { 14_000 } else { 0 },
                failure_code: None,
            },
        }
    }

    async fn store_with_order(dir: &tempfile::TempDir) -> (Store, String) {
        let store = Store::open(&dir.path().join("shop.sqlite3")).await.unwrap();
        let line =
            OrderLine { sku: "a".into(), name_en: "A".into(), name_ko: "가".into(), quantity: 1, unit_amount: 14_000 };
        let order = store.insert_new_order(&[line]).await.unwrap();
        (store, order.id)
    }

    #[tokio::test]
    async fn an_event_before_the_checkouts_id_was_stored_finds_its_order_by_reference_and_amount() {
        let dir = tempfile::tempdir().unwrap();
        let (store, order_id) = store_with_order(&dir).await;
        let mut paid = event("evt_1", EventType::Paid, "po_1", 1, CheckoutStatus::Paid);
        paid.data.reference = order_id.clone();
        paid.data.amount = 99_000;
        let page = EventList { events: vec![paid.clone()], next_cursor: "c1".into() };
        assert_eq!(store.take_feed_page(&page, 0).await.unwrap(), [Applied::NoOrder], "another amount");

        paid.id = "evt_2".into();
        paid.data.amount = 14_000;
        let page = EventList { events: vec![paid], next_cursor: "c2".into() };
        assert_eq!(store.take_feed_page(&page, 0).await.unwrap(), [Applied::ToOrder]);
        let order = store.order(&order_id).await.unwrap().unwrap();
        assert_eq!((order.checkout_id.as_deref(), order.status.as_str()), (Some("po_1"), "PAID"));
        assert_eq!(store.feed_cursor().await.unwrap().as_deref(), Some("c2"));
    }

    #[tokio::test]
    async fn unresolved_marks_an_unsettled_order_as_being_confirmed_and_leaves_a_paid_one_paid() {
        let dir = tempfile::tempdir().unwrap();
        let (store, order_id) = store_with_order(&dir).await;
        store.record_checkout_id(&order_id, "po_1").await.unwrap();
        let take = |events: Vec<Event>| EventList { events, next_cursor: "c".into() };

        let unresolved = event("evt_1", EventType::Unresolved, "po_1", 1, CheckoutStatus::Unknown);
        store.take_feed_page(&take(vec![unresolved]), 0).await.unwrap();
        let order = store.order(&order_id).await.unwrap().unwrap();
        assert_eq!((order.status.as_str(), order.event_sequence), ("UNKNOWN", 1));
        assert!(!order.status.can_pay() && !order.status.can_order_again());

        let paid = event("evt_2", EventType::Paid, "po_1", 2, CheckoutStatus::Paid);
        let unresolved_again = event("evt_3", EventType::Unresolved, "po_1", 3, CheckoutStatus::Unknown);
        let applied = store.take_feed_page(&take(vec![paid, unresolved_again]), 0).await.unwrap();
        assert_eq!(applied, [Applied::ToOrder, Applied::ToOrder]);
        let order = store.order(&order_id).await.unwrap().unwrap();
        assert_eq!((order.status.as_str(), order.event_sequence), ("PAID", 3));
    }

    #[tokio::test]
    async fn a_page_of_the_feed_applies_each_event_once_even_when_the_endpoint_had_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, order_id) = store_with_order(&dir).await;
        store.record_checkout_id(&order_id, "po_1").await.unwrap();
        let paid = event("evt_1", EventType::Paid, "po_1", 1, CheckoutStatus::Paid);
        let delivery = Delivery {
            webhook_id: "evt_1".into(),
            webhook_timestamp: "1".into(),
            webhook_signature: "v1,x".into(),
            body: "{}".into(),
            received_at_ms: 0,
        };
        assert_eq!(store.receive_event(&delivery, &paid).await.unwrap(), Applied::ToOrder);
        let refunded = event("evt_2", EventType::Refunded, "po_1", 2, CheckoutStatus::Canceled);
        let page = EventList { events: vec![paid, refunded], next_cursor: "c".into() };
        assert_eq!(store.take_feed_page(&page, 0).await.unwrap(), [Applied::AlreadyReceived, Applied::ToOrder]);
        let order = store.order(&order_id).await.unwrap().unwrap();
        assert_eq!((order.status.as_str(), order.amount_refunded), ("CANCELED", 14_000));
        assert_eq!(store.deliveries().await.unwrap(), [delivery]);
    }
}
