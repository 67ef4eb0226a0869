//! `payonce-experiment flash-sale`: what one order server carries when
//! thousands of customers sit on the checking page at once. For each number of
//! customers, a fresh fake PG and server (SQLite); the customers arrive at a
//! steady rate, each creates an order and runs the page's own flow (confirm,
//! wait, check) while the PG takes its time; a probe customer reads its own order all
//! along. Measured from outside the server: its memory and CPU from `/proc`,
//! the customers' answers, and the time from the server committing a payment
//! to the waiting check that tells it.
//!
//! - `customer`: one customer, the page's rhythm, on a shared client.
//! - `machine`: memory and CPU of a process, from `/proc`.
//! - `report`: the table and the chart.

pub mod customer;
pub mod machine;
pub mod report;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use payonce_chaos::processes::Program;
use payonce_server::db::{Db, DbLocation};
use serde::Serialize;

use self::customer::{Live, PageTimings, Visit};
use crate::run::{RunError, database};

/// What a flash sale is made of, in real units; scaled by `time` and `size`.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The numbers of customers, one run each.
    pub customers: Vec<u32>,
    /// How fast customers arrive (the orders per second asked of the server).
    pub arrivals_per_second: f64,
    /// How long the PG takes to approve.
    pub pg_latency: Duration,
    /// The PG's contract limit (confirms in processing at once); `None`: no limit,
    /// and the server's own limit fixed high enough for every customer.
    pub pg_contract_limit: Option<u32>,
    /// The server's `--max-waiting-checks`.
    pub max_waiting_checks: u32,
    /// The server's calls to the PG share one HTTP/2 connection (`--pg-http2`),
    /// and the PG takes as many streams on it as there are customers.
    pub pg_http2: bool,
    pub time_scale: f64,
    pub size_scale: f64,
    pub deployment: Deployment,
}

/// Where the customers go.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Deployment {
    /// For each run, a fresh fake PG and one order server on SQLite, started here.
    OneServer,
    /// Order servers started by someone else (`scripts/experiment-flash-sale-cluster.sh`
    /// starts three on PostgreSQL behind haproxy), measured as they are, for one run.
    Running(RunningServers),
}

/// What the experiment needs to know of servers it did not start.
#[derive(Debug, Clone, Serialize)]
pub struct RunningServers {
    /// Where customers go: the balancer.
    pub shop_url: String,
    /// The fake PG behind the servers, asked for its peak in processing.
    pub pg_url: String,
    /// Each server's admin URL, for its metrics.
    pub admin_urls: Vec<String>,
    /// Each server's process, for its memory and CPU.
    pub server_pids: Vec<u32>,
    /// The servers' database, for the time each payment was committed.
    pub database_url: String,
}

impl Settings {
    fn duration(&self, real: Duration) -> Duration {
        real.mul_f64(self.time_scale)
    }

    fn count(&self, real: u32) -> u32 {
        ((f64::from(real) * self.size_scale).round() as u32).max(1)
    }

    fn timings(&self) -> PageTimings {
        let interval = self.duration(Duration::from_secs(2));
        PageTimings {
            confirm_wait: self.duration(Duration::from_secs(15)),
            interval,
            attempts: 25,
            check_wait: interval.min(Duration::from_secs(2)),
            // The page gives a check 5 s past its wait, at any time scale.
            check_timeout: Duration::from_secs(5),
        }
    }
}

/// Nearest-rank quantiles of a set of values, in ms unless said otherwise.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Quantiles {
    pub count: usize,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    pub fn of(mut values: Vec<f64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
        Self { count: values.len(), p50: at(0.5), p99: at(0.99), max: values[values.len() - 1] }
    }
}

