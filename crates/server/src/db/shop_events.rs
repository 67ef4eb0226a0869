//! Events for shops, stored: written by the status writer in the transaction
//! of the change they report (so a change that committed always has its event,
//! and one that did not has none), read by the delivery loop (`events/`) and
//! the shop's feed, and shown to operators. An event's body is built once,
//! here, and sent as those same bytes every time.

use payonce_api::{CheckoutStatus, Event, EventData, EventType, OrderStatus};
use payonce_rules::settlement::{Told, event_of};
use sqlx::{AnyConnection, FromRow};

use super::history::Change;
use super::{Db, Engine, now_ms, rfc3339};

/// Held by a PostgreSQL transaction from drawing an event's position to its
/// commit, so positions become visible in order and a feed reader that saw
/// position n never later finds a smaller one. SQLite commits one
/// transaction at a time, which keeps that order by itself.
pub const EVENT_POSITION_LOCK: i64 = 0x7061_796f_6e63_6501;

/// Where an event's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Pending,
    Delivered,
    /// Not delivered within the retry window; operators were alerted.
    Failed,
    /// Its shop has no endpoint: the feed is how it learns.
    NoEndpoint,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Pending => "PENDING",
            Delivery::Delivered => "DELIVERED",
            Delivery::Failed => "FAILED",
            Delivery::NoEndpoint => "NO_ENDPOINT",
        }
    }
}

/// The checkout an event is about, as the change left it.
struct Snapshot<'a> {
    order_id: &'a str,
    kind: EventType,
    status: CheckoutStatus,
    amount: u64,
    refunded: u64,
    failure_code: Option<&'a str>,
}

/// What a sender needs of an event it took.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct EventToSend {
    pub event_id: String,
    pub shop_id: String,
    pub created_at_ms: i64,
    pub body: String,
    pub retry_from_ms: i64,
    /// Its failed sends so far.
    pub recovery_passes: i64,
}

/// One send of an event and how the shop answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSend<'a> {
    pub at_ms: i64,
    pub took_ms: i64,
    pub http_status: Option<u16>,
    pub outcome: &'a str,
}

/// What a send comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterSend {
    Delivered,
    /// Sent again at this moment.
    Retry {
        next_at_ms: i64,
    },
    /// The retry window is over.
    GaveUp,
}

/// An event as operators see it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct EventRow {
    pub event_id: String,
    pub shop_id: String,
    pub order_id: String,
    pub sequence: i64,
    #[sqlx(rename = "type")]
    pub kind: String,
    pub created_at_ms: i64,
    pub delivery: String,
    pub delivered_at_ms: Option<i64>,
    pub next_attempt_at_ms: i64,
    pub recovery_passes: i64,
    pub last_pg_answer: Option<String>,
}

/// One send of an event, as operators see it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SendRow {
    pub event_id: String,
    pub at_ms: i64,
    pub took_ms: i64,
    pub http_status: Option<i64>,
    pub outcome: String,
}

/// An event and one of its sends (none when it was never sent).
#[derive(FromRow)]
struct EventAndSend {
    #[sqlx(flatten)]
    event: EventRow,
    send_at_ms: Option<i64>,
    send_took_ms: Option<i64>,
    send_http_status: Option<i64>,
    send_outcome: Option<String>,
}

const SELECT_EVENT_ROW: &str = "SELECT event_id, shop_id, order_id, sequence, type, created_at_ms, delivery, \
     delivered_at_ms, next_attempt_at_ms, recovery_passes, last_pg_answer FROM shop_events";

/// Events ready to send: pending, and with no earlier event of the same
/// checkout still pending (a checkout's
/// events go out one after another, in order).
const READY: &str = "e.delivery = 'PENDING' AND NOT EXISTS (SELECT 1 FROM shop_events earlier \
     WHERE earlier.order_id = e.order_id AND earlier.sequence < e.sequence AND earlier.delivery = 'PENDING')";

