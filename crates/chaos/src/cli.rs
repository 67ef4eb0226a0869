//! The campaign's settings: command-line flags, all times in real (unscaled)
//! units of the shipped configuration, multiplied by `--time-scale`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use payonce_server::db::{DbLocation, Engine};

/// Runs many virtual customers against real order servers and a fake PG with
/// every fault at once, kills and freezes servers, and checks every order
/// against the PG's ledger.
#[derive(Debug, Clone, Parser)]
#[command(name = "payonce-chaos", version, about)]
pub struct Options {
    /// Virtual customers, each paying for one order by running the page's own flow.
    #[arg(long, default_value_t = 200)]
    pub customers: u32,

    /// Customers arrive at random over this period (before the time scale).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub arrival: Duration,

    /// Order servers sharing one database (more than one needs `--db postgres://...`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub servers: u32,

    /// The servers' database: a `postgres://` URL of an empty database for a
    /// cluster; by default a SQLite file in the work folder.
    #[arg(long)]
    pub db: Option<DbLocation>,

    /// The PG concurrency limit of the whole shop (`--pg-limit` of every server).
    #[arg(long, default_value_t = 40)]
    pub pg_limit: u32,

    /// SIGKILLs of a random order server at random moments; each is restarted at once on its port.
    #[arg(long, default_value_t = 5)]
    pub kills: u32,

    /// Freeze a random order server (SIGSTOP) this many times, for `--freeze-for` each.
    #[arg(long, default_value_t = 0)]
    pub freezes: u32,

    /// How long a frozen server stays frozen (before the time scale).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub freeze_for: Duration,

    /// A PG outage this long, at a random moment (before the time scale); 0s for none.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub pg_outage: Duration,

    /// The database taken away this long, once, at a random moment of the
    /// arrival period (before the time scale, but never under 2 s); 0s for
    /// never. Needs `--postgres`: the servers' PostgreSQL is stopped, then
    /// started again, while the servers run on.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub database_away: Duration,

    /// The name `scripts/postgres.sh` runs the PostgreSQL server of `--db` under
    /// (started with `socket`), for `--database-away` to stop and start it.
    #[arg(long)]
    pub postgres: Option<String>,

    /// Multiplies every duration: the PG's latencies and periods, the server's
    /// timeouts and recovery interval, the page's waits, the arrival period.
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,

    /// Seed of the arrivals, the chaos schedule and the PG's faults.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// The PG's contract limit (confirms in processing at once).
    #[arg(long, default_value_t = 60)]
    pub contract_limit: u32,

    /// The share of customers who pay with KakaoPay (a PG without idempotency
    /// keys, on a fake PG of its own with the same faults); the rest pay by card
    /// through Toss. 0 is a campaign of Toss alone.
    #[arg(long, default_value_t = 0.5)]
    pub kakaopay_share: f64,

    /// The share of customers a shop sends: its backend creates their
    /// checkout through the shop API (`/v1/checkouts`) and they open its link;
    /// the rest order through payonce's own cart. 0 is a campaign of the cart alone.
    #[arg(long, default_value_t = 0.5)]
    pub shop_share: f64,

    /// How long the scripted shop's endpoint for events is down (connections
    /// refused), once, at a random moment of the arrival period (before the
    /// time scale: 2 minutes is 12 s at `--time-scale 0.1`); 0s for never.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub endpoint_down: Duration,

    /// Windows of each other way the shop's endpoint fails: answering 500,
    /// hanging past the servers' event timeout, resetting the connection after
    /// reading the event (so it is sent again), answering slowly; 0 for none.
    #[arg(long, default_value_t = 1)]
    pub endpoint_faults: u32,

    /// How long each of those windows lasts (before the time scale).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub endpoint_fault_for: Duration,

    /// How long after the last customer every payment must be settled (before
    /// the time scale): long enough for a KakaoPay approve that never landed to
    /// settle once KakaoPay's fifteen minutes are over (it is never sent again).
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    pub settle_within: Duration,