/// One moment of a run, every 250 ms.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Sample {
    /// Seconds since the first customer arrived.
    pub t: f64,
    pub checking: i64,
    pub waiting: i64,
    pub server_rss_mb: f64,
    /// The server's CPU since the last sample, in cores.
    pub server_cpu: f64,
    /// The load generator's (this process's) CPU since the last sample, in cores.
    pub generator_cpu: f64,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub customers: u32,
    pub orders_per_second: f64,
    pub confirms_per_second: f64,
    pub create_ms: Quantiles,
    /// The confirm's answer time less the PG's latency, for confirms answered in time.
    pub confirm_overhead_ms: Quantiles,
    /// Most customers checking at once, and most checks waiting at once (both counted by the customers).
    pub peak_checking: i64,
    pub peak_waiting: i64,
    pub server_rss_idle_mb: f64,
    pub server_rss_peak_mb: f64,
    /// (Peak RSS - idle RSS) / peak waiting checks, in KB.
    pub per_waiting_check_kb: f64,
    /// The server's mean CPU while customers were checking, and its highest sample, in cores.
    pub server_cpu_mean: f64,
    pub server_cpu_peak: f64,
    /// Checks answered without a change: their time past the wait they asked for.
    pub unchanged_past_wait_ms: Quantiles,
    /// Checks answered well before their wait with no change: no waiting place was free.
    pub answered_at_once: usize,
    /// Checks that brought the final status.
    pub changed_ms: Quantiles,
    /// From the server committing the final status to the waiting check that told it.
    pub commit_to_answer_ms: Quantiles,
    /// The probe customer's reads of its own order: before the customers, and while most were checking.
    pub probe_idle_ms: Quantiles,
    pub probe_loaded_ms: Quantiles,
    /// How late the load generator sent checks after they were due, and its mean CPU.
    pub generator_send_lag_ms: Quantiles,
    pub generator_cpu_mean: f64,
    pub told: BTreeMap<String, usize>,
    /// Every error the customers met, by kind (a 5xx is `... 5xx`).
    pub errors: BTreeMap<String, usize>,
    /// The servers' own count of checks that found no waiting place, by why.
    pub no_place: BTreeMap<String, u64>,
    /// Checks each server answered (one number per server): how the balancer spread them.
    pub checks_by_server: Vec<u64>,
    /// Most confirms the PG had in processing at once.
    pub pg_peak_in_flight: u64,
    /// The calls the PG took, by the HTTP version they came in.
    pub pg_http_versions: BTreeMap<String, u64>,
    pub series: Vec<Sample>,
}

impl Figures {
    /// Whether any answer was a 5xx.
    pub fn server_errors(&self) -> usize {
        let is_5xx = |kind: &str| kind.rsplit(' ').next().is_some_and(|code| code.len() == 3 && code.starts_with('5'));
        self.errors.iter().filter(|(kind, _)| is_5xx(kind)).map(|(_, count)| count).sum()
    }
}

/// Runs every step of the sale, one after another.
pub async fn run(settings: &Settings, bin_dir: &Path, work_dir: &Path) -> Result<Vec<Figures>, RunError> {
    let most = settings.customers.iter().map(|&n| settings.count(n)).max().unwrap_or(1);
    // A connection per waiting check on each side of the loopback, and the server's to the PG.
    let wanted = u64::from(most) * 4 + 4_096;
    let allowed = machine::allow_open_files(wanted);
    if allowed < wanted {
        // Past it, the server refuses connections (EMFILE) and its PG calls fail to connect:
        // say so, or those errors would read as the server's own limits.
        eprintln!(
            "payonce-experiment: this machine allows {allowed} open files per process, not the {wanted} wanted; \
             past it, connections are refused"
        );
    }
    let mut runs = Vec::new();
    for &customers in &settings.customers {
        let customers = settings.count(customers);
        eprintln!("payonce-experiment: flash sale — {customers} customers");
        runs.push(step(settings, customers, bin_dir, work_dir).await?);
    }
    Ok(runs)
}

