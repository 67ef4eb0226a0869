//! One run of one condition: the real fake PG and order server, customers who
//! behave like the confirm page, a sampler of what happens over time, and a
//! background customer whose reads measure the API's latency.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use payonce_chaos::customer::{self, PageTimings};
use payonce_chaos::processes::{ProcessError, Program, Running};
use payonce_server::db::{Db, DbLocation};
use serde::Serialize;

use crate::scenario::{Condition, Experiment, Scale};

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("cannot reach a server: {0}")]
    Http(#[from] reqwest::Error),
    #[error("cannot read the orders: {0}")]
    Database(String),
    #[error("cannot write the run's files: {0}")]
    Files(#[from] std::io::Error),
    #[error("{0}")]
    Unexpected(String),
}

/// One moment of a run.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Sample {
    /// Seconds since the first customer, in the experiment's own (unscaled) time.
    pub t: f64,
    /// Orders paid so far.
    pub sold: i64,
    /// Confirms the PG is processing, abandoned ones included.
    pub pg_in_processing: u64,
    /// Payments whose outcome the server does not know (UNKNOWN; a PENDING one is still being asked).
    pub unknown: i64,
    /// Confirms refused so far for the PG's capacity: by the PG (429) and by the server (PG_BUSY).
    pub rejections: u64,
    /// The server's PG concurrency limit.
    pub limit: f64,
    /// The server's calls waiting on the PG.
    pub server_waiting: f64,
}

/// Latencies, in ms.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Spread {
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub condition: Condition,
    pub customers: usize,
    pub paid: usize,
    /// Failed orders by failure code.
    pub failed: BTreeMap<String, usize>,
    /// Confirms customers' requests sent to the PG.
    pub first_calls: u64,
    /// Recovery's calls: lookups, and confirms it resent.
    pub recovery_lookups: u64,
    pub recovery_resends: u64,
    /// Every confirm the PG received (first calls and resends).
    pub pg_confirms: u64,
    /// The PG's 429s for its contract limit.
    pub contract_limit_rejections: u64,
    /// The server's refusals at its own limit (nothing sent).
    pub pg_busy: u64,
    /// Share of payments that went through UNKNOWN.
    pub unknown_share: f64,
    /// From the confirm to the final status, in the experiment's own time.
    pub time_to_final_ms: Spread,
    pub peak_pg_in_processing: u64,
    pub peak_server_waiting: f64,
    /// A background customer's reads of an order: with an idle PG, and during the run.
    pub api_idle_ms: Spread,
    pub api_loaded_ms: Spread,
    /// The server's own p95 for every read of an order during the run (its
    /// handling time, without the network and the client), in ms.
    pub server_read_p95_ms: f64,
    /// Payments still unsettled when the run gave up waiting.
    pub left_unsettled: i64,
    pub double_charges: usize,
    /// Charges without a PAID order, or PAID orders without a charge.
    pub ledger_mismatches: usize,
    pub series: Vec<Sample>,
}