    /// Where `payonce-server` and `fake-pg` are; defaults to this binary's own folder.
    #[arg(long)]
    pub bin_dir: Option<PathBuf>,

    /// Write the report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,

    /// Keep the logs and the database here instead of a temporary folder.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,

    /// No progress bar (for logs and CI).
    #[arg(long)]
    pub quiet: bool,
}

impl Options {
    /// A duration of the shipped configuration at this campaign's time scale.
    pub fn scaled(&self, duration: Duration) -> Duration {
        duration.mul_f64(self.time_scale)
    }

    /// How long the database is away: `--database-away` at the campaign's
    /// scale, at least 2 s; zero for never.
    pub fn database_away(&self) -> Duration {
        if self.database_away.is_zero() {
            Duration::ZERO
        } else {
            self.scaled(self.database_away).max(Duration::from_secs(2))
        }
    }

    /// Refuses settings that cannot make a campaign.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.time_scale.is_finite() && self.time_scale > 0.0 && self.time_scale <= 10.0) {
            return Err(format!("--time-scale must be above 0 and at most 10, got {}", self.time_scale));
        }
        if self.customers == 0 {
            return Err("--customers must be at least 1".to_owned());
        }
        if !(0.0..=1.0).contains(&self.kakaopay_share) {
            return Err(format!("--kakaopay-share must be from 0 to 1, got {}", self.kakaopay_share));
        }
        if !(0.0..=1.0).contains(&self.shop_share) {
            return Err(format!("--shop-share must be from 0 to 1, got {}", self.shop_share));
        }
        let shared = self.db.as_ref().is_some_and(|db| db.engine() == Engine::Postgres);
        if self.servers > 1 && !shared {
            return Err("--servers above 1 needs a database servers can share: --db postgres://...".to_owned());
        }
        if !self.database_away.is_zero() && (self.postgres.is_none() || !shared) {
            return Err(
                "--database-away needs the servers' PostgreSQL by name: --db postgres://... --postgres NAME".to_owned()
            );
        }
        Ok(())
    }
}

fn parse_duration(value: &str) -> Result<Duration, String> {
    humantime::parse_duration(value).map_err(|error| format!("{error} (examples: 500ms, 15s, 2m)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_a_short_campaign_at_real_time() {
        let options = Options::parse_from(["payonce-chaos"]);
        assert_eq!((options.customers, options.kills, options.servers), (200, 5, 1));
        assert_eq!(options.scaled(Duration::from_secs(60)), Duration::from_secs(60));
        assert_eq!(options.validate(), Ok(()));
    }

    #[test]
    fn durations_scale_and_bad_scales_are_refused() {
        let options = Options::parse_from(["payonce-chaos", "--time-scale", "0.1", "--arrival", "2m"]);
        assert_eq!(options.scaled(options.arrival), Duration::from_secs(12));
        assert!(Options::parse_from(["payonce-chaos", "--time-scale", "0"]).validate().is_err());
        assert!(Options::parse_from(["payonce-chaos", "--customers", "0"]).validate().is_err());
        assert!(Options::parse_from(["payonce-chaos", "--kakaopay-share", "1.5"]).validate().is_err());
        assert!(Options::parse_from(["payonce-chaos", "--shop-share", "1.5"]).validate().is_err());
        assert!(Options::parse_from(["payonce-chaos", "--database-away", "20s"]).validate().is_err());
    }

    #[test]
    fn the_database_is_away_for_its_scaled_time_but_never_under_two_seconds() {
        let away = |args: &[&str]| {
            Options::parse_from(std::iter::once("payonce-chaos").chain(args.iter().copied())).database_away()
        };
        assert_eq!(away(&[]), Duration::ZERO);
        assert_eq!(away(&["--database-away", "20s"]), Duration::from_secs(20));
        assert_eq!(away(&["--database-away", "30s", "--time-scale", "0.1"]), Duration::from_secs(3));
        assert_eq!(away(&["--database-away", "5s", "--time-scale", "0.1"]), Duration::from_secs(2));
    }
}
