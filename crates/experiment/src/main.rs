//! `payonce-experiment brownout|tail|webhooks|events|flash-sale`: runs each condition of the experiment,
//! prints a table, writes JSON and an SVG chart, and exits non-zero if any run
//! left a payment unknown, charged an order twice, or charged without a PAID order.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use payonce_experiment::scenario::{self, Scale};
use payonce_experiment::{chart, report, run};

#[derive(Debug, Parser)]
#[command(name = "payonce-experiment", version, about)]
struct Flags {
    #[command(subcommand)]
    experiment: Which,
    /// Multiplies every duration (0.1 runs ten times faster).
    #[arg(long, global = true, default_value_t = 1.0)]
    time_scale: f64,
    /// Multiplies arrival rates, the contract limit and the limits.
    #[arg(long, global = true, default_value_t = 1.0)]
    size_scale: f64,
    /// Run only the conditions whose name contains this (repeatable).
    #[arg(long, global = true)]
    only: Vec<String>,
    /// Where `payonce-server` and `fake-pg` are; defaults to this binary's folder.
    #[arg(long, global = true)]
    bin_dir: Option<PathBuf>,
    /// Write the figures as JSON here.
    #[arg(long, global = true)]
    json: Option<PathBuf>,
    /// Draw the runs over time as SVG here.
    #[arg(long, global = true)]
    svg: Option<PathBuf>,
    /// Keep logs and databases here instead of a temporary folder.
    #[arg(long, global = true)]
    work_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Subcommand)]
enum Which {
    /// 10 customers/s for 15 s, then 50/s for 60 s; approvals take 20 s; a contract of 60.
    Brownout,
    /// 10 customers/s for 60 s; approvals take 300 ms, a tenth of them 20 s.
    Tail,
    /// 5 payments left UNKNOWN (each confirm outlives a 60 s read timeout), then
    /// finished by the PG at once: how soon each is settled, by lookups alone and with webhooks.
    Webhooks,
    /// Shops' events: their lag from commit to the shop at 500 payments a second,
    /// then 10,000 piled up while the shop's endpoint is down, and how soon they
    /// are delivered once it is back; customers' confirms timed throughout.
    Events,
    /// Customers arriving at 1,000/s, each creating an order and confirming while
    /// the PG takes 45 s, then checking as the page does: one server's memory,
    /// CPU and latencies with 1,000 to 20,000 of them checking at once.
    FlashSale(FlashSaleFlags),
}

#[derive(Debug, Clone, clap::Args)]
struct FlashSaleFlags {
    /// The numbers of customers, one run each.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,10000,20000")]
    customers: Vec<u32>,
    /// How many customers arrive per second.
    #[arg(long, default_value_t = 1000.0)]
    arrivals_per_second: f64,
    /// How long the PG takes to approve (past the page's 15 s, every customer checks).
    #[arg(long, default_value = "45s", value_parser = humantime::parse_duration)]
    pg_latency: std::time::Duration,
    /// The PG's contract limit; without it, no limit, and the server's own fixed at the customers.
    #[arg(long)]
    pg_contract_limit: Option<u32>,
    /// The server's `--max-waiting-checks`.
    #[arg(long, default_value_t = 10_000)]
    max_waiting_checks: u32,
    /// The server's calls to the PG share one HTTP/2 connection (its `--pg-http2`), and
    /// the fake PG takes as many streams on it as there are customers.
    #[arg(long)]
    pg_http2: bool,
    /// Send the customers to servers already running here (a balancer's URL) instead of
    /// starting one: one number of customers, and the servers' PG, admin URLs, processes and
    /// database named below (`scripts/experiment-flash-sale-cluster.sh` gives them).
    #[arg(long, requires_all = ["pg_url", "admin_url", "server_pid", "database_url"])]
    shop_url: Option<String>,
    /// The running servers' fake PG.
    #[arg(long, requires = "shop_url")]
    pg_url: Option<String>,
    /// Each running server's admin URL.
    #[arg(long, value_delimiter = ',', requires = "shop_url")]
    admin_url: Vec<String>,
    /// Each running server's process id.
    #[arg(long, value_delimiter = ',', requires = "shop_url")]
    server_pid: Vec<u32>,
    /// The running servers' database.
    #[arg(long, requires = "shop_url")]
    database_url: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse();
    if !(flags.time_scale > 0.0 && flags.time_scale <= 10.0 && flags.size_scale > 0.0 && flags.size_scale <= 10.0) {
        eprintln!("payonce-experiment: --time-scale and --size-scale must be above 0 and at most 10");
        return ExitCode::from(2);
    }
    let mut experiment = match flags.experiment {
        Which::Brownout => scenario::brownout(),
        Which::Tail => scenario::tail(),
        Which::Webhooks => return webhooks(&flags).await,
        Which::Events => return events(&flags).await,
        Which::FlashSale(ref sale) => return flash_sale(&flags, sale).await,
    };
    if !flags.only.is_empty() {
        experiment.conditions.retain(|condition| flags.only.iter().any(|only| condition.name.contains(only.as_str())));
    }
    let scale = Scale { time: flags.time_scale, size: flags.size_scale };
    let temporary = tempfile::tempdir().expect("a temporary folder");
    let work_dir = flags.work_dir.clone().unwrap_or_else(|| temporary.path().to_owned());
    let _ = std::fs::create_dir_all(&work_dir);
    let bin_dir = payonce_chaos::processes::bin_dir(flags.bin_dir.as_deref());

