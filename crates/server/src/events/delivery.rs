//! The delivery loop: sends each event that is due to its shop's endpoint.
//! Events are jobs of the job engine's kind `Event` (`db/leases.rs`): a send
//! is made under the event's lease, so two servers do not send it at once
//! (were one frozen past its lease, the shop would get the event twice, with
//! one id, which it acts on once). It is not the PG's engine: a shop's
//! endpoint has nothing to do with the PG's breaker or retry budget, so a PG
//! outage delays no event, and a shop's outage delays no payment.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use payonce_rules::delivery::{Answer, Next, Pacing, after_send};
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::signing;
use crate::app::App;
use crate::db::{AfterSend, DueEvent, EventSend, EventToSend, JobKind, now_ms};
use crate::metrics;
use crate::resilience::lease;
use crate::shops::EventEndpoint;

/// Sends under way at once, all shops together.
const MOST_SENDS: usize = 256;
/// The longest wait between two sends of one event.
const LONGEST_WAIT: Duration = Duration::from_secs(3600);
/// The loop looks at least this often, whatever it was told.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// A send's lease outlasts the send by this much.
const LEASE_MARGIN: Duration = Duration::from_secs(2);

/// What the loop's sends share.
struct Deliveries {
    app: App,
    client: reqwest::Client,
    pacing: Pacing,
    /// Per shop: its sends under way, and whether its last send failed.
    shops: HashMap<String, ShopSends>,
    all: Arc<Semaphore>,
    /// A send ended: a place is free, or a checkout's next event may go.
    sent: Notify,
}

struct ShopSends {
    places: Arc<Semaphore>,
    failing: AtomicBool,
}

/// Sends events as they fall due, until `stopping`. Woken by every change
/// this server commits (a new event is sent within milliseconds of its
/// commit), by every send ending, and at least once a second.
pub async fn run(app: App, stopping: CancellationToken) {
    let config = app.config.clone();
    let client = match reqwest::Client::builder()
        .timeout(config.event_timeout)
        // A redirect is not the shop taking the event: it is an answer like any other non-2xx.
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("payonce/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(?error, "no HTTP client for shops' events: none is sent");
            return;
        }
    };
    let per_shop = usize::try_from(config.event_sends_per_shop).unwrap_or(1);
    let shops = config
        .shops
        .iter()
        .map(|shop| {
            let sends = ShopSends { places: Arc::new(Semaphore::new(per_shop)), failing: AtomicBool::new(false) };
            (shop.id.clone(), sends)
        })
        .collect();
    let pacing = Pacing {
        first_retry: config.event_first_retry,
        longest_wait: LONGEST_WAIT.max(config.event_first_retry),
        window: config.event_retry_window,
    };
    let deliveries = Arc::new(Deliveries {
        app,
        client,
        pacing,
        shops,
        all: Arc::new(Semaphore::new(MOST_SENDS)),
        sent: Notify::new(),
    });
    loop {
        let pause = match start_due(&deliveries).await {
            Ok(pause) => pause,
            Err(error) => {
                tracing::error!(?error, "could not look for events to send");
                LOOK_EVERY
            }
        };
        let changes = deliveries.app.db.changes().clone();
        tokio::select! {
            _ = stopping.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
            _ = changes.any_change() => {}
            _ = deliveries.sent.notified() => {}
        }
    }
}

/// Starts a send for each due event whose shop has a free place; says how
/// long to wait before looking again if nothing wakes the loop.
async fn start_due(deliveries: &Arc<Deliveries>) -> Result<Duration, sqlx::Error> {
    let db = &deliveries.app.db;
    let free = deliveries.all.available_permits();
    if free > 0 {
        for DueEvent { event_id, shop_id } in db.due_events(now_ms(), u32::try_from(free).unwrap_or(u32::MAX)).await? {
            let shop_place = match deliveries.shops.get(&shop_id) {
                Some(shop) => match shop.places.clone().try_acquire_owned() {
                    Ok(place) => Some(place),
                    // This shop has its sends out; the others' events go on.
                    Err(_) => continue,
                },
                None => None,
            };
            let Ok(place) = deliveries.all.clone().try_acquire_owned() else { break };
            let deliveries = deliveries.clone();
            tokio::spawn(async move {
                if let Err(error) = deliver(&deliveries, &event_id).await {
                    tracing::warn!(?error, event_id, "sending an event failed before its answer was stored");
                }
                drop((place, shop_place));
                deliveries.sent.notify_one();
            });
        }
    }
    let oldest = db.oldest_pending_event_ms().await?.map_or(0, |created| now_ms() - created);
    metrics::event_oldest_pending_age(oldest as f64 / 1000.0);
    let until_due =
        db.next_event_due_ms().await?.map(|due| Duration::from_millis(u64::try_from(due - now_ms()).unwrap_or(0)));
    Ok(until_due.map_or(LOOK_EVERY, |wait| wait.clamp(Duration::from_millis(5), LOOK_EVERY)))
}

