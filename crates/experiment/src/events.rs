//! The events benchmark: how soon a shop hears of its payments, and what a
//! shop's outage costs. One order server with one shop whose endpoint runs in
//! this process; customers pay checkouts at a steady rate (create through the
//! shop API, open the link, confirm), as the shop's customers would.
//!
//! 1. **Healthy**: the endpoint takes every event. Each event's lag is from
//!    the commit of its change (the event's `timestamp`) to the endpoint
//!    receiving it, both read from this machine's clock.
//! 2. **Outage**: the endpoint answers 503 while payments go on until the
//!    backlog has piled up.
//! 3. **Return**: the endpoint takes events again: how long until the whole
//!    backlog is delivered.
//!
//! Customers' confirms are timed throughout: the outage must not slow them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use payonce_chaos::processes::Program;
use payonce_server::db::now_ms;
use serde::Serialize;
use serde_json::json;

use crate::run::{RunError, nearest_rank};

/// The benchmark's settings, at full size (before the scales).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Settings {
    /// Payments settled per second, in every phase.
    pub per_second: f64,
    /// How long the healthy phase lasts.
    pub healthy_for: Duration,
    /// How many events pile up while the endpoint is down (at the rate
    /// above, the outage lasts `backlog / per_second`).
    pub backlog: usize,
    pub time_scale: f64,
    pub size_scale: f64,
}

impl Settings {
    pub const DEFAULT: Settings = Settings {
        per_second: 500.0,
        healthy_for: Duration::from_secs(20),
        backlog: 10_000,
        time_scale: 1.0,
        size_scale: 1.0,
    };

    fn rate(&self) -> f64 {
        self.per_second * self.size_scale
    }

    fn healthy_payments(&self) -> usize {
        (self.rate() * self.healthy_for.mul_f64(self.time_scale).as_secs_f64()).round().max(1.0) as usize
    }

    /// The backlog scales with time too: the outage lasts as long at any size.
    fn backlog_payments(&self) -> usize {
        ((self.backlog as f64 * self.size_scale * self.time_scale).round() as usize).max(1)
    }
}

/// What the benchmark measured.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub settings: Settings,
    /// Payments paid in each phase, and how many per second they came to.
    pub healthy_paid: usize,
    pub healthy_per_second: f64,
    pub outage_paid: usize,
    pub outage_per_second: f64,
    /// From the commit to the endpoint, over the healthy phase's events.
    pub lag_ms: Quantiles,
    /// From the endpoint's return until every event of the outage was delivered.
    pub backlog_drained_ms: Option<f64>,
    /// Customers' confirms, healthy and during the outage.
    pub confirm_healthy_ms: Quantiles,
    pub confirm_outage_ms: Quantiles,
    /// Sends the endpoint refused during the outage (probes).
    pub refused_sends: u64,
    /// Deliveries of an event already delivered.
    pub duplicates: u64,
    /// Payments whose confirm did not answer PAID.
    pub not_paid: usize,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Quantiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

fn quantiles(mut values: Vec<f64>) -> Quantiles {
    if values.is_empty() {
        return Quantiles::default();
    }
    values.sort_by(f64::total_cmp);
    Quantiles { p50: nearest_rank(&values, 0.5), p99: nearest_rank(&values, 0.99), max: values[values.len() - 1] }
}

/// The shop's endpoint: what it received, and whether it is up.
#[derive(Default)]
struct Endpoint {
    up: AtomicBool,
    /// Each event's first delivery: (received at, the event's commit time), in ms.
    received: Mutex<HashMap<String, (i64, i64)>>,
    refused: std::sync::atomic::AtomicU64,
    duplicates: std::sync::atomic::AtomicU64,
}