    let mut runs = Vec::new();
    for condition in &experiment.conditions {
        eprintln!("payonce-experiment: {} — {}", experiment.name, condition.name);
        match run::run(&experiment, condition, scale, &bin_dir, &work_dir).await {
            Ok(figures) => runs.push(figures),
            Err(error) => {
                eprintln!("payonce-experiment: {}: {error}", condition.name);
                return ExitCode::from(2);
            }
        }
    }
    println!("{} (time scale {}, size scale {})", experiment.name, scale.time, scale.size);
    print!("{}", report::table(&runs));
    if let Some(path) = &flags.json {
        let json = serde_json::json!({"experiment": experiment, "scale": scale, "runs": runs});
        if let Err(error) = std::fs::write(path, serde_json::to_string_pretty(&json).unwrap_or_default() + "\n") {
            eprintln!("payonce-experiment: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Some(path) = &flags.svg {
        let title = format!("{}: sold, in processing at the PG, UNKNOWN, refused, limit", experiment.name);
        if let Err(error) = chart::draw(&title, &runs, path) {
            eprintln!("payonce-experiment: cannot draw {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if runs.iter().any(report::broken) { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

/// `payonce-experiment webhooks`: its own runner, table and JSON.
async fn webhooks(flags: &Flags) -> ExitCode {
    let settings = payonce_experiment::webhooks::Settings {
        payments: ((payonce_experiment::webhooks::Settings::DEFAULT.payments as f64 * flags.size_scale).round()
            as usize)
            .max(1),
        time_scale: flags.time_scale,
        ..payonce_experiment::webhooks::Settings::DEFAULT
    };
    let temporary = tempfile::tempdir().expect("a temporary folder");
    let work_dir = flags.work_dir.clone().unwrap_or_else(|| temporary.path().to_owned());
    let _ = std::fs::create_dir_all(&work_dir);
    let bin_dir = payonce_chaos::processes::bin_dir(flags.bin_dir.as_deref());
    let figures = match payonce_experiment::webhooks::run(settings, &bin_dir, &work_dir).await {
        Ok(figures) => figures,
        Err(error) => {
            eprintln!("payonce-experiment: webhooks: {error}");
            return ExitCode::from(2);
        }
    };
    println!("webhooks (time scale {}, {} payments)", flags.time_scale, settings.payments);
    print!("{}", payonce_experiment::webhooks::table(&figures));
    if let Some(path) = &flags.json {
        let json = serde_json::to_string_pretty(&figures).expect("figures serialise");
        if let Err(error) = std::fs::write(path, json) {
            eprintln!("payonce-experiment: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if figures.iter().any(|run| run.settled < run.payments) {
        eprintln!("payonce-experiment: webhooks: a payment was left unsettled");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `payonce-experiment events`: its own runner, table and JSON.
async fn events(flags: &Flags) -> ExitCode {
    use payonce_experiment::events;
    let settings =
        events::Settings { time_scale: flags.time_scale, size_scale: flags.size_scale, ..events::Settings::DEFAULT };
    let temporary = tempfile::tempdir().expect("a temporary folder");
    let work_dir = flags.work_dir.clone().unwrap_or_else(|| temporary.path().to_owned());
    let _ = std::fs::create_dir_all(&work_dir);
    let bin_dir = payonce_chaos::processes::bin_dir(flags.bin_dir.as_deref());
    let figures = match events::run(settings, &bin_dir, &work_dir).await {
        Ok(figures) => figures,
        Err(error) => {
            eprintln!("payonce-experiment: events: {error}");
            return ExitCode::from(2);
        }
    };
    println!("events (time scale {}, size scale {})", flags.time_scale, flags.size_scale);
    print!("{}", events::table(&figures));
    if let Some(path) = &flags.json {
        let json = serde_json::to_string_pretty(&figures).expect("figures serialise");
        if let Err(error) = std::fs::write(path, json + "\n") {
            eprintln!("payonce-experiment: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if figures.not_paid > 0 || figures.backlog_drained_ms.is_none() {
        eprintln!("payonce-experiment: events: a payment was not paid, or the backlog was not delivered");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `payonce-experiment flash-sale`: its own runner, table, JSON and chart.
async fn flash_sale(flags: &Flags, sale: &FlashSaleFlags) -> ExitCode {
    use payonce_experiment::flash_sale;
    if sale.customers.is_empty()
        || sale.customers.contains(&0)
        || !sale.arrivals_per_second.is_finite()
        || sale.arrivals_per_second <= 0.0
    {
        eprintln!("payonce-experiment: flash-sale: --customers must be numbers above 0, --arrivals-per-second above 0");
        return ExitCode::from(2);
    }
    let deployment = match (&sale.shop_url, &sale.pg_url, &sale.database_url) {
        (Some(shop_url), Some(pg_url), Some(database_url)) => {
            if sale.customers.len() != 1 {
                eprintln!(
                    "payonce-experiment: flash-sale: with --shop-url, one number of customers (the servers run on)"
                );
                return ExitCode::from(2);
            }
            flash_sale::Deployment::Running(flash_sale::RunningServers {
                shop_url: shop_url.trim_end_matches('/').to_owned(),
                pg_url: pg_url.trim_end_matches('/').to_owned(),
                admin_urls: sale.admin_url.iter().map(|url| url.trim_end_matches('/').to_owned()).collect(),
                server_pids: sale.server_pid.clone(),
                database_url: database_url.clone(),
            })
        }
        _ => flash_sale::Deployment::OneServer,
    };
    let settings = flash_sale::Settings {
        customers: sale.customers.clone(),
        arrivals_per_second: sale.arrivals_per_second,
        pg_latency: sale.pg_latency,
        pg_contract_limit: sale.pg_contract_limit,
        max_waiting_checks: sale.max_waiting_checks,
        pg_http2: sale.pg_http2,
        time_scale: flags.time_scale,
        size_scale: flags.size_scale,
        deployment,
    };
    let temporary = tempfile::tempdir().expect("a temporary folder");
    let work_dir = flags.work_dir.clone().unwrap_or_else(|| temporary.path().to_owned());
    let _ = std::fs::create_dir_all(&work_dir);
    let bin_dir = payonce_chaos::processes::bin_dir(flags.bin_dir.as_deref());
    let runs = match flash_sale::run(&settings, &bin_dir, &work_dir).await {
        Ok(runs) => runs,
        Err(error) => {
            eprintln!("payonce-experiment: flash sale: {error}");
            return ExitCode::from(2);
        }
    };
    println!(
        "flash sale (PG {:?}{}, {}/s arriving, time scale {}, size scale {})",
        sale.pg_latency,
        if sale.pg_http2 { " over HTTP/2" } else { "" },
        sale.arrivals_per_second,
        flags.time_scale,
        flags.size_scale
    );
    print!("{}", flash_sale::report::table(&runs));
    if let Some(path) = &flags.json {
        let json = serde_json::json!({"settings": settings, "runs": runs});
        if let Err(error) = std::fs::write(path, serde_json::to_string_pretty(&json).unwrap_or_default() + "\n") {
            eprintln!("payonce-experiment: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Some(path) = &flags.svg {
        let title = "flash sale: one server's memory and latency by customers";
        if let Err(error) = flash_sale::report::draw(title, &runs, path) {
            eprintln!("payonce-experiment: cannot draw {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    // What must never happen under load: a 5xx.
    if runs.iter().any(|run| run.server_errors() > 0) { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