/// Runs one condition of an experiment to its figures.
pub async fn run(
    experiment: &Experiment,
    condition: &Condition,
    scale: Scale,
    bin_dir: &Path,
    work_dir: &Path,
) -> Result<Figures, RunError> {
    let pg = pg_program(experiment, condition, scale, bin_dir, work_dir).start().await?;
    let db_path = work_dir.join(format!("{}.db", slug(condition.name)));
    let server = server_program(experiment, condition, scale, bin_dir, work_dir, &pg.url, &db_path).start().await?;
    let stack = Stack::new(pg, server, &db_path).await?;
    let timings = PageTimings {
        confirm_wait: scale.duration(Duration::from_secs(15)),
        check_interval: scale.duration(Duration::from_secs(2)),
        max_checks: 25,
        check_timeout: scale.duration(Duration::from_secs(5)),
    };

    // The background customer, first with an idle PG.
    let reader = Reader::start(&stack.shop_url).await?;
    tokio::time::sleep(scale.duration(Duration::from_secs(10)).max(Duration::from_secs(2))).await;
    let api_idle_ms = reader.take();

    let started = Instant::now();
    let series = Arc::new(Mutex::new(Vec::new()));
    let sampling = tokio::spawn(sample(stack.clone(), scale, started, series.clone()));
    let arrivals = scale.arrivals(&experiment.phases);
    let customers = arrivals.len();
    let visits: Vec<_> = arrivals
        .into_iter()
        .map(|arrival| {
            let url = stack.shop_url.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(tokio::time::Instant::from_std(started + arrival)).await;
                // The timeout experiment is about Toss's confirm.
                customer::visit(url.as_str(), timings, timings.check_interval, payonce_api::Pg::Toss).await
            })
        })
        .collect();
    for visit in visits {
        let _ = visit.await;
    }
    let api_loaded_ms = reader.take();
    reader.stop();

    let deadline = Instant::now() + scale.duration(Duration::from_secs(30 * 60));
    let db = stack.db.clone();
    let left_unsettled = loop {
        let unsettled = db.count_unsettled().await.map_err(database)?;
        if unsettled == 0 || Instant::now() >= deadline {
            break unsettled;
        }
        tokio::time::sleep(scale.duration(Duration::from_secs(1)).max(Duration::from_millis(100))).await;
    };
    sampling.abort();
    let last = stack.sample(scale, started).await?;
    series.lock().expect("series lock").push(last);

    let figures =
        stack.figures(condition.clone(), customers, api_idle_ms, api_loaded_ms, left_unsettled, scale).await?;
    let series = std::mem::take(&mut *series.lock().expect("series lock"));
    let peak_server_waiting = series.iter().map(|sample| sample.server_waiting).fold(0.0, f64::max);
    Ok(Figures { series, peak_server_waiting, ..figures })
}

pub(crate) fn database(error: impl std::fmt::Display) -> RunError {
    RunError::Database(error.to_string())
}

/// A name fit for a file.
pub fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

fn millis(duration: Duration) -> String {
    format!("{}ms", duration.as_millis().max(1))
}

fn pg_program(
    experiment: &Experiment,
    condition: &Condition,
    scale: Scale,
    bin_dir: &Path,
    work_dir: &Path,
) -> Program {
    let mut args = vec![
        "--listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--latency".to_owned(),
        millis(experiment.pg.latency),
        "--time-scale".to_owned(),
        scale.time.to_string(),
    ];
    if let Some((share, latency)) = experiment.pg.slow {
        args.extend(["--slow-tail".to_owned(), format!("{share}:{}", millis(latency))]);
    }
    if condition.contract_limit {
        args.extend(["--contract-limit".to_owned(), scale.count(experiment.pg.contract_limit).to_string()]);
    }
    let log = work_dir.join(format!("fake-pg-{}.log", slug(condition.name)));
    Program { binary: bin_dir.join("fake-pg"), args, log }
}

fn server_program(
    experiment: &Experiment,
    condition: &Condition,
    scale: Scale,
    bin_dir: &Path,
    work_dir: &Path,
    pg_url: &str,
    db_path: &Path,
) -> Program {
    let scaled = |duration: Duration| millis(scale.duration(duration));
    let limit = condition.limit.map_or_else(|| "auto".to_owned(), |limit| scale.count(limit).to_string());
    let args = vec![
        "--listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--admin-listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--db".to_owned(),
        db_path.display().to_string(),
        "--pg-url".to_owned(),
        pg_url.to_owned(),
        "--pg-read-timeout".to_owned(),
        scaled(condition.read_timeout),
        "--pg-connect-timeout".to_owned(),
        scaled(Duration::from_secs(3)),
        "--confirm-wait".to_owned(),
        scaled(Duration::from_secs(15)),
        "--check-interval".to_owned(),
        scaled(Duration::from_secs(2)),
        "--max-checks".to_owned(),
        "25".to_owned(),
        "--recovery-interval".to_owned(),
        scaled(experiment.recovery_interval),
        "--pg-limit".to_owned(),
        limit,
        "--pg-limit-window".to_owned(),
        scaled(Duration::from_secs(5)),
        // Every customer comes from this machine: no rate limits in an experiment.
        "--rate-limit-customer".to_owned(),
        "0".to_owned(),
        "--rate-limit-address".to_owned(),
        "0".to_owned(),
        "--rate-limit-customer-reads".to_owned(),
        "0".to_owned(),
        "--rate-limit-address-reads".to_owned(),
        "0".to_owned(),
        "--rate-limit-new-customers".to_owned(),
        "0".to_owned(),
        "--max-waiting-checks-per-client".to_owned(),
        "1000000".to_owned(),
        "--max-connections".to_owned(),
        "1000000".to_owned(),
        "--max-connections-per-client".to_owned(),
        "1000000".to_owned(),
    ];
    let log = work_dir.join(format!("server-{}.log", slug(condition.name)));
    Program { binary: bin_dir.join("payonce-server"), args, log }
}