impl Db {
    /// Writes the event `change` makes, if it makes one and the order is a
    /// shop's checkout, in the change's transaction.
    pub(super) async fn tell_shop_of(
        &self,
        transaction: &mut AnyConnection,
        change: &Change<'_>,
    ) -> Result<(), sqlx::Error> {
        let told = Told {
            from: change.from,
            to: change.to,
            code: change.code,
            refunded_before: change.refunded_before,
            refunded_after: change.refunded_after,
        };
        let Some(kind) = event_of(told) else { return Ok(()) };
        let failure_code = match kind {
            EventType::Failed | EventType::Expired | EventType::RefundFailed => change.code,
            _ => None,
        };
        let snapshot = Snapshot {
            order_id: change.order_id,
            kind,
            status: CheckoutStatus::of(change.to, change.code),
            amount: change.amount,
            refunded: change.refunded_after,
            failure_code,
        };
        self.write_event(transaction, &snapshot).await.map(drop)
    }

    /// Writes the event, in `transaction`, if the order is a checkout; says whether it did.
    async fn write_event(&self, transaction: &mut AnyConnection, snapshot: &Snapshot<'_>) -> Result<bool, sqlx::Error> {
        let checkout: Option<(String, String)> =
            sqlx::query_as("SELECT shop_id, reference FROM checkouts WHERE order_id = $1")
                .bind(snapshot.order_id)
                .fetch_optional(&mut *transaction)
                .await?;
        let Some((shop_id, reference)) = checkout else { return Ok(false) };
        if self.engine == Engine::Postgres {
            sqlx::query("SELECT CAST(pg_advisory_xact_lock($1) AS TEXT)")
                .bind(EVENT_POSITION_LOCK)
                .execute(&mut *transaction)
                .await?;
        }
        // The order's status row is locked by the change (or read under the
        // writer's one transaction on SQLite), so no other event of it is
        // being numbered now.
        let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(sequence), 0) FROM shop_events WHERE order_id = $1")
            .bind(snapshot.order_id)
            .fetch_one(&mut *transaction)
            .await?;
        let now = now_ms();
        let event = Event {
            id: format!("evt_{}", uuid::Uuid::now_v7().simple()),
            kind: snapshot.kind,
            timestamp: rfc3339(now),
            data: EventData {
                checkout_id: snapshot.order_id.to_owned(),
                reference,
                sequence: u64::try_from(last + 1).unwrap_or(1),
                status: snapshot.status,
                amount: snapshot.amount,
                amount_refunded: snapshot.refunded,
                failure_code: snapshot.failure_code.map(str::to_owned),
            },
        };
        let body = serde_json::to_string(&event).map_err(|error| sqlx::Error::Encode(Box::new(error)))?;
        sqlx::query(
            "INSERT INTO shop_events (event_id, shop_id, order_id, sequence, type, body, created_at_ms, retry_from_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&event.id)
        .bind(&shop_id)
        .bind(snapshot.order_id)
        .bind(last + 1)
        .bind(snapshot.kind.as_str())
        .bind(&body)
        .bind(now)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        Ok(true)
    }

    /// Tells the order's shop, once, that its payment has stayed UNKNOWN past
    /// the time operators are alerted (`checkout.unresolved`). Says whether
    /// it did: not for an order that is no checkout, no longer UNKNOWN, or
    /// already told.
    pub async fn tell_unresolved(&self, order_id: &str) -> Result<bool, sqlx::Error> {
        let (db, order) = (self.clone(), order_id.to_owned());
        let told = self
            .write(Box::new(move |transaction| {
                let (db, order) = (db.clone(), order.clone());
                Box::pin(async move {
                    let unknown: Option<(i64, i64)> = sqlx::query_as(
                        "SELECT amount, refunded_amount FROM payment_attempts WHERE order_id = $1 AND status = 'UNKNOWN' \
                         AND NOT EXISTS (SELECT 1 FROM shop_events WHERE order_id = $2 AND type = $3)",
                    )
                    .bind(&order)
                    .bind(&order)
                    .bind(EventType::Unresolved.as_str())
                    .fetch_optional(&mut **transaction)
                    .await?;
                    let Some((amount, refunded)) = unknown else { return Ok(false) };
                    let snapshot = Snapshot {
                        order_id: &order,
                        kind: EventType::Unresolved,
                        status: CheckoutStatus::of(OrderStatus::Unknown, None),
                        amount: u64::try_from(amount).unwrap_or_default(),
                        refunded: u64::try_from(refunded).unwrap_or_default(),
                        failure_code: None,
                    };
                    db.write_event(transaction, &snapshot).await
                })
            }))
            .await?;
        if told {
            self.changes.notify(order_id);
        }
        Ok(told)
    }

