//! When customers arrive and when chaos strikes, drawn from the seed so a
//! campaign can be run again the same way: at the servers and the PGs, and
//! at the scripted shop's endpoint for events.

use std::time::Duration;

use payonce_api::Pg;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::cli::Options;
use crate::customer::Via;

/// One act of chaos.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chaos {
    /// SIGKILL this server and start it again.
    Kill {
        server: usize,
    },
    /// SIGSTOP this server for a while, then SIGCONT.
    Freeze {
        server: usize,
    },
    /// The PG stops answering its API, until `OutageEnd`.
    OutageStart,
    OutageEnd,
}

/// How the scripted shop's endpoint for events fails for a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointFault {
    /// Not listening: every connection refused.
    Down,
    /// Reads the event and answers 500.
    Error500,
    /// Reads the event and says nothing, past the servers' event timeout.
    Hang,
    /// Reads the event, keeps it, and resets the connection without an
    /// answer: payonce cannot know the shop has it, and sends it again.
    ResetAfterReading,
    /// Answers 200, but only after half the servers' event timeout.
    Slow,
}

impl EndpointFault {
    pub const ALL: [EndpointFault; 5] = [
        EndpointFault::Down,
        EndpointFault::Error500,
        EndpointFault::Hang,
        EndpointFault::ResetAfterReading,
        EndpointFault::Slow,
    ];

    /// As the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointFault::Down => "down",
            EndpointFault::Error500 => "error_500",
            EndpointFault::Hang => "hang",
            EndpointFault::ResetAfterReading => "reset_after_reading",
            EndpointFault::Slow => "slow",
        }
    }
}

/// A while the shop's endpoint fails: from `at`, for `lasts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointWindow {
    pub at: Duration,
    pub lasts: Duration,
    pub fault: EndpointFault,
}

/// The stream the customers' choices of PG are drawn from, beside the seed's.
const PG_CHOICE_STREAM: u64 = 0x6b61_6b61_6f70_6179;
/// The stream drawing which customers the scripted shop sends, beside both.
const VIA_CHOICE_STREAM: u64 = 0x7368_6f70_2d61_7069;
/// The stream drawing the shop's endpoint's faults, beside all of them.
const ENDPOINT_STREAM: u64 = 0x7765_6268_6f6f_6b73;
/// The stream drawing when the database goes away, beside all of them.
const DATABASE_STREAM: u64 = 0x6461_7461_6261_7365;

/// A while the database is away: from `at`, for `lasts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseWindow {
    pub at: Duration,
    pub lasts: Duration,
}

/// A campaign's timeline, from its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// When each customer arrives, in order, the PG they pay with, and
    /// whether they come through the cart or sent by the scripted shop.
    pub arrivals: Vec<Duration>,
    pub pgs: Vec<Pg>,
    pub vias: Vec<Via>,
    /// What happens when, in order.
    pub chaos: Vec<(Duration, Chaos)>,
    /// When the shop's endpoint for events fails, and how: in order, one at a time.
    pub endpoint: Vec<EndpointWindow>,
    /// When the database is away, if it goes away: within the arrival period.
    pub database: Option<DatabaseWindow>,
}

impl Schedule {
    pub fn draw(options: &Options, servers: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(options.seed);
        let period = options.scaled(options.arrival);
        let at = |rng: &mut StdRng| period.mul_f64(rng.random::<f64>());
        let mut arrivals: Vec<Duration> = (0..options.customers).map(|_| at(&mut rng)).collect();
        arrivals.sort();
        let mut chaos = Vec::new();
        for _ in 0..options.kills {
            chaos.push((at(&mut rng), Chaos::Kill { server: rng.random_range(0..servers) }));
        }
        for _ in 0..options.freezes {
            chaos.push((at(&mut rng), Chaos::Freeze { server: rng.random_range(0..servers) }));
        }
        let outage = options.scaled(options.pg_outage);
        if !outage.is_zero() {
            let start = period.saturating_sub(outage).mul_f64(rng.random::<f64>());
            chaos.push((start, Chaos::OutageStart));
            chaos.push((start + outage, Chaos::OutageEnd));
        }
        chaos.sort_by_key(|(at, _)| *at);
        // Drawn apart, so that a seed's arrivals and chaos are the same whatever the share.
        let mut choices = StdRng::seed_from_u64(options.seed ^ PG_CHOICE_STREAM);
        let pgs = arrivals
            .iter()
            .map(|_| if choices.random::<f64>() < options.kakaopay_share { Pg::KakaoPay } else { Pg::Toss })
            .collect();
        // Apart again, so that the shop's share changes neither the PGs nor the rest.
        let mut ways = StdRng::seed_from_u64(options.seed ^ VIA_CHOICE_STREAM);
        let vias = arrivals
            .iter()
            .map(|_| if ways.random::<f64>() < options.shop_share { Via::Shop } else { Via::Cart })
            .collect();
        let endpoint = endpoint_windows(options, period);
        // Its own stream: taking the database away changes nothing else of a seed's campaign.
        let away = options.database_away();
        let database = (!away.is_zero()).then(|| {
            let mut rng = StdRng::seed_from_u64(options.seed ^ DATABASE_STREAM);
            DatabaseWindow { at: period.saturating_sub(away).mul_f64(rng.random::<f64>()), lasts: away }
        });
        Self { arrivals, pgs, vias, chaos, endpoint, database }
    }
}

