//! The system under test: a fake PG for each PG (Toss's, and KakaoPay's,
//! with every fault at once), and order servers sharing one database, each
//! on a port it keeps across restarts, each serving the scripted shop's
//! checkouts (a shops file in the work folder) and sending its events to the
//! shop's endpoint (`shop_endpoint`), which runs in this process.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fake_pg::{Api, Stats};
use payonce_server::db::{Db, DbLocation};
use serde_json::json;

use crate::ChaosError;
use crate::cli::Options;
use crate::processes::{ProcessError, Program, Running};
use crate::scripted_shop;
use crate::shop_endpoint::ShopEndpoint;

/// The fake PG's faults in a campaign: every kind at once.
pub const FAULTS: [(&str, f64); 7] = [
    ("--decline-rate", 0.08),
    ("--error-500-rate", 0.03),
    ("--rate-limit-429-rate", 0.03),
    ("--forbidden-consecutive-rate", 0.02),
    ("--reset-before-processing-rate", 0.03),
    ("--reset-after-charge-rate", 0.04),
    ("--error-500-after-charge-rate", 0.04),
];

/// A running fake PG and order servers.
pub struct Stack {
    pg: Running,
    kakaopay: Running,
    servers: Vec<Mutex<Option<Running>>>,
    programs: Vec<Program>,
    urls: Vec<String>,
    next: AtomicUsize,
    /// How long a killed server may take to start again: longer than the
    /// database is away, since a server does not start without it.
    restart_within: Duration,
    pub db: DbLocation,
    /// The scripted shop's endpoint for events.
    pub endpoint: ShopEndpoint,
    http: reqwest::Client,
}

/// The servers' `--event-timeout`: the shipped 10 s at the campaign's scale,
/// but never under 2 s, so a healthy endpoint on a busy machine answers
/// within it, while a hang past it still costs little.
pub fn event_timeout(options: &Options) -> Duration {
    options.scaled(Duration::from_secs(10)).max(Duration::from_secs(2))
}

/// The servers' `--event-first-retry`: 2 s at the campaign's scale (200 ms at
/// a tenth), against the shipped 5 s, so an event fails and is sent again
/// several times within a short campaign's endpoint faults.
pub fn event_first_retry(options: &Options) -> Duration {
    options.scaled(Duration::from_secs(2)).max(Duration::from_millis(50))
}

impl Stack {
    /// Starts the fake PG, then the servers, each on a port of its own.
    pub async fn start(options: &Options, bin_dir: &Path, work_dir: &Path) -> Result<Self, ChaosError> {
        let pg = pg_program(options, bin_dir, work_dir, Api::Toss).start().await?;
        let kakaopay = pg_program(options, bin_dir, work_dir, Api::KakaoPay).start().await?;
        let endpoint = ShopEndpoint::start(event_timeout(options)).await?;
        let shops_file = scripted_shop::write_shops_file(work_dir, &endpoint.url, &endpoint.secret)?;
        let inputs = ServerInputs { toss: &pg.url, kakaopay: &kakaopay.url, shops_file: &shops_file };
        let db = options.db.clone().unwrap_or_else(|| DbLocation::sqlite_file(&work_dir.join("payonce.db")));
        let mut servers = Vec::new();
        let mut programs = Vec::new();
        let mut urls = Vec::new();
        for index in 0..options.servers {
            // First on any port, then always again on the one it got.
            let first = server_program(options, bin_dir, work_dir, index, inputs, &db, "127.0.0.1:0");
            let running = first.start().await?;
            let listen = running.url.trim_start_matches("http://").to_owned();
            programs.push(server_program(options, bin_dir, work_dir, index, inputs, &db, &listen));
            urls.push(running.url.clone());
            servers.push(Mutex::new(Some(running)));
        }
        let http = reqwest::Client::new();
        let restart_within = Duration::from_secs(2) + options.database_away() * 2;
        let next = AtomicUsize::new(0);
        Ok(Self { pg, kakaopay, servers, programs, urls, next, restart_within, db, endpoint, http })
    }

    pub fn server_count(&self) -> usize {
        self.servers.len()
    }

    /// SIGKILLs server `index` and starts it again on its port, as a supervisor would.
    pub async fn kill_and_restart(&self, index: usize) -> Result<(), ProcessError> {
        let running = self.servers[index].lock().expect("a server's lock").take();
        if let Some(running) = running {
            running.kill().await;
        }
        let deadline = tokio::time::Instant::now() + self.restart_within;
        let restarted = loop {
            match self.programs[index].start().await {
                Ok(running) => break running,
                // The port may take a moment to be free again, the database to come back.
                Err(_) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => return Err(error),
            }
        };
        *self.servers[index].lock().expect("a server's lock") = Some(restarted);
        Ok(())
    }

    /// Freezes server `index` for `how_long` (SIGSTOP, then SIGCONT).
    pub async fn freeze(&self, index: usize, how_long: Duration) -> Result<(), ProcessError> {
        self.with_server(index, Running::freeze)?;
        tokio::time::sleep(how_long).await;
        self.with_server(index, Running::thaw)
    }

