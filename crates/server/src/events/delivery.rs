//! The delivery loop: sends each event that is due to its shop's endpoint.
//! Events are jobs as the job engine's are (`db/leases.rs`), with the same
//! lease and schedule columns in their own table: a send is made under the
//! event's lease, taken for a batch of a shop's due events in one statement,
//! so two servers do not send one at once (were one frozen past its lease,
//! the shop would get the event twice, with one id, which it acts on once).
//! It is not the PG's engine: a shop's endpoint has nothing to do with the
//! PG's breaker or retry budget, so a PG outage delays no event, and a
//! shop's outage delays no payment. How much goes to each shop, and when,
//! is `shop_pace`'s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use payonce_rules::delivery::{Answer, Next, Pacing, after_send};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::shop_pace::ShopSends;
use super::signing;
use crate::app::App;
use crate::db::{AfterSend, EventSend, EventToSend, now_ms};
use crate::metrics;
use crate::resilience::lease;
use crate::shops::EventEndpoint;

/// How often events of shops without an endpoint are left to the feed.
const SWEEP_EVERY: Duration = Duration::from_secs(10);
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
    /// The shops with an endpoint, each with its sends under way and its health.
    shops: Vec<ShopSends>,
    /// A send ended: a place is free, or a checkout's next event may go.
    sent: Notify,
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
    let shops: Vec<ShopSends> = config
        .shops
        .iter()
        .filter(|shop| shop.events.is_some())
        .map(|shop| ShopSends::new(&shop.id, per_shop))
        .collect();
    let pacing = Pacing {
        first_retry: config.event_first_retry,
        longest_wait: LONGEST_WAIT.max(config.event_first_retry),
        window: config.event_retry_window,
    };
    let deliveries = Arc::new(Deliveries { app, client, pacing, shops, sent: Notify::new() });
    let mut last_sweep: Option<Instant> = None;
    loop {
        if last_sweep.is_none_or(|at| at.elapsed() >= SWEEP_EVERY) {
            last_sweep = Some(Instant::now());
            sweep(&deliveries).await;
        }
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

/// Now and then: events of shops that have no endpoint (any more) are left
/// to the feed, and the oldest pending event's age is published.
async fn sweep(deliveries: &Deliveries) {
    let db = &deliveries.app.db;
    let sent_to: Vec<&str> = deliveries.shops.iter().map(|shop| shop.id.as_str()).collect();
    if let Err(error) = db.events_without_endpoint(&sent_to).await {
        tracing::warn!(?error, "could not leave the events of shops without an endpoint to the feed");
    }
    if let Ok(oldest) = db.oldest_pending_event_ms().await {
        metrics::event_oldest_pending_age(oldest.map_or(0, |created| now_ms() - created) as f64 / 1000.0);
    }
}

/// Starts a send for each due event of each shop that may be sent to now;
/// says how long to wait before looking again if nothing wakes the loop.
async fn start_due(deliveries: &Arc<Deliveries>) -> Result<Duration, sqlx::Error> {
    let db = &deliveries.app.db;
    let now = now_ms();
    let mut next_look = now + lease::millis(LOOK_EVERY);
    for (index, shop) in deliveries.shops.iter().enumerate() {
        if let Some(until) = shop.resting_until() {
            next_look = next_look.min(until);
        }
        let (wanted, probe) = shop.may_send(now);
        if wanted == 0 {
            continue;
        }
        let holder = lease::holder(&deliveries.app.worker_id);
        // Taken events may wait for the waves ahead of theirs, and no longer:
        // a server that dies holding them holds them up only that long.
        let waves = (shop.waiting() + wanted).div_ceil(shop.place_count).max(1);
        let until = now + lease::millis((deliveries.app.config.event_timeout + LEASE_MARGIN) * waves as u32);
        let limit = u32::try_from(wanted).unwrap_or(u32::MAX);
        // A probe is the event waiting longest, whatever its own backoff says.
        let due_by = if probe { i64::MAX } else { now };
        let due = match db.claim_due_events(&shop.id, &holder, (now, due_by), until, limit).await {
            Ok(due) => due,
            Err(error) => {
                shop.not_sent(probe);
                return Err(error);
            }
        };
        if due.is_empty() {
            // A probe with nothing to send is no probe.
            shop.not_sent(probe);
        }
        if due.len() < wanted
            && let Some(due_at) = db.next_event_due_of_shop(&shop.id).await?
        {
            next_look = next_look.min(due_at);
        }
        for event in due {
            let Ok(taken) = shop.taken.clone().try_acquire_owned() else { break };
            let (deliveries, holder) = (deliveries.clone(), holder.clone());
            tokio::spawn(async move {
                let shop = &deliveries.shops[index];
                let Ok(place) = shop.places.clone().acquire_owned().await else { return };
                let Some(round) = shop.may_go(probe) else {
                    // The shop failed meanwhile: the event waits for its probe, untried.
                    if let Err(error) = deliveries.app.db.let_go_event(&event.event_id, &holder).await {
                        tracing::warn!(
                            ?error,
                            event_id = event.event_id,
                            "an event not sent stays held until its lease ends"
                        );
                    }
                    return;
                };
                let sent = deliver(&deliveries, shop, &event, &holder, place).await;
                drop(taken);
                match sent {
                    Ok(Some(took_it)) => {
                        if shop.note(took_it, probe, round, &deliveries.pacing) {
                            back_again(&deliveries, shop).await;
                        }
                    }
                    Ok(None) => shop.not_sent(probe),
                    Err(error) => {
                        shop.not_sent(probe);
                        tracing::warn!(
                            ?error,
                            event_id = event.event_id,
                            "sending an event failed before its answer was stored"
                        );
                    }
                }
                deliveries.sent.notify_one();
            });
        }
    }
    Ok(Duration::from_millis(u64::try_from(next_look - now_ms()).unwrap_or(0))
        .clamp(Duration::from_millis(5), LOOK_EVERY))
}

/// The shop answered again after failing: the events that waited out its
/// failures (backed off, or never tried) are due at once.
async fn back_again(deliveries: &Deliveries, shop: &ShopSends) {
    match deliveries.app.db.shop_is_back(&shop.id, now_ms()).await {
        Ok(due) => tracing::info!(shop = shop.id, due, "a shop takes events again: its backlog is due now"),
        Err(error) => {
            tracing::warn!(?error, shop = shop.id, "a shop takes events again, but its backlog stays on its backoff")
        }
    }
}

/// Sends an event `holder` took once, and stores how that went. Says
/// whether the shop took it (`None`: nothing was sent).
/// The shop's place is held for the send only: what the shop answered is
/// stored after it is let go, under the event's lease.
async fn deliver(
    deliveries: &Deliveries,
    shop: &ShopSends,
    event: &EventToSend,
    holder: &str,
    place: tokio::sync::OwnedSemaphorePermit,
) -> Result<Option<bool>, sqlx::Error> {
    let (app, db) = (&deliveries.app, &deliveries.app.db);
    let event_id = event.event_id.as_str();
    let Some(endpoint) = app.config.shops.by_id(&shop.id).and_then(|shop| shop.events.as_ref()) else {
        return Ok(None);
    };
    let started = (now_ms(), Instant::now());
    let (answer, outcome) = send(&deliveries.client, endpoint, event).await;
    drop(place);
    deliveries.sent.notify_one();
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
    if db.event_sent(event_id, holder, &record, after).await? {
        told(deliveries, event, next, &outcome).await?;
    }
    Ok(Some(answer.took_it()))
}

/// What a stored send means: its metrics, and the alert for an event given
/// up, with the shop's other events past their window (those never tried
/// while the shop rested after failing).
async fn told(deliveries: &Deliveries, event: &EventToSend, next: Next, outcome: &str) -> Result<(), sqlx::Error> {
    let shop = &event.shop_id;
    match next {
        Next::Delivered => {
            metrics::event_send(shop, "delivered");
            metrics::event_lag((now_ms() - event.created_at_ms).max(0) as f64 / 1000.0);
        }
        Next::Retry(_) => metrics::event_send(shop, "retry"),
        Next::GiveUp => {
            let window = lease::millis(deliveries.pacing.window);
            let others = deliveries.app.db.give_up_events(shop, now_ms() - window, now_ms()).await?;
            metrics::event_send(shop, "gave_up");
            metrics::event_alerts(others + 1);
            tracing::error!(
                shop,
                given_up = others + 1,
                last_answer = outcome,
                "events were not delivered within their retry window; an operator must look"
            );
        }
    }
    Ok(())
}

/// One send: the event's body, signed now, to the shop's endpoint. Answers
/// the HTTP status (any status: the caller decides what it means) and words
/// for operators.
async fn send(client: &reqwest::Client, endpoint: &EventEndpoint, event: &EventToSend) -> (Answer, String) {
    let event_id = event.event_id.as_str();
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