async fn receive(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap, body: String) -> StatusCode {
    if !endpoint.up.load(Ordering::SeqCst) {
        endpoint.refused.fetch_add(1, Ordering::Relaxed);
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let now = now_ms();
    let id = headers.get("webhook-id").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    let committed = serde_json::from_str::<payonce_api::Event>(&body)
        .ok()
        .and_then(|event| humantime::parse_rfc3339(&event.timestamp).ok())
        .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(now, |since| since.as_millis() as i64);
    let mut received = endpoint.received.lock().expect("endpoint lock");
    if received.insert(id, (now, committed)).is_some() {
        endpoint.duplicates.fetch_add(1, Ordering::Relaxed);
    }
    StatusCode::NO_CONTENT
}

const SHOP_KEY: &str = "sk_bench_0123456789abcdefghijklmnopqrstuvwxyz";

/// Runs the three phases.
pub async fn run(settings: Settings, bin_dir: &Path, work_dir: &Path) -> Result<Figures, RunError> {
    let endpoint = Arc::new(Endpoint::default());
    endpoint.up.store(true, Ordering::SeqCst);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let events_url = format!("http://{}/events", listener.local_addr()?);
    let app = axum::Router::new().route("/events", axum::routing::post(receive)).with_state(endpoint.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let secret = payonce_server::shops::new_events_secret();
    std::fs::write(work_dir.join("events.secret"), &secret)?;
    let digest = payonce_server::shops::key_digest(SHOP_KEY);
    let shops = format!(
        "[[shop]]\nid = \"bench\"\nname = \"Bench\"\norder_id_prefix = \"ord_bench_\"\nreturn_origins = [\"https://bench.example\"]\n\
         pay_with = [\"toss\"]\nkey_digests = [\"{digest}\"]\nrequests_per_minute = 100000000\n\
         events_url = \"{events_url}\"\nevents_secret_file = \"events.secret\"\n"
    );
    std::fs::write(work_dir.join("shops.toml"), shops)?;
    let db_path = work_dir.join("events.db");
    let _ = std::fs::remove_file(&db_path);
    let pg = Program {
        binary: bin_dir.join("fake-pg"),
        args: ["--listen", "127.0.0.1:0", "--latency", "1ms"].map(str::to_owned).to_vec(),
        log: work_dir.join("events-fake-pg.log"),
    }
    .start()
    .await?;
    let mut args: Vec<String> = [
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--pg-limit",
        "200",
        "--rate-limit-customer",
        "0",
        "--rate-limit-address",
        "0",
        "--rate-limit-customer-reads",
        "0",
        "--rate-limit-address-reads",
        "0",
        "--rate-limit-new-customers",
        "0",
        "--max-connections",
        "1000000",
        "--max-connections-per-client",
        "1000000",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(["--db".to_owned(), db_path.display().to_string(), "--pg-url".to_owned(), pg.url.clone()]);
    args.extend(["--shops-file".to_owned(), work_dir.join("shops.toml").display().to_string()]);
    let server = Program { binary: bin_dir.join("payonce-server"), args, log: work_dir.join("events-server.log") }
        .start()
        .await?;
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).build()?;

    let healthy = pay_at_rate(&client, &server.url, settings.rate(), settings.healthy_payments()).await;
    let healthy_ids: Vec<String> = {
        // Every healthy event in before the outage starts.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let delivered = endpoint.received.lock().expect("endpoint lock").len();
            if delivered >= healthy.paid.len() || Instant::now() > deadline {
                break endpoint.received.lock().expect("endpoint lock").keys().cloned().collect();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let lags: Vec<f64> = {
        let received = endpoint.received.lock().expect("endpoint lock");
        healthy_ids.iter().filter_map(|id| received.get(id)).map(|(at, committed)| (at - committed) as f64).collect()
    };

    endpoint.up.store(false, Ordering::SeqCst);
    let outage = pay_at_rate(&client, &server.url, settings.rate(), settings.backlog_payments()).await;
    let returned = Instant::now();
    endpoint.up.store(true, Ordering::SeqCst);
    let wanted = healthy_ids.len() + outage.paid.len();
    let deadline = returned + Duration::from_secs(600);
    let backlog_drained_ms = loop {
        if endpoint.received.lock().expect("endpoint lock").len() >= wanted {
            break Some(returned.elapsed().as_secs_f64() * 1000.0);
        }
        if Instant::now() > deadline {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    drop(server.kill().await);
    drop(pg.kill().await);
    Ok(Figures {
        settings,
        healthy_paid: healthy.paid.len(),
        healthy_per_second: healthy.paid.len() as f64 / healthy.took.as_secs_f64(),
        outage_paid: outage.paid.len(),
        outage_per_second: outage.paid.len() as f64 / outage.took.as_secs_f64(),
        lag_ms: quantiles(lags),
        backlog_drained_ms,
        confirm_healthy_ms: quantiles(healthy.confirm_ms),
        confirm_outage_ms: quantiles(outage.confirm_ms),
        refused_sends: endpoint.refused.load(Ordering::Relaxed),
        duplicates: endpoint.duplicates.load(Ordering::Relaxed),
        not_paid: healthy.not_paid + outage.not_paid,
    })
}

/// One phase's payments.
struct Phase {
    paid: Vec<String>,
    not_paid: usize,
    confirm_ms: Vec<f64>,
    took: Duration,
}

/// Starts `count` payments, `per_second` of them a second, each in a task of
/// its own (arrivals do not wait for answers), and waits for them all.
async fn pay_at_rate(client: &reqwest::Client, server: &str, per_second: f64, count: usize) -> Phase {
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(count);
    for n in 0..count {
        let due = started + Duration::from_secs_f64(n as f64 / per_second);
        tokio::time::sleep_until(due.into()).await;
        let (client, server) = (client.clone(), server.to_owned());
        tasks.push(tokio::spawn(async move { pay_one(&client, &server).await }));
    }
    let mut phase = Phase { paid: Vec::new(), not_paid: 0, confirm_ms: Vec::new(), took: Duration::ZERO };
    for task in tasks {
        match task.await {
            Ok(Ok((checkout_id, confirm_ms))) => {
                phase.paid.push(checkout_id);
                phase.confirm_ms.push(confirm_ms);
            }
            _ => phase.not_paid += 1,
        }
    }
    phase.took = started.elapsed();
    phase
}

/// A shop's customer: the checkout made by the shop's backend, its link
/// opened, the payment confirmed. Answers the checkout and how long the confirm took.
async fn pay_one(client: &reqwest::Client, server: &str) -> Result<(String, f64), RunError> {
    let checkout: payonce_api::Checkout = client
        .post(format!("{server}/v1/checkouts"))
        .bearer_auth(SHOP_KEY)
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&json!({
            "reference": uuid::Uuid::new_v4().simple().to_string(),
            "name": {"en": "A book"},
            "lines": [{"name": "A book", "quantity": 1, "unit_amount": 15_000}],
            "amount": 15_000,
            "return_url": "https://bench.example/back",
        }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let token = checkout.next_url.as_deref().and_then(|url| url.split_once('#')).map_or("", |(_, token)| token);
    let claimed = client
        .post(format!("{server}/api/checkouts/{}/claim", checkout.id))
        .json(&json!({"token": token}))
        .send()
        .await?
        .error_for_status()?;
    let cookie = claimed
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok()?.split(';').next().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("; ");
    let started = Instant::now();
    let confirmed: payonce_api::Order = client
        .post(format!("{server}/api/orders/{}/confirm", checkout.id))
        .header(reqwest::header::COOKIE, cookie)
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&json!({"payment_key": format!("pk_{}", checkout.id), "amount": checkout.amount}))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let took = started.elapsed().as_secs_f64() * 1000.0;
    if confirmed.status != payonce_api::OrderStatus::Paid {
        return Err(RunError::Unexpected(format!("{} came back {:?}", checkout.id, confirmed.status)));
    }
    Ok((checkout.id, took))
}

/// The table the benchmark prints.
pub fn table(figures: &Figures) -> String {
    let drained =
        figures.backlog_drained_ms.map_or_else(|| "not within 10 min".to_owned(), |ms| format!("{:.1} s", ms / 1000.0));
    format!(
        "| phase | paid | per second | confirm p50 ms | confirm p99 ms | event lag p50 ms | event lag p99 ms | event lag max ms |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n\
         | healthy | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |\n\
         | endpoint down | {} | {:.0} | {:.1} | {:.1} | | | |\n\n\
         backlog of {} events delivered {} after the endpoint's return; {} sends refused while it was down; {} duplicates; {} payments not paid\n",
        figures.healthy_paid,
        figures.healthy_per_second,
        figures.confirm_healthy_ms.p50,
        figures.confirm_healthy_ms.p99,
        figures.lag_ms.p50,
        figures.lag_ms.p99,
        figures.lag_ms.max,
        figures.outage_paid,
        figures.outage_per_second,
        figures.confirm_outage_ms.p50,
        figures.confirm_outage_ms.p99,
        figures.outage_paid,
        drained,
        figures.refused_sends,
        figures.duplicates,
        figures.not_paid,
    )
}