    fn with_server(&self, index: usize, action: fn(&Running) -> Result<(), ProcessError>) -> Result<(), ProcessError> {
        match self.servers[index].lock().expect("a server's lock").as_ref() {
            Some(running) => action(running),
            None => Ok(()),
        }
    }

    /// Starts or ends a PG outage: every API call answered 503.
    /// Both PGs go down, or come back, at once.
    pub async fn pg_outage(&self, on: bool) -> Result<(), reqwest::Error> {
        for pg in [&self.pg, &self.kakaopay] {
            self.http.put(format!("{}/__admin/config", pg.url)).json(&json!({"outage": on})).send().await?;
        }
        Ok(())
    }

    /// Toss's counters and ledger.
    pub async fn pg_stats(&self) -> Result<Stats, reqwest::Error> {
        self.http.get(format!("{}/__admin/stats", self.pg.url)).send().await?.json().await
    }

    /// KakaoPay's counters and ledger.
    pub async fn kakaopay_stats(&self) -> Result<Stats, reqwest::Error> {
        self.http.get(format!("{}/__admin/stats", self.kakaopay.url)).send().await?.json().await
    }

    /// The shared database, opened beside the servers.
    pub async fn db(&self) -> Result<Db, payonce_server::RunError> {
        Ok(Db::open(&self.db, 4).await?)
    }
}

fn millis(duration: Duration) -> String {
    format!("{}ms", duration.as_millis().max(1))
}

/// What every server is given: where each PG's fake listens, and the shops file.
#[derive(Clone, Copy)]
struct ServerInputs<'a> {
    toss: &'a str,
    kakaopay: &'a str,
    shops_file: &'a Path,
}

/// The fake PG speaking `api`, with the campaign's faults (KakaoPay's drawn from a seed of its own).
fn pg_program(options: &Options, bin_dir: &Path, work_dir: &Path, api: Api) -> Program {
    let mut args: Vec<String> =
        ["--listen", "127.0.0.1:0", "--latency", "2s", "--slow-tail", "0.05:70s", "--replay", "toss"]
            .map(str::to_owned)
            .to_vec();
    args.extend(["--contract-limit".to_owned(), options.contract_limit.to_string()]);
    let (name, seed) = match api {
        Api::Toss => ("toss", options.seed),
        Api::KakaoPay => ("kakaopay", options.seed.wrapping_add(1)),
    };
    args.extend(["--api".to_owned(), name.to_owned()]);
    args.extend(["--seed".to_owned(), seed.to_string()]);
    args.extend(["--time-scale".to_owned(), options.time_scale.to_string()]);
    for (flag, rate) in FAULTS {
        args.extend([flag.to_owned(), rate.to_string()]);
    }
    let log = match api {
        Api::Toss => work_dir.join("fake-pg.log"),
        Api::KakaoPay => work_dir.join("fake-pg-kakaopay.log"),
    };
    Program { binary: bin_dir.join("fake-pg"), args, log }
}

fn server_program(
    options: &Options,
    bin_dir: &Path,
    work_dir: &Path,
    index: u32,
    inputs: ServerInputs<'_>,
    db: &DbLocation,
    listen: &str,
) -> Program {
    let scaled = |seconds: u64| millis(options.scaled(Duration::from_secs(seconds)));
    let args = vec![
        "--listen".to_owned(),
        listen.to_owned(),
        "--admin-listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        // Every customer comes from this machine's address: limit per customer only.
        "--rate-limit-address".to_owned(),
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
        "--db".to_owned(),
        db.url().to_owned(),
        "--pg-limit".to_owned(),
        options.pg_limit.to_string(),
        "--pg-url".to_owned(),
        inputs.toss.to_owned(),
        "--kakaopay-url".to_owned(),
        inputs.kakaopay.to_owned(),
        // KakaoPay's fifteen minutes, at the fake's scale.
        "--kakaopay-session-lifetime".to_owned(),
        scaled(15 * 60),
        "--confirm-wait".to_owned(),
        scaled(15),
        "--check-interval".to_owned(),
        scaled(2),
        "--max-checks".to_owned(),
        "25".to_owned(),
        "--pg-connect-timeout".to_owned(),
        scaled(3),
        "--pg-read-timeout".to_owned(),
        scaled(60),
        "--recovery-interval".to_owned(),
        scaled(60),
        // The scripted shop, whose backend creates half the customers' checkouts.
        "--shops-file".to_owned(),
        inputs.shops_file.display().to_string(),
        // Its events: sent again soon after a failed send, and given up on
        // soon by a send the endpoint leaves hanging.
        "--event-first-retry".to_owned(),
        millis(event_first_retry(options)),
        "--event-timeout".to_owned(),
        millis(event_timeout(options)),
    ];
    Program { binary: bin_dir.join("payonce-server"), args, log: work_dir.join(format!("server-{index}.log")) }
}

impl crate::customer::Servers for Stack {
    /// An order server for the next request, spread over all of them as a load balancer would.
    fn server_url(&self) -> &str {
        &self.urls[self.next.fetch_add(1, Ordering::Relaxed) % self.urls.len()]
    }
}