async fn step(settings: &Settings, customers: u32, bin_dir: &Path, work_dir: &Path) -> Result<Figures, RunError> {
    let target = Target::for_run(settings, customers, bin_dir, work_dir).await?;
    let client = reqwest::Client::builder().pool_idle_timeout(Duration::from_secs(30)).build()?;
    wait_until_healthy(&client, &target.shop_url).await?;
    let server_pids = target.server_pids.clone();
    let timings = settings.timings();

    let probe = Probe::start(&client, &target.shop_url).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle_rss = machine::read_all(&server_pids).map_or(0.0, |reading| mb(reading.rss_bytes));

    let live = Arc::new(Live::default());
    let started = Instant::now();
    let series = Arc::new(Mutex::new(Vec::new()));
    let sampler = tokio::spawn(sample(server_pids, live.clone(), started, series.clone()));
    let spacing = Duration::from_secs_f64(settings.time_scale / (settings.arrivals_per_second * settings.size_scale));
    let visits: Vec<_> = (0..customers)
        .map(|index| {
            let (client, url, live) = (client.clone(), target.shop_url.clone(), live.clone());
            let arrival = started + spacing * index;
            tokio::spawn(async move {
                tokio::time::sleep_until(tokio::time::Instant::from_std(arrival)).await;
                let visit = customer::visit(&client, &url, timings, &live).await;
                (arrival, visit)
            })
        })
        .collect();
    let mut done = Vec::with_capacity(visits.len());
    for visit in visits {
        if let Ok(visit) = visit.await {
            done.push(visit);
        }
    }
    sampler.abort();
    let since_start = |at: Instant| {
        if at < started { -started.duration_since(at).as_secs_f64() } else { at.duration_since(started).as_secs_f64() }
    };
    let probe_reads: Vec<(f64, f64)> = probe.stop().into_iter().map(|(at, ms)| (since_start(at), ms)).collect();
    let series = std::mem::take(&mut *series.lock().expect("series lock"));

    // The customers' idle connections hold thousands of this process's files: let them go
    // before asking anything more (at 20,000 customers no file was left for a new connection).
    drop(client);
    let client = reqwest::Client::new();
    let db = Db::open(&target.database, 2).await.map_err(database)?;
    let committed: HashMap<String, i64> =
        db.payment_summaries().await.map_err(database)?.into_iter().map(|p| (p.order_id, p.last_ms)).collect();
    let mut metrics = Vec::new();
    for admin_url in &target.admin_urls {
        metrics.push(read_after_the_sale(&client, &format!("{admin_url}/metrics")).await?);
    }
    let pg_stats: serde_json::Value =
        serde_json::from_str(&read_after_the_sale(&client, &format!("{}/__admin/stats", target.pg_url)).await?)
            .unwrap_or_default();
    drop(target);
    let mut figures = figures(settings, customers, started, &done, &committed, idle_rss, probe_reads, series, &metrics);
    figures.pg_peak_in_flight = pg_stats["peak_in_flight"].as_u64().unwrap_or(0);
    figures.pg_http_versions = serde_json::from_value(pg_stats["http_versions"].clone()).unwrap_or_default();
    Ok(figures)
}

