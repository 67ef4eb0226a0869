//! A flash-sale customer, as the page behaves: an order, one confirm POST
//! waited on for 15 s, then checks that ask the server to wait up to 2 s for a
//! change, one after another every 2 s, at most 25, never a second confirm.
//! All customers share one HTTP client (one pool of connections, as many as
//! requests in flight) and carry their own cookie, so a customer costs the
//! load generator a task and a few hundred bytes, not a client of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use payonce_api::{IDEMPOTENCY_KEY_HEADER, Order, OrderStatus};
use reqwest::{Client, StatusCode};
use serde_json::json;

/// How long a customer waits for their order to be made before giving up.
const CREATE_PATIENCE: Duration = Duration::from_secs(30);

/// The page's timings, at the run's time scale.
#[derive(Debug, Clone, Copy)]
pub struct PageTimings {
    pub confirm_wait: Duration,
    pub interval: Duration,
    pub attempts: u32,
    /// What a check asks the server to wait: the interval, at most 2 s.
    pub check_wait: Duration,
    /// A check unanswered this long is given up (the page's 5 s past its wait).
    pub check_timeout: Duration,
}

/// How many customers are doing what, now: read by the sampler.
#[derive(Debug, Default)]
pub struct Live {
    /// Customers past their confirm's wait, checking (between checks too).
    pub checking: AtomicI64,
    /// Checks sent and not yet answered.
    pub waiting: AtomicI64,
}

/// What the customer's screen said in the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    Paid,
    Failed,
    /// Still not known after the last check.
    Unresolved,
    NoOrder,
}

/// One answered check.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub ms: f64,
    /// It brought the final status.
    pub changed: bool,
}

/// One customer's visit, as measured from the customer's side.
#[derive(Debug, Clone)]
pub struct Visit {
    pub order_id: Option<String>,
    pub create_ms: Option<f64>,
    /// When the confirm left, from the arrival.
    pub confirm_sent_ms: Option<f64>,
    /// The confirm's answer time, when it brought the payment within the wait
    /// (a failure, such as a PG that could not be reached, says nothing of the PG's time).
    pub confirm_ms: Option<f64>,
    pub checks: Vec<Check>,
    pub told: Told,
    /// When a check brought the final status (ms since the epoch), to compare
    /// with the time the server committed it.
    pub told_by_check_at_ms: Option<i64>,
    /// How late each check left after it was due: the load generator's own lag.
    pub send_lag_ms: Vec<f64>,
    /// Every error, by kind.
    pub errors: Vec<String>,
}

/// Pays for one order and checks until the screen knows.
pub async fn visit(client: &Client, shop_url: &str, timings: PageTimings, live: &Arc<Live>) -> Visit {
    let mut visit = Visit {
        order_id: None,
        create_ms: None,
        confirm_sent_ms: None,
        confirm_ms: None,
        checks: Vec::new(),
        told: Told::NoOrder,
        told_by_check_at_ms: None,
        send_lag_ms: Vec::new(),
        errors: Vec::new(),
    };
    let started = Instant::now();
    let created = client
        .post(format!("{shop_url}/api/orders"))
        .json(&json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}))
        // The page puts no limit on making an order: the customer waits on "creating your order".
        .timeout(CREATE_PATIENCE)
        .send()
        .await;
    let (order, cookie) = match created {
        Ok(response) if response.status() == StatusCode::CREATED => {
            let cookie = cookie_of(&response);
            match response.json::<Order>().await {
                Ok(order) => (order, cookie),
                Err(_) => return failed(visit, "create: unreadable answer"),
            }
        }
        Ok(response) => return failed(visit, &format!("create: {}", response.status().as_u16())),
        Err(error) => return failed(visit, &format!("create: {}", error_kind(&error))),
    };
    visit.create_ms = Some(ms_since(started));
    visit.order_id = Some(order.order_id.clone());

    let confirm_started = Instant::now();
    visit.confirm_sent_ms = Some(ms_since(started));
    let confirm = client
        .post(format!("{shop_url}/api/orders/{}/confirm", order.order_id))
        .header(reqwest::header::COOKIE, &cookie)
        .header(IDEMPOTENCY_KEY_HEADER, uuid::Uuid::new_v4().to_string())
        .json(&json!({"payment_key": format!("pk_{}", order.order_id), "amount": order.amount}))
        .timeout(timings.confirm_wait)
        .send()
        .await;
    match confirm {
        Ok(response) if response.status() == StatusCode::OK => {
            let answered_ms = ms_since(confirm_started);
            if let Ok(order) = response.json::<Order>().await
                && let Some(told) = told_by(&order)
            {
                if told == Told::Paid {
                    visit.confirm_ms = Some(answered_ms);
                }
                if let Some(failure) = &order.failure {
                    visit.errors.push(format!("confirm: failed {}", failure.code));
                }
                visit.told = told;
                return visit;
            }
        }
        // The page's 15 s are up: it checks, and never sends the confirm again.
        Err(error) if error.is_timeout() => {}
        Ok(response) if response.status().is_server_error() => {
            visit.errors.push(format!("confirm: {}", response.status().as_u16()));
        }
        Ok(response) => {
            // A refusal in the server's words (PG_BUSY, a decline): final, no checks.
            visit.errors.push(format!("confirm: refused {}", response.status().as_u16()));
            let _ = response.bytes().await;
            visit.told = Told::Failed;
            return visit;
        }
        Err(error) => visit.errors.push(format!("confirm: {}", error_kind(&error))),
    }

    live.checking.fetch_add(1, Ordering::Relaxed);
    visit.told = check_until_told(client, shop_url, &order.order_id, &cookie, timings, live, &mut visit).await;
    live.checking.fetch_sub(1, Ordering::Relaxed);
    visit
}