/// The endpoint's faults: one outage of `--endpoint-down`, and
/// `--endpoint-faults` windows of `--endpoint-fault-for` of each other kind,
/// in a random order, one at a time, with healthy spells of random lengths
/// between them that fill the rest of the arrival period (none if the
/// windows take it all: then they follow one another, past its end).
fn endpoint_windows(options: &Options, period: Duration) -> Vec<EndpointWindow> {
    let mut rng = StdRng::seed_from_u64(options.seed ^ ENDPOINT_STREAM);
    let down = options.scaled(options.endpoint_down);
    let other = options.scaled(options.endpoint_fault_for);
    let mut faults = Vec::new();
    if !down.is_zero() {
        faults.push((down, EndpointFault::Down));
    }
    if !other.is_zero() {
        for fault in EndpointFault::ALL.into_iter().filter(|fault| *fault != EndpointFault::Down) {
            faults.extend((0..options.endpoint_faults).map(|_| (other, fault)));
        }
    }
    // A random order: each window's place drawn as a key.
    let mut keyed: Vec<(f64, (Duration, EndpointFault))> =
        faults.into_iter().map(|fault| (rng.random::<f64>(), fault)).collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let healthy = period.saturating_sub(keyed.iter().map(|(_, (lasts, _))| *lasts).sum());
    // A healthy spell before each window and one after the last, in random shares.
    let shares: Vec<f64> = (0..=keyed.len()).map(|_| rng.random::<f64>()).collect();
    let total: f64 = shares.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut at = Duration::ZERO;
    let mut windows = Vec::new();
    for ((_, (lasts, fault)), share) in keyed.into_iter().zip(shares) {
        at += healthy.mul_f64(share / total);
        windows.push(EndpointWindow { at, lasts, fault });
        at += lasts;
    }
    windows
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn options(args: &[&str]) -> Options {
        Options::parse_from(std::iter::once("payonce-chaos").chain(args.iter().copied()))
    }

    #[test]
    fn a_seed_draws_the_same_campaign_and_another_seed_another() {
        let first = Schedule::draw(&options(&["--seed", "7"]), 3);
        assert_eq!(first, Schedule::draw(&options(&["--seed", "7"]), 3));
        assert_ne!(first, Schedule::draw(&options(&["--seed", "8"]), 3));
    }

    #[test]
    fn customers_pay_with_kakaopay_in_the_share_asked_and_the_rest_of_the_campaign_is_the_seeds() {
        let mixed = Schedule::draw(&options(&["--customers", "400", "--kakaopay-share", "0.5"]), 1);
        let kakaopay = mixed.pgs.iter().filter(|pg| **pg == Pg::KakaoPay).count();
        assert_eq!(mixed.pgs.len(), 400);
        assert!((150..=250).contains(&kakaopay), "about half: {kakaopay}");
        let toss_only = Schedule::draw(&options(&["--customers", "400", "--kakaopay-share", "0"]), 1);
        assert!(toss_only.pgs.iter().all(|pg| *pg == Pg::Toss));
        assert_eq!((&toss_only.arrivals, &toss_only.chaos), (&mixed.arrivals, &mixed.chaos));
        let kakaopay_only = Schedule::draw(&options(&["--customers", "40", "--kakaopay-share", "1"]), 1);
        assert!(kakaopay_only.pgs.iter().all(|pg| *pg == Pg::KakaoPay));
    }

    #[test]
    fn about_half_the_customers_come_through_the_shop_the_same_ones_for_a_seed() {
        let drawn = |args: &[&str]| Schedule::draw(&options(args), 1);
        let half = drawn(&["--customers", "400", "--seed", "3"]);
        let through_shop = half.vias.iter().filter(|via| **via == Via::Shop).count();
        assert_eq!(half.vias.len(), 400);
        assert!((150..=250).contains(&through_shop), "about half, by default: {through_shop}");
        assert_eq!(half.vias, drawn(&["--customers", "400", "--seed", "3"]).vias, "the seed decides");
        assert_ne!(half.vias, drawn(&["--customers", "400", "--seed", "4"]).vias, "another seed, others");

        let cart_only = drawn(&["--customers", "400", "--seed", "3", "--shop-share", "0"]);
        assert!(cart_only.vias.iter().all(|via| *via == Via::Cart));
        assert_eq!(
            (&cart_only.arrivals, &cart_only.pgs, &cart_only.chaos),
            (&half.arrivals, &half.pgs, &half.chaos),
            "the share changes who comes through the shop, nothing else"
        );
        let shop_only = drawn(&["--customers", "40", "--shop-share", "1"]);
        assert!(shop_only.vias.iter().all(|via| *via == Via::Shop));
    }

    #[test]
    fn everything_happens_within_the_arrival_period_in_order() {
        let options = options(&[
            "--customers",
            "50",
            "--kills",
            "4",
            "--freezes",
            "2",
            "--pg-outage",
            "1m",
            "--time-scale",
            "0.1",
        ]);
        let schedule = Schedule::draw(&options, 2);
        let period = Duration::from_secs(60);
        assert_eq!(schedule.arrivals.len(), 50);
        assert!(schedule.arrivals.is_sorted() && schedule.arrivals.iter().all(|at| *at <= period));
        let kinds: Vec<_> = schedule.chaos.iter().map(|(_, chaos)| *chaos).collect();
        assert_eq!(kinds.iter().filter(|chaos| matches!(chaos, Chaos::Kill { .. })).count(), 4);
        assert_eq!(kinds.iter().filter(|chaos| matches!(chaos, Chaos::Freeze { .. })).count(), 2);
        let start = schedule.chaos.iter().find(|(_, chaos)| *chaos == Chaos::OutageStart).unwrap().0;
        let end = schedule.chaos.iter().find(|(_, chaos)| *chaos == Chaos::OutageEnd).unwrap().0;
        assert_eq!(end - start, Duration::from_secs(6));
        assert!(end <= period);
        assert!(schedule.chaos.is_sorted_by_key(|(at, _)| *at));
    }

    #[test]
    fn the_database_goes_away_once_within_the_arrivals_and_the_rest_of_the_campaign_is_the_seeds() {
        let args = ["--arrival", "2m", "--kills", "3", "--time-scale", "0.1", "--db", "postgres://x/y"];
        let away = Schedule::draw(&options(&[&args[..], &["--database-away", "30s", "--postgres", "p"]].concat()), 3);
        let window = away.database.expect("the database goes away");
        assert_eq!(window.lasts, Duration::from_secs(3));
        assert!(window.at + window.lasts <= Duration::from_secs(12), "within the arrivals: {window:?}");
        let never = Schedule::draw(&options(&args), 3);
        assert_eq!(never.database, None);
        assert_eq!(
            (&never.arrivals, &never.pgs, &never.vias, &never.chaos, &never.endpoint),
            (&away.arrivals, &away.pgs, &away.vias, &away.chaos, &away.endpoint)
        );
    }

    #[test]
    fn the_shops_endpoint_fails_each_way_one_at_a_time_and_the_rest_of_the_campaign_is_the_seeds() {
        let options = options(&[
            "--arrival",
            "5m",
            "--endpoint-down",
            "2m",
            "--endpoint-faults",
            "2",
            "--endpoint-fault-for",
            "20s",
            "--time-scale",
            "0.1",
        ]);
        let schedule = Schedule::draw(&options, 1);
        let count = |fault| schedule.endpoint.iter().filter(|window| window.fault == fault).count();
        assert_eq!(count(EndpointFault::Down), 1, "one outage");
        for fault in
            [EndpointFault::Error500, EndpointFault::Hang, EndpointFault::ResetAfterReading, EndpointFault::Slow]
        {
            assert_eq!(count(fault), 2, "{fault:?}");
        }
        let down = schedule.endpoint.iter().find(|window| window.fault == EndpointFault::Down).unwrap();
        assert_eq!(down.lasts, Duration::from_secs(12), "two minutes, at a tenth of real time");
        for pair in schedule.endpoint.windows(2) {
            assert!(pair[0].at + pair[0].lasts <= pair[1].at, "one at a time: {pair:?}");
        }
        let last = schedule.endpoint.last().unwrap();
        assert!(last.at + last.lasts <= Duration::from_secs(30), "within the period, as they fit in it");
        assert_eq!(schedule, Schedule::draw(&options, 1), "the seed decides");
        let healthy = Schedule::draw(
            &self::options(&[
                "--arrival",
                "5m",
                "--endpoint-down",
                "0s",
                "--endpoint-faults",
                "0",
                "--time-scale",
                "0.1",
            ]),
            1,
        );
        assert!(healthy.endpoint.is_empty());
        assert_eq!(
            (&healthy.arrivals, &healthy.pgs, &healthy.vias, &healthy.chaos),
            (&schedule.arrivals, &schedule.pgs, &schedule.vias, &schedule.chaos),
            "the endpoint's faults change nothing else"
        );
    }
}
