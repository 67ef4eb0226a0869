//! The webhook benchmark: how soon an UNKNOWN payment is settled once the PG
//! finishes it, and with how many lookups, by recovery's lookups alone and
//! with Toss's webhooks. Every payment's confirm outlives the server's read
//! timeout (the fake PG holds every processing), so each is UNKNOWN; recovery
//! looks them up as it always does while the PG still works on them; then the
//! PG finishes them all at one instant, and each payment's lag is the time from
//! that instant to its UNKNOWN>PAID commit in the server's own history.
//!
//! With webhooks the server runs with `--pg-webhooks`: a payment the PG has
//! not settled yet is looked up four times less often, and a lookup a webhook
//! asked for draws first on an allowance of its own (a burst of 100) before
//! the retry budget, under the PG limit and the breaker as always: fifty
//! payments looked up before the PG finishes (`--size-scale 10`) no longer leave
//! their webhooks' lookups waiting for the retry budget's next window.

use std::path::Path;
use std::time::Duration;

use payonce_chaos::processes::Program;
use payonce_server::db::{Db, DbLocation, now_ms};
use serde::Serialize;
use serde_json::json;

use crate::run::{RunError, Spread, database, spread};

/// How the server learns that the PG finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Learning {
    /// Recovery's lookups, on their backoff.
    LookupsAlone,
    /// Recovery's lookups, and the PG's webhook bringing one forward.
    Webhooks,
}

/// The benchmark's settings, in real time (before `time_scale`).
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub payments: usize,
    /// The server's PG read timeout: each confirm gives up after it.
    pub read_timeout: Duration,
    /// The server's recovery interval (recovery's backoff is proportioned to it).
    pub recovery_interval: Duration,
    /// How long the PG goes on processing after every payment is UNKNOWN.
    pub pg_still_working: Duration,
    pub time_scale: f64,
}

impl Settings {
    pub const DEFAULT: Settings = Settings {
        payments: 5,
        read_timeout: Duration::from_secs(60),
        recovery_interval: Duration::from_secs(60),
        pg_still_working: Duration::from_secs(30),
        time_scale: 1.0,
    };

    fn scaled(&self, duration: Duration) -> Duration {
        duration.mul_f64(self.time_scale)
    }
}

/// What one condition measured.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub learning: Learning,
    pub payments: usize,
    pub settled: usize,
    /// From the PG finishing to the server's commit of PAID, in real ms.
    pub lag_ms: Spread,
    /// Lookups the PG answered over the whole run, per payment.
    pub lookups_per_payment: f64,
    /// Of them, after the PG had finished.
    pub lookups_after_finishing: u64,
    pub webhooks_delivered: u64,
}

/// Runs both conditions, one after the other.
pub async fn run(settings: Settings, bin_dir: &Path, work_dir: &Path) -> Result<Vec<Figures>, RunError> {
    let mut figures = Vec::new();
    for learning in [Learning::LookupsAlone, Learning::Webhooks] {
        figures.push(run_one(learning, settings, bin_dir, work_dir).await?);
    }
    Ok(figures)
}