/// A page read once the customers are gone, tried again with a growing pause
/// while the connections they left are still closing.
async fn read_after_the_sale(client: &reqwest::Client, url: &str) -> Result<String, RunError> {
    let mut pause = Duration::from_millis(100);
    loop {
        match client.get(url).send().await {
            Ok(response) => return Ok(response.text().await?),
            Err(_) if pause < Duration::from_secs(5) => {
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// What one run measures: where customers go, and what to read afterwards.
struct Target {
    shop_url: String,
    pg_url: String,
    admin_urls: Vec<String>,
    server_pids: Vec<u32>,
    database: DbLocation,
    /// What this run started (the server first), stopped when the run ends.
    _started: Vec<payonce_chaos::processes::Running>,
}

impl Target {
    async fn for_run(settings: &Settings, customers: u32, bin_dir: &Path, work_dir: &Path) -> Result<Self, RunError> {
        match &settings.deployment {
            Deployment::OneServer => {
                let pg = pg_program(settings, bin_dir, work_dir, customers).start().await?;
                let db_path = work_dir.join(format!("flash-sale-{customers}.db"));
                let _ = std::fs::remove_file(&db_path);
                let server = server_program(settings, customers, bin_dir, work_dir, &pg.url, &db_path).start().await?;
                Ok(Self {
                    shop_url: server.url.clone(),
                    pg_url: pg.url.clone(),
                    admin_urls: vec![server.urls.get(1).unwrap_or(&server.url).clone()],
                    server_pids: server.pid().into_iter().collect(),
                    database: DbLocation::sqlite_file(&db_path),
                    _started: vec![server, pg],
                })
            }
            Deployment::Running(running) => Ok(Self {
                shop_url: running.shop_url.clone(),
                pg_url: running.pg_url.clone(),
                admin_urls: running.admin_urls.clone(),
                server_pids: running.server_pids.clone(),
                database: running
                    .database_url
                    .parse()
                    .map_err(|error| RunError::Database(format!("--database-url: {error}")))?,
                _started: Vec::new(),
            }),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn figures(
    settings: &Settings,
    customers: u32,
    started: Instant,
    visits: &[(Instant, Visit)],
    committed: &HashMap<String, i64>,
    idle_rss: f64,
    probe_reads: Vec<(f64, f64)>,
    series: Vec<Sample>,
    metrics: &[String],
) -> Figures {
    let timings = settings.timings();
    let wait_ms = timings.check_wait.as_secs_f64() * 1000.0;
    let pg_ms = settings.duration(settings.pg_latency).as_secs_f64() * 1000.0;
    let all = || visits.iter().map(|(_, visit)| visit);
    let checks = || all().flat_map(|visit| visit.checks.iter());

    // Rates from the first arrival to the last order made, and to the last
    // confirm sent, in the sale's own units (unscaled time and size).
    let rate = |done: Vec<f64>| {
        let span = done.iter().copied().fold(0.0, f64::max) / 1000.0 / settings.time_scale;
        done.len() as f64 / settings.size_scale / span.max(1e-3)
    };
    let since_start = |arrival: &Instant, ms: f64| arrival.duration_since(started).as_secs_f64() * 1000.0 + ms;
    let created: Vec<f64> =
        visits.iter().filter_map(|(arrival, visit)| Some(since_start(arrival, visit.create_ms?))).collect();
    let confirmed: Vec<f64> =
        visits.iter().filter_map(|(arrival, visit)| Some(since_start(arrival, visit.confirm_sent_ms?))).collect();
    let peak = series.iter().map(|sample| sample.waiting).max().unwrap_or(0);
    let at_peak = series.iter().max_by_key(|sample| sample.waiting).copied().unwrap_or_default();
    let checking_phase: Vec<&Sample> = series.iter().filter(|sample| sample.checking > 0).collect();
    // While most customers checked: the samples at 90 % of the peak or more.
    let plateau: Vec<(f64, f64)> = series
        .windows(2)
        .filter(|pair| peak > 0 && pair[0].waiting * 10 >= peak * 9)
        .map(|pair| (pair[0].t, pair[1].t))
        .collect();
    let in_plateau = |t: f64| plateau.iter().any(|(from, to)| t >= *from && t <= *to);
    let mut told = BTreeMap::new();
    for visit in all() {
        *told.entry(format!("{:?}", visit.told).to_lowercase()).or_insert(0) += 1;
    }
    let mut errors = BTreeMap::new();
    for kind in all().flat_map(|visit| visit.errors.iter()) {
        *errors.entry(kind.clone()).or_insert(0) += 1;
    }
    Figures {
        customers,
        orders_per_second: rate(created),
        confirms_per_second: rate(confirmed),
        create_ms: Quantiles::of(all().filter_map(|visit| visit.create_ms).collect()),
        confirm_overhead_ms: Quantiles::of(all().filter_map(|visit| visit.confirm_ms).map(|ms| ms - pg_ms).collect()),
        peak_checking: series.iter().map(|sample| sample.checking).max().unwrap_or(0),
        peak_waiting: peak,
        server_rss_idle_mb: idle_rss,
        server_rss_peak_mb: series.iter().map(|sample| sample.server_rss_mb).fold(idle_rss, f64::max),
        per_waiting_check_kb: if peak > 0 { (at_peak.server_rss_mb - idle_rss) * 1024.0 / peak as f64 } else { 0.0 },
        server_cpu_mean: mean(checking_phase.iter().map(|sample| sample.server_cpu)),
        server_cpu_peak: series.iter().map(|sample| sample.server_cpu).fold(0.0, f64::max),
        unchanged_past_wait_ms: Quantiles::of(
            checks()
                .filter(|check| !check.changed && check.ms >= wait_ms * 0.9)
                .map(|check| check.ms - wait_ms)
                .collect(),
        ),
        answered_at_once: checks().filter(|check| !check.changed && check.ms < wait_ms * 0.9).count(),
        changed_ms: Quantiles::of(checks().filter(|check| check.changed).map(|check| check.ms).collect()),
        commit_to_answer_ms: Quantiles::of(
            all()
                .filter_map(|visit| {
                    let at = visit.told_by_check_at_ms?;
                    Some((at - committed.get(visit.order_id.as_ref()?)?) as f64)
                })
                .collect(),
        ),
        probe_idle_ms: Quantiles::of(probe_reads.iter().filter(|(t, _)| *t < 0.0).map(|(_, ms)| *ms).collect()),
        probe_loaded_ms: Quantiles::of(probe_reads.iter().filter(|(t, _)| in_plateau(*t)).map(|(_, ms)| *ms).collect()),
        generator_send_lag_ms: Quantiles::of(all().flat_map(|visit| visit.send_lag_ms.iter().copied()).collect()),
        generator_cpu_mean: mean(checking_phase.iter().map(|sample| sample.generator_cpu)),
        told,
        errors,
        no_place: ["full", "client_full", "customer_full"]
            .into_iter()
            .map(|why| {
                let count = |text: &String| metric(text, "payment_order_waits_total", &format!("outcome=\"{why}\""));
                (why.to_owned(), metrics.iter().map(count).sum())
            })
            .collect(),
        checks_by_server: metrics.iter().map(|text| metric(text, "payment_order_waits_total", "")).collect(),
        pg_peak_in_flight: 0,
        pg_http_versions: BTreeMap::new(),
        series,
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0), |(sum, count), value| (sum + value, count + 1));
    if count == 0 { 0.0 } else { sum / f64::from(count) }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The sum of a counter's lines whose labels contain `labels`.
fn metric(text: &str, name: &str, labels: &str) -> u64 {
    text.lines()
        .filter(|line| line.starts_with(&format!("{name}{{")) && line.contains(labels))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

async fn wait_until_healthy(client: &reqwest::Client, url: &str) -> Result<(), RunError> {
    for _ in 0..300 {
        if client.get(format!("{url}/healthz")).send().await.is_ok_and(|response| response.status().is_success()) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(RunError::Database("the order server never became healthy".to_owned()))
}

/// Every 250 ms: the customers' counts, and the servers' (summed) and this process's memory and CPU.
async fn sample(server_pids: Vec<u32>, live: Arc<Live>, started: Instant, series: Arc<Mutex<Vec<Sample>>>) {
    let tick = Duration::from_millis(250);
    let read = || Some((Instant::now(), machine::read_all(&server_pids)?, machine::own()?));
    let mut last = None;
    loop {
        // A reading that failed (this process out of files at the sale's peak) is skipped:
        // a zero would count all the CPU so far into the next sample.
        if let Some(reading) = read()
            && let Some((then, server_then, own_then)) = last.replace(reading)
        {
            let (now, server, own) = reading;
            let seconds = now.duration_since(then).as_secs_f64().max(1e-3);
            series.lock().expect("series lock").push(Sample {
                t: now.duration_since(started).as_secs_f64(),
                checking: live.checking.load(Ordering::Relaxed),
                waiting: live.waiting.load(Ordering::Relaxed),
                server_rss_mb: mb(server.rss_bytes),
                server_cpu: (server.cpu_seconds - server_then.cpu_seconds) / seconds,
                generator_cpu: (own.cpu_seconds - own_then.cpu_seconds) / seconds,
            });
        }
        tokio::time::sleep(tick).await;
    }
}

/// A customer who reads their own order every 100 ms, timing each read, with
/// the time of each (seconds since the sale started; negative before it).
struct Probe {
    reads: Arc<Mutex<Vec<(Instant, f64)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Probe {
    async fn start(client: &reqwest::Client, shop_url: &str) -> Result<Self, RunError> {
        let created = client
            .post(format!("{shop_url}/api/orders"))
            .json(&serde_json::json!({"items": [{"sku": "TEA-TOWEL", "quantity": 1}]}))
            .send()
            .await?;
        let cookie = created
            .headers()
            .get(reqwest::header::SET_COOKIE)
            .and_then(|value| value.to_str().ok()?.split(';').next().map(str::to_owned))
            .unwrap_or_default();
        let order: payonce_api::Order = created.json().await?;
        let url = format!("{shop_url}/api/orders/{}", order.order_id);
        let reads = Arc::new(Mutex::new(Vec::new()));
        let recorded = reads.clone();
        let client = client.clone();
        let task = tokio::spawn(async move {
            loop {
                let sent = Instant::now();
                let answer = client.get(&url).header(reqwest::header::COOKIE, &cookie).send().await;
                if answer.is_ok_and(|response| response.status().is_success()) {
                    recorded.lock().expect("probe lock").push((sent, sent.elapsed().as_secs_f64() * 1000.0));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Ok(Self { reads, task })
    }

    /// Stops, and gives every read as (when it was sent, ms).
    fn stop(self) -> Vec<(Instant, f64)> {
        self.task.abort();
        std::mem::take(&mut *self.reads.lock().expect("probe lock"))
    }
}

fn millis(duration: Duration) -> String {
    format!("{}ms", duration.as_millis().max(1))
}

fn pg_program(settings: &Settings, bin_dir: &Path, work_dir: &Path, customers: u32) -> Program {
    let mut args = vec![
        "--listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--latency".to_owned(),
        millis(settings.pg_latency),
        "--time-scale".to_owned(),
        settings.time_scale.to_string(),
    ];
    if let Some(limit) = settings.pg_contract_limit {
        args.extend(["--contract-limit".to_owned(), settings.count(limit).to_string()]);
    }
    if settings.pg_http2 {
        // A PG's streams per connection bound a server's calls at it; here they
        // never do, as the contract limit alone is the PG's limit.
        let streams = settings.count(customers).max(fake_pg::DEFAULT_HTTP2_MAX_STREAMS);
        args.extend(["--http2-max-streams".to_owned(), streams.to_string()]);
    }
    Program { binary: bin_dir.join("fake-pg"), args, log: work_dir.join(format!("fake-pg-flash-sale-{customers}.log")) }
}

fn server_program(
    settings: &Settings,
    customers: u32,
    bin_dir: &Path,
    work_dir: &Path,
    pg_url: &str,
    db_path: &Path,
) -> Program {
    let scaled = |duration: Duration| millis(settings.duration(duration));
    // Without a contract, the server's limit lets every customer's confirm through.
    let limit = if settings.pg_contract_limit.is_some() {
        "auto".to_owned()
    } else {
        customers.clamp(1, payonce_server::config::MAX_FIXED_CONCURRENCY).to_string()
    };
    let flags = [
        ("--listen", "127.0.0.1:0".to_owned()),
        ("--admin-listen", "127.0.0.1:0".to_owned()),
        ("--db", db_path.display().to_string()),
        ("--pg-url", pg_url.to_owned()),
        ("--pg-connect-timeout", scaled(Duration::from_secs(3))),
        ("--pg-read-timeout", scaled(Duration::from_secs(60))),
        ("--confirm-wait", scaled(Duration::from_secs(15))),
        ("--check-interval", scaled(Duration::from_secs(2))),
        ("--max-checks", "25".to_owned()),
        ("--pg-limit", limit),
        ("--max-waiting-checks", settings.count(settings.max_waiting_checks).to_string()),
        // Every customer comes from this machine: no limits per address.
        ("--rate-limit-customer", "0".to_owned()),
        ("--rate-limit-address", "0".to_owned()),
        ("--rate-limit-customer-reads", "0".to_owned()),
        ("--rate-limit-address-reads", "0".to_owned()),
        ("--rate-limit-new-customers", "0".to_owned()),
        ("--max-waiting-checks-per-client", "1000000".to_owned()),
        ("--max-connections", "1000000".to_owned()),
        ("--max-connections-per-client", "1000000".to_owned()),
    ];
    let mut args: Vec<String> = flags.into_iter().flat_map(|(flag, value)| [flag.to_owned(), value]).collect();
    if settings.pg_http2 {
        args.push("--pg-http2".to_owned());
    }
    Program {
        binary: bin_dir.join("payonce-server"),
        args,
        log: work_dir.join(format!("server-flash-sale-{customers}.log")),
    }
}