/// The running fake PG and order server of one run.
#[derive(Clone)]
struct Stack {
    shop_url: String,
    admin_url: String,
    pg_url: String,
    db: Db,
    http: reqwest::Client,
    _processes: Arc<(Running, Running)>,
}

impl Stack {
    async fn new(pg: Running, server: Running, db_path: &Path) -> Result<Self, RunError> {
        let shop_url = server.url.clone();
        let admin_url = server.urls.get(1).cloned().unwrap_or_else(|| shop_url.clone());
        let pg_url = pg.url.clone();
        let http = reqwest::Client::new();
        // The server migrates its database before it serves: wait for that.
        let mut tries = 0;
        while http.get(format!("{shop_url}/healthz")).send().await.is_err() {
            tries += 1;
            if tries > 300 {
                return Err(RunError::Database("the order server never became healthy".to_owned()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let db = Db::open(&DbLocation::sqlite_file(db_path), 2).await.map_err(database)?;
        Ok(Self { shop_url, admin_url, pg_url, db, http, _processes: Arc::new((pg, server)) })
    }

    async fn pg_stats(&self) -> Result<fake_pg::Stats, RunError> {
        Ok(self.http.get(format!("{}/__admin/stats", self.pg_url)).send().await?.json().await?)
    }

    async fn metrics(&self) -> Result<String, RunError> {
        Ok(self.http.get(format!("{}/metrics", self.admin_url)).send().await?.text().await?)
    }

    async fn sample(&self, scale: Scale, started: Instant) -> Result<Sample, RunError> {
        let stats = self.pg_stats().await?;
        let metrics = self.metrics().await?;
        let counts: BTreeMap<String, i64> = self.db.status_counts().await.map_err(database)?.into_iter().collect();
        Ok(Sample {
            t: started.elapsed().as_secs_f64() / scale.time,
            sold: counts.get("PAID").copied().unwrap_or(0),
            pg_in_processing: stats.in_flight,
            unknown: counts.get("UNKNOWN").copied().unwrap_or(0),
            rejections: stats.contract_limit_rejections
                + metric(&metrics, "payment_pg_confirm_calls_total", "outcome=\"busy\"") as u64,
            // The experiment pays by card: Toss's limit, Toss's calls.
            limit: metric(&metrics, "payment_pg_limit", "pg=\"toss\""),
            server_waiting: metric(&metrics, "payment_pg_in_flight", "pg=\"toss\""),
        })
    }

    async fn figures(
        &self,
        condition: Condition,
        customers: usize,
        api_idle_ms: Spread,
        api_loaded_ms: Spread,
        left_unsettled: i64,
        scale: Scale,
    ) -> Result<Figures, RunError> {
        let stats = self.pg_stats().await?;
        let metrics = self.metrics().await?;
        let payments = self.db.payment_summaries().await.map_err(database)?;
        let paid: Vec<_> = payments.iter().filter(|payment| payment.status == "PAID").collect();
        let mut failed = BTreeMap::new();
        for payment in payments.iter().filter(|payment| payment.status == "FAILED") {
            *failed.entry(payment.failure_code.clone().unwrap_or_default()).or_insert(0) += 1;
        }
        let through_unknown = payments.iter().filter(|payment| payment.went_through_unknown).count();
        // Payments sent to the PG: a refusal at the server's own limit is final at once.
        let settled: Vec<f64> = payments
            .iter()
            .filter(|payment| payment.status != "PENDING" && payment.status != "UNKNOWN")
            .filter(|payment| payment.failure_code.as_deref() != Some("PG_BUSY"))
            .map(|payment| (payment.last_ms - payment.first_ms) as f64 / scale.time)
            .collect();
        let charged: usize = stats.charges_by_order.values().map(|charges| *charges as usize).sum();
        let paid_and_charged = paid
            .iter()
            .filter(|payment| stats.charges_by_order.get(&payment.order_id).is_some_and(|c| *c >= 1))
            .count();
        let busy = metric(&metrics, "payment_pg_confirm_calls_total", "outcome=\"busy\"") as u64;
        Ok(Figures {
            condition,
            customers,
            paid: paid.len(),
            failed,
            first_calls: metric(&metrics, "payment_pg_confirm_calls_total", "") as u64 - busy,
            recovery_lookups: metric(&metrics, "payment_pg_recovery_calls_total", "call=\"lookup\"") as u64,
            recovery_resends: metric(&metrics, "payment_pg_recovery_calls_total", "call=\"resend\"") as u64,
            pg_confirms: stats.confirm_requests,
            contract_limit_rejections: stats.contract_limit_rejections,
            pg_busy: busy,
            unknown_share: through_unknown as f64 / payments.len().max(1) as f64,
            time_to_final_ms: spread(settled),
            peak_pg_in_processing: stats.peak_in_flight,
            peak_server_waiting: 0.0,
            api_idle_ms,
            api_loaded_ms,
            server_read_p95_ms: 1000.0
                * metric(
                    &metrics,
                    "http_request_duration_seconds",
                    "route=\"/api/orders/{order_id}\",quantile=\"0.95\"",
                ),
            left_unsettled,
            double_charges: stats.double_charges.len(),
            ledger_mismatches: (charged - paid_and_charged) + (paid.len() - paid_and_charged),
            series: Vec::new(),
        })
    }
}

/// Samples the run about once a second of its own time, until aborted.
async fn sample(stack: Stack, scale: Scale, started: Instant, series: Arc<Mutex<Vec<Sample>>>) {
    let tick = scale.duration(Duration::from_secs(1)).max(Duration::from_millis(100));
    loop {
        if let Ok(sample) = stack.sample(scale, started).await {
            series.lock().expect("series lock").push(sample);
        }
        tokio::time::sleep(tick).await;
    }
}

/// The sum of a metric's lines whose labels contain `labels`.
fn metric(text: &str, name: &str, labels: &str) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(name) && !line.starts_with(&format!("{name}_")) && line.contains(labels))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// p50, p95 and max of `values`.
pub fn spread(mut values: Vec<f64>) -> Spread {
    if values.is_empty() {
        return Spread::default();
    }
    values.sort_by(f64::total_cmp);
    Spread { p50: nearest_rank(&values, 0.5), p95: nearest_rank(&values, 0.95), max: values[values.len() - 1] }
}

/// The `q` quantile of `sorted` (ascending, not empty), by nearest rank.
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// A customer who keeps reading one order of theirs, timing each read.
struct Reader {
    latencies: Arc<Mutex<Vec<f64>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Reader {
    async fn start(shop_url: &str) -> Result<Self, RunError> {
        let client = reqwest::Client::builder().cookie_store(true).build()?;
        let order: payonce_api::Order = client
            .post(format!("{shop_url}/api/orders"))
            .json(&serde_json::json!({"items": [{"sku": "TEA-TOWEL", "quantity": 1}]}))
            .send()
            .await?
            .json()
            .await?;
        let url = format!("{shop_url}/api/orders/{}", order.order_id);
        let latencies = Arc::new(Mutex::new(Vec::new()));
        let recorded = latencies.clone();
        let task = tokio::spawn(async move {
            loop {
                let started = Instant::now();
                if client.get(&url).send().await.is_ok() {
                    recorded.lock().expect("reader lock").push(started.elapsed().as_secs_f64() * 1000.0);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Ok(Self { latencies, task })
    }

    /// The latencies since the last take.
    fn take(&self) -> Spread {
        spread(std::mem::take(&mut *self.latencies.lock().expect("reader lock")))
    }

    fn stop(self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_summed_by_name_and_labels_only() {
        let text = "payment_pg_confirm_calls_total{outcome=\"busy\"} 3\n\
                    payment_pg_confirm_calls_total{outcome=\"paid\"} 5\n\
                    payment_pg_confirm_calls_total_other 100\n";
        assert_eq!(metric(text, "payment_pg_confirm_calls_total", ""), 8.0);
        assert_eq!(metric(text, "payment_pg_confirm_calls_total", "outcome=\"busy\""), 3.0);
    }

    #[test]
    fn a_spread_takes_nearest_ranks() {
        let spread = spread((1..=100).map(f64::from).collect());
        assert_eq!((spread.p50, spread.p95, spread.max), (50.0, 95.0, 100.0));
    }
}