async fn run_one(learning: Learning, settings: Settings, bin_dir: &Path, work_dir: &Path) -> Result<Figures, RunError> {
    let name = format!("webhooks-{learning:?}").to_lowercase();
    let db_path = work_dir.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&db_path);
    let ms = |duration: Duration| format!("{}ms", duration.as_millis().max(1));
    let pg = Program {
        binary: bin_dir.join("fake-pg"),
        args: ["--listen", "127.0.0.1:0", "--latency", "1ms"].map(str::to_owned).to_vec(),
        log: work_dir.join(format!("{name}-fake-pg.log")),
    }
    .start()
    .await?;
    let server = Program {
        binary: bin_dir.join("payonce-server"),
        args: vec![
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--admin-listen".into(),
            "127.0.0.1:0".into(),
            "--db".into(),
            db_path.display().to_string(),
            "--pg-url".into(),
            pg.url.clone(),
            "--pg-read-timeout".into(),
            ms(settings.scaled(settings.read_timeout)),
            "--recovery-interval".into(),
            ms(settings.scaled(settings.recovery_interval)),
            // The page's checking window must cover the read timeout; no page runs here.
            "--max-checks".into(),
            "1000".into(),
            "--pg-limit".into(),
            (settings.payments + 10).to_string(),
            "--rate-limit-customer".into(),
            "0".into(),
            "--rate-limit-address".into(),
            "0".into(),
            "--rate-limit-customer-reads".into(),
            "0".into(),
            "--rate-limit-address-reads".into(),
            "0".into(),
            "--rate-limit-new-customers".into(),
            "0".into(),
            "--max-waiting-checks-per-client".into(),
            "1000000".into(),
            "--max-connections".into(),
            "1000000".into(),
            "--max-connections-per-client".into(),
            "1000000".into(),
        ]
        .into_iter()
        .chain((learning == Learning::Webhooks).then(|| "--pg-webhooks".to_owned()))
        .collect(),
        log: work_dir.join(format!("{name}-server.log")),
    }
    .start()
    .await?;
    let admin = reqwest::Client::new();
    let configure = |patch: serde_json::Value| {
        let request = admin.put(format!("{}/__admin/config", pg.url)).json(&patch);
        async move { request.send().await?.error_for_status().map(|_| ()) }
    };
    let webhook_url = match learning {
        Learning::LookupsAlone => serde_json::Value::Null,
        Learning::Webhooks => json!(format!("{}/api/webhooks/toss", server.url)),
    };
    configure(json!({"hold": true, "webhook_url": webhook_url})).await?;

    // Every confirm outlives the read timeout: each payment is UNKNOWN.
    let confirms = (0..settings.payments).map(|_| confirm_one(&server.url));
    let order_ids: Vec<String> = futures::future::try_join_all(confirms).await?;
    let db = Db::open(&DbLocation::sqlite_file(&db_path), 2).await.map_err(database)?;
    for order_id in &order_ids {
        wait_for_event(&db, order_id, "UNKNOWN", Duration::from_secs(600)).await?;
    }
    tokio::time::sleep(settings.scaled(settings.pg_still_working)).await;

    let stats_url = format!("{}/__admin/stats", pg.url);
    let lookups_before = admin.get(&stats_url).send().await?.json::<fake_pg::Stats>().await?.lookups;
    let finished_at_ms = now_ms();
    configure(json!({"hold": false})).await?;

    let mut lags = Vec::new();
    for order_id in &order_ids {
        if let Some(paid_at_ms) = wait_for_event(&db, order_id, "PAID", Duration::from_secs(600)).await? {
            lags.push((paid_at_ms - finished_at_ms) as f64);
        }
    }
    let stats = admin.get(&stats_url).send().await?.json::<fake_pg::Stats>().await?;
    drop(server.kill().await);
    drop(pg.kill().await);
    Ok(Figures {
        learning,
        payments: settings.payments,
        settled: lags.len(),
        lag_ms: spread(lags),
        lookups_per_payment: stats.lookups as f64 / settings.payments as f64,
        lookups_after_finishing: stats.lookups - lookups_before,
        webhooks_delivered: stats.webhooks_delivered,
    })
}

/// When the order's attempt first became `status`, waiting up to `within` for it.
async fn wait_for_event(db: &Db, order_id: &str, status: &str, within: Duration) -> Result<Option<i64>, RunError> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let events = db.history(order_id).await.map_err(database)?;
        if let Some(event) = events.iter().find(|event| event.to_status == status) {
            return Ok(Some(event.at_ms));
        }
        if tokio::time::Instant::now() > deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A new customer creates an order and confirms it; the answer is UNKNOWN
/// once the read timeout passes. Each customer has a browser of their own:
/// customers sharing one cookie jar while their first orders are under way
/// would each be given a cookie, and a confirm could carry another's and be
/// told 404, as the order is not theirs.
async fn confirm_one(shop: &str) -> Result<String, RunError> {
    let customer = reqwest::Client::builder().cookie_store(true).build()?;
    let order: payonce_api::Order = customer
        .post(format!("{shop}/api/orders"))
        .json(&json!({"items": [{"sku": "TEA-TOWEL", "quantity": 1}]}))
        .send()
        .await?
        .error_for_status()?
        .json::<payonce_api::CreatedOrder>()
        .await?
        .order;
    customer
        .post(format!("{shop}/api/orders/{}/confirm", order.order_id))
        .header("Idempotency-Key", format!("bench-{}", order.order_id))
        .json(&json!({"payment_key": format!("pk_{}", order.order_id), "amount": order.amount}))
        .send()
        .await?
        .error_for_status()?;
    Ok(order.order_id)
}

/// The table the benchmark prints.
pub fn table(figures: &[Figures]) -> String {
    let mut out = String::from(
        "| learning | payments | settled | lag p50 ms | lag p95 ms | lag max ms | lookups per payment | lookups after the PG finished | webhooks delivered |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for run in figures {
        out.push_str(&format!(
            "| {:?} | {} | {} | {:.0} | {:.0} | {:.0} | {:.2} | {} | {} |\n",
            run.learning,
            run.payments,
            run.settled,
            run.lag_ms.p50,
            run.lag_ms.p95,
            run.lag_ms.max,
            run.lookups_per_payment,
            run.lookups_after_finishing,
            run.webhooks_delivered,
        ));
    }
    out
}