async fn check_until_told(
    client: &Client,
    shop_url: &str,
    order_id: &str,
    cookie: &str,
    timings: PageTimings,
    live: &Arc<Live>,
    visit: &mut Visit,
) -> Told {
    let url = format!("{shop_url}/api/orders/{order_id}?wait={}ms", timings.check_wait.as_millis().max(1));
    let mut due = tokio::time::Instant::now();
    let mut counted = 0;
    while counted < timings.attempts {
        tokio::time::sleep_until(due).await;
        visit.send_lag_ms.push(due.elapsed().as_secs_f64() * 1000.0);
        let sent = Instant::now();
        live.waiting.fetch_add(1, Ordering::Relaxed);
        let answer =
            client.get(&url).header(reqwest::header::COOKIE, cookie).timeout(timings.check_timeout).send().await;
        let answer = match answer {
            Ok(response) if response.status() == StatusCode::TOO_MANY_REQUESTS => {
                // Not counted; asked again no sooner than the server says.
                let after = retry_after(&response).unwrap_or(timings.interval);
                Err(("check: 429".to_owned(), Some(after)))
            }
            Ok(response) if response.status().is_success() => {
                response.json::<Order>().await.map_err(|_| ("check: unreadable answer".to_owned(), None))
            }
            Ok(response) => Err((format!("check: {}", response.status().as_u16()), None)),
            Err(error) => Err((format!("check: {}", error_kind(&error)), None)),
        };
        live.waiting.fetch_sub(1, Ordering::Relaxed);
        let next = tokio::time::Instant::from_std(sent) + timings.interval;
        match answer {
            Ok(order) => {
                counted += 1;
                let told = told_by(&order);
                visit.checks.push(Check { ms: ms_since(sent), changed: told.is_some() });
                if let Some(told) = told {
                    visit.told_by_check_at_ms = Some(epoch_ms());
                    return told;
                }
                due = next.max(tokio::time::Instant::now());
            }
            Err((kind, retry_after)) => {
                if retry_after.is_none() {
                    counted += 1;
                }
                visit.errors.push(kind);
                due = next.max(tokio::time::Instant::now() + retry_after.unwrap_or_default());
            }
        }
    }
    Told::Unresolved
}

fn failed(mut visit: Visit, kind: &str) -> Visit {
    visit.errors.push(kind.to_owned());
    visit
}

/// What the page would show for this order, if it is final.
fn told_by(order: &Order) -> Option<Told> {
    match order.status {
        OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested | OrderStatus::Canceled => {
            Some(Told::Paid)
        }
        OrderStatus::Failed => Some(Told::Failed),
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown => None,
    }
}

/// The cookies the server set, as a `Cookie` header sends them back.
fn cookie_of(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok()?.split(';').next().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("; ")
}

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let seconds: u64 = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.parse().ok()?;
    Some(Duration::from_secs(seconds))
}

/// A transport error by kind, for the table.
fn error_kind(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else if error.is_body() || error.is_decode() {
        "broken answer"
    } else {
        "connection lost"
    }
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

pub fn epoch_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}