    /// Takes the shop's events ready to send by `due_by_ms` (now; for a
    /// probe of a shop that fails, any time: its own backoff decides), those
    /// waiting longest first, at most `limit`, under `holder`'s lease until
    /// `until_ms`, in one statement; answers them. An event another sender holds is not taken;
    /// were two servers to pick the same one, the row's own condition,
    /// checked again as it is written, gives it to one.
    pub async fn claim_due_events(
        &self,
        shop_id: &str,
        holder: &str,
        (now_ms, due_by_ms): (i64, i64),
        until_ms: i64,
        limit: u32,
    ) -> Result<Vec<EventToSend>, sqlx::Error> {
        let query = format!(
            "UPDATE shop_events SET lease_until_ms = $1, lease_owner = $2 WHERE event_id IN \
             (SELECT e.event_id FROM shop_events e WHERE e.shop_id = $3 AND {READY} AND e.next_attempt_at_ms <= $4 \
             AND e.lease_until_ms <= $5 ORDER BY e.next_attempt_at_ms, e.position LIMIT $6) \
             AND delivery = 'PENDING' AND lease_until_ms <= $7 \
             RETURNING event_id, shop_id, created_at_ms, body, retry_from_ms, recovery_passes"
        );
        let (shop, holder) = (shop_id.to_owned(), holder.to_owned());
        // Through the writer's queue: on SQLite it joins the writes of the
        // moment in one commit, instead of waiting for them to take its own.
        let mut claimed = self
            .write(Box::new(move |transaction| {
                let (query, shop, holder) = (query.clone(), shop.clone(), holder.clone());
                Box::pin(async move {
                    sqlx::query_as::<_, EventToSend>(&query)
                        .bind(until_ms)
                        .bind(&holder)
                        .bind(&shop)
                        .bind(due_by_ms)
                        .bind(now_ms)
                        .bind(i64::from(limit))
                        .bind(now_ms)
                        .fetch_all(&mut **transaction)
                        .await
                })
            }))
            .await?;
        claimed.sort_by_key(|event| (event.retry_from_ms, event.created_at_ms));
        Ok(claimed)
    }

    /// When the shop's next ready event falls due: its next send, or its lease's end if later.
    pub async fn next_event_due_of_shop(&self, shop_id: &str) -> Result<Option<i64>, sqlx::Error> {
        let query = format!(
            "SELECT MIN(CASE WHEN e.next_attempt_at_ms > e.lease_until_ms THEN e.next_attempt_at_ms \
             ELSE e.lease_until_ms END) FROM shop_events e WHERE e.shop_id = $1 AND {READY}"
        );
        sqlx::query_scalar(&query).bind(shop_id).fetch_one(&self.pool).await
    }

    /// Marks every pending event of a shop not in `sent_to` (shops with an
    /// endpoint) as its shop's to read from the feed; says how many.
    pub async fn events_without_endpoint(&self, sent_to: &[&str]) -> Result<u64, sqlx::Error> {
        let places: Vec<String> = (0..sent_to.len()).map(|at| format!("${}", at + 2)).collect();
        let except =
            if places.is_empty() { String::new() } else { format!(" AND shop_id NOT IN ({})", places.join(", ")) };
        let query = format!("UPDATE shop_events SET delivery = $1 WHERE delivery = 'PENDING'{except}");
        let mut update = sqlx::query(&query).bind(Delivery::NoEndpoint.as_str());
        for shop in sent_to {
            update = update.bind(*shop);
        }
        Ok(update.execute(&self.writer).await?.rows_affected())
    }