/// Takes the event's lease, sends it once, and stores how that went.
async fn deliver(deliveries: &Deliveries, event_id: &str) -> Result<(), sqlx::Error> {
    let (app, db) = (&deliveries.app, &deliveries.app.db);
    let now = now_ms();
    let holder = lease::holder(&app.worker_id);
    let until = now + lease::millis(app.config.event_timeout + LEASE_MARGIN);
    if db.claim_job(JobKind::Event, event_id, &holder, now, until).await?.is_none() {
        return Ok(());
    }
    let Some(event) = db.event_to_send(event_id).await? else { return Ok(()) };
    let Some(endpoint) = app.config.shops.by_id(&event.shop_id).and_then(|shop| shop.events.as_ref()) else {
        db.event_without_endpoint(event_id, &holder).await?;
        return Ok(());
    };
    let started = (now_ms(), Instant::now());
    let (answer, outcome) = send(&deliveries.client, endpoint, event_id, &event).await;
    let took_ms = lease::millis(started.1.elapsed());
    let in_window = Duration::from_millis(u64::try_from(started.0 - event.retry_from_ms).unwrap_or(0));
    let failed_before = u32::try_from(event.recovery_passes).unwrap_or(u32::MAX);
    let next = after_send(answer, failed_before, in_window, &deliveries.pacing, &mut rand::rng());
    let after = match next {
        Next::Delivered => AfterSend::Delivered,
        Next::Retry(wait) => AfterSend::Retry { next_at_ms: now_ms() + lease::millis(wait) },
        Next::GiveUp => AfterSend::GaveUp,
    };
    let http_status = match answer {
        Answer::Status(status) => Some(status),
        Answer::None => None,
    };
    let record = EventSend { at_ms: started.0, took_ms, http_status, outcome: &outcome };
    if !db.event_sent(event_id, &holder, &record, after).await? {
        return Ok(());
    }
    told(deliveries, &event, next, &outcome).await
}

/// What a stored send means for the shop: its metrics, its alert, and, for a
/// shop that answers again after failing, its backlog made due at once.
async fn told(deliveries: &Deliveries, event: &EventToSend, next: Next, outcome: &str) -> Result<(), sqlx::Error> {
    let shop = &event.shop_id;
    let failing = deliveries.shops.get(shop).map(|sends| &sends.failing);
    match next {
        Next::Delivered => {
            metrics::event_send(shop, "delivered");
            metrics::event_lag((now_ms() - event.created_at_ms).max(0) as f64 / 1000.0);
            if failing.is_some_and(|failing| failing.swap(false, Ordering::Relaxed)) {
                let due = deliveries.app.db.shop_is_back(shop, now_ms()).await?;
                tracing::info!(shop, due, "a shop takes events again: its backlog is due now");
            }
        }
        Next::Retry(_) => {
            metrics::event_send(shop, "retry");
            if let Some(failing) = failing {
                failing.store(true, Ordering::Relaxed);
            }
        }
        Next::GiveUp => {
            metrics::event_send(shop, "gave_up");
            metrics::event_alert();
            tracing::error!(
                shop,
                last_answer = outcome,
                "an event was not delivered within its retry window; an operator must look"
            );
        }
    }
    Ok(())
}

/// One send: the event's body, signed now, to the shop's endpoint. Answers
/// the HTTP status (any status: the caller decides what it means) and words
/// for operators.
async fn send(
    client: &reqwest::Client,
    endpoint: &EventEndpoint,
    event_id: &str,
    event: &EventToSend,
) -> (Answer, String) {
    let timestamp = now_ms() / 1000;
    let signature = match signing::signature(&endpoint.secrets, event_id, timestamp, &event.body) {
        Ok(signature) => signature,
        Err(error) => return (Answer::None, error),
    };
    let sent = client
        .post(endpoint.url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(payonce_api::event::WEBHOOK_ID_HEADER, event_id)
        .header(payonce_api::event::WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string())
        .header(payonce_api::event::WEBHOOK_SIGNATURE_HEADER, signature)
        .body(event.body.clone())
        .send()
        .await;
    match sent {
        Ok(response) => {
            let status = response.status().as_u16();
            (Answer::Status(status), format!("HTTP {status}"))
        }
        Err(error) if error.is_timeout() => (Answer::None, "no answer within the timeout".to_owned()),
        Err(error) if error.is_connect() => (Answer::None, "could not connect".to_owned()),
        Err(error) => (Answer::None, format!("no answer: {}", without_url(&error))),
    }
}

/// An error's words without the endpoint's URL, which may hold a token.
fn without_url(error: &reqwest::Error) -> String {
    let mut words = error.to_string();
    if let Some(url) = error.url() {
        words = words.replace(url.as_str(), "the endpoint");
    }
    words
}