    /// Gives up the shop's pending events whose retry window started before
    /// `before_ms` and that no sender holds; says how many.
    pub async fn give_up_events(&self, shop_id: &str, before_ms: i64, now_ms: i64) -> Result<u64, sqlx::Error> {
        let done = sqlx::query(
            "UPDATE shop_events SET delivery = 'FAILED' WHERE shop_id = $1 AND delivery = 'PENDING' \
             AND retry_from_ms < $2 AND lease_until_ms <= $3",
        )
        .bind(shop_id)
        .bind(before_ms)
        .bind(now_ms)
        .execute(&self.writer)
        .await?;
        Ok(done.rows_affected())
    }

    /// Records a send of an event `holder` holds and what it came to, in one
    /// transaction; says whether it still held it (if not, nothing is written:
    /// the send happened, and the holder now is the one that records).
    pub async fn event_sent(
        &self,
        event_id: &str,
        holder: &str,
        send: &EventSend<'_>,
        after: AfterSend,
    ) -> Result<bool, sqlx::Error> {
        let (event, holder, outcome) = (event_id.to_owned(), holder.to_owned(), send.outcome.to_owned());
        let (at_ms, took_ms, http_status) = (send.at_ms, send.took_ms, send.http_status.map(i64::from));
        self.write(Box::new(move |transaction| {
            let (event, holder, outcome) = (event.clone(), holder.clone(), outcome.clone());
            Box::pin(async move {
                let (delivery, next_at_ms, failed) = match after {
                    AfterSend::Delivered => (Delivery::Delivered, 0, 0),
                    AfterSend::Retry { next_at_ms } => (Delivery::Pending, next_at_ms, 1),
                    AfterSend::GaveUp => (Delivery::Failed, 0, 1),
                };
                let updated = sqlx::query(
                    "UPDATE shop_events SET delivery = $1, lease_until_ms = 0, next_attempt_at_ms = $2, \
                     recovery_passes = recovery_passes + $3, last_pg_answer = $4, \
                     delivered_at_ms = CASE WHEN $5 = 'DELIVERED' THEN $6 ELSE delivered_at_ms END \
                     WHERE event_id = $7 AND lease_owner = $8 AND delivery = 'PENDING'",
                )
                .bind(delivery.as_str())
                .bind(next_at_ms)
                .bind(failed)
                .bind(&outcome)
                .bind(delivery.as_str())
                .bind(at_ms + took_ms)
                .bind(&event)
                .bind(&holder)
                .execute(&mut **transaction)
                .await?;
                if updated.rows_affected() != 1 {
                    return Ok(false);
                }
                sqlx::query(
                    "INSERT INTO shop_event_sends (event_id, at_ms, took_ms, http_status, outcome) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&event)
                .bind(at_ms)
                .bind(took_ms)
                .bind(http_status)
                .bind(&outcome)
                .execute(&mut **transaction)
                .await?;
                Ok(true)
            })
        }))
        .await
    }

    /// Lets go of an event `holder` took and did not send: due again at once.
    pub async fn let_go_event(&self, event_id: &str, holder: &str) -> Result<bool, sqlx::Error> {
        let done = sqlx::query(
            "UPDATE shop_events SET lease_until_ms = 0 WHERE event_id = $1 AND lease_owner = $2 AND delivery = 'PENDING'",
        )
        .bind(event_id)
        .bind(holder)
        .execute(&self.writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The shop answered again after failing: its events waiting out a
    /// backoff are due now, so a backlog drains as soon as the shop is back
    /// rather than as each event's backoff ends. Says how many.
    pub async fn shop_is_back(&self, shop_id: &str, now_ms: i64) -> Result<u64, sqlx::Error> {
        let done = sqlx::query(
            "UPDATE shop_events SET next_attempt_at_ms = 0 WHERE shop_id = $1 AND delivery = 'PENDING' \
             AND next_attempt_at_ms > $2",
        )
        .bind(shop_id)
        .bind(now_ms)
        .execute(&self.writer)
        .await?;
        Ok(done.rows_affected())
    }

    /// A page of the shop's feed: its events after `after` (a position), in
    /// commit order, with their positions.
    pub async fn events_after(&self, shop_id: &str, after: i64, limit: u32) -> Result<Vec<(i64, String)>, sqlx::Error> {
        sqlx::query_as(
            "SELECT position, body FROM shop_events WHERE shop_id = $1 AND position > $2 ORDER BY position LIMIT $3",
        )
        .bind(shop_id)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
    }

    /// An order's events, oldest first, and every send of each, read by one
    /// statement: two would each see their own moment on PostgreSQL, and an
    /// operator could see an event still pending beside the send that
    /// delivered it (a send and its event's state are written together).
    pub async fn events_of_order(&self, order_id: &str) -> Result<(Vec<EventRow>, Vec<SendRow>), sqlx::Error> {
        let rows: Vec<EventAndSend> = sqlx::query_as(
            "SELECT e.event_id, e.shop_id, e.order_id, e.sequence, e.type, e.created_at_ms, e.delivery, \
             e.delivered_at_ms, e.next_attempt_at_ms, e.recovery_passes, e.last_pg_answer, \
             s.at_ms AS send_at_ms, s.took_ms AS send_took_ms, s.http_status AS send_http_status, \
             s.outcome AS send_outcome FROM shop_events e \
             LEFT JOIN shop_event_sends s ON s.event_id = e.event_id WHERE e.order_id = $1 ORDER BY e.sequence, s.id",
        )
        .bind(order_id)
        .fetch_all(&self.pool)
        .await?;
        let mut events: Vec<EventRow> = Vec::new();
        let mut sends = Vec::new();
        for row in rows {
            if let (Some(at_ms), Some(took_ms), Some(outcome)) = (row.send_at_ms, row.send_took_ms, row.send_outcome) {
                let event_id = row.event.event_id.clone();
                sends.push(SendRow { event_id, at_ms, took_ms, http_status: row.send_http_status, outcome });
            }
            if events.last().is_none_or(|last| last.event_id != row.event.event_id) {
                events.push(row.event);
            }
        }
        Ok((events, sends))
    }

    /// One event.
    pub async fn event(&self, event_id: &str) -> Result<Option<EventRow>, sqlx::Error> {
        let query = format!("{SELECT_EVENT_ROW} WHERE event_id = $1");
        sqlx::query_as(&query).bind(event_id).fetch_optional(&self.pool).await
    }

    /// The events of `shop_id` (every shop's without one) that failed, newest first.
    pub async fn failed_events(&self, shop_id: Option<&str>, limit: u32) -> Result<Vec<EventRow>, sqlx::Error> {
        let query = format!(
            "{SELECT_EVENT_ROW} WHERE delivery = 'FAILED' AND ($1 = '' OR shop_id = $2) ORDER BY position DESC LIMIT $3"
        );
        sqlx::query_as(&query)
            .bind(shop_id.unwrap_or_default())
            .bind(shop_id.unwrap_or_default())
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
    }

    /// Sends an event again (an operator's word): delivered or failed, it is
    /// pending again with a new retry window; one still pending is due now.
    /// Says whether the event exists and has an endpoint to go to.
    pub async fn resend_event(&self, event_id: &str) -> Result<bool, sqlx::Error> {
        let done = sqlx::query(
            "UPDATE shop_events SET delivery = 'PENDING', next_attempt_at_ms = 0, retry_from_ms = $1, \
             recovery_passes = CASE WHEN delivery = 'PENDING' THEN recovery_passes ELSE 0 END \
             WHERE event_id = $2 AND delivery <> 'NO_ENDPOINT'",
        )
        .bind(now_ms())
        .bind(event_id)
        .execute(&self.writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sends every failed event of the shop again; says how many.
    pub async fn resend_failed(&self, shop_id: &str) -> Result<u64, sqlx::Error> {
        let done = sqlx::query(
            "UPDATE shop_events SET delivery = 'PENDING', next_attempt_at_ms = 0, retry_from_ms = $1, \
             recovery_passes = 0 WHERE shop_id = $2 AND delivery = 'FAILED'",
        )
        .bind(now_ms())
        .bind(shop_id)
        .execute(&self.writer)
        .await?;
        Ok(done.rows_affected())
    }

    /// When the oldest event still pending was written.
    pub async fn oldest_pending_event_ms(&self) -> Result<Option<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT MIN(created_at_ms) FROM shop_events WHERE delivery = 'PENDING'")
            .fetch_one(&self.pool)
            .await
    }
}
