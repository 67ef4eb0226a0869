//! The two experiments and the conditions each is run under, in the real units
//! of the shipped configuration; `Scale` shrinks them for quicker runs.

use std::time::Duration;

use serde::Serialize;

/// Customers arriving at a steady rate for a while.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Phase {
    pub per_second: f64,
    pub seconds: f64,
}

/// What the PG does in an experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PgBehaviour {
    /// How long an approval takes.
    pub latency: Duration,
    /// A share of approvals that take `slow.1` instead.
    pub slow: Option<(f64, Duration)>,
    /// Confirms in processing at once, abandoned ones included.
    pub contract_limit: u32,
}

/// How the server is set up for one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Condition {
    /// A short name for tables and charts.
    pub name: &'static str,
    pub read_timeout: Duration,
    /// `None` for the learned limit (`auto`).
    pub limit: Option<u32>,
    /// Whether the fake PG enforces its contract limit (a fake without one shows
    /// what a PG never does).
    pub contract_limit: bool,
}

/// An experiment: arrivals, the PG, and the conditions compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Experiment {
    pub name: &'static str,
    pub phases: Vec<Phase>,
    pub pg: PgBehaviour,
    pub recovery_interval: Duration,
    pub conditions: Vec<Condition>,
}

const SECOND: Duration = Duration::from_secs(1);

fn condition(name: &'static str, read_timeout_s: u64, limit: Option<u32>, contract_limit: bool) -> Condition {
    Condition { name, read_timeout: SECOND * read_timeout_s as u32, limit, contract_limit }
}

/// Warm-up 10 customers/s for 15 s, then 50/s for 60 s; every approval takes
/// 20 s; the PG's contract allows 60 confirms in processing.
pub fn brownout() -> Experiment {
    Experiment {
        name: "brownout",
        phases: vec![Phase { per_second: 10.0, seconds: 15.0 }, Phase { per_second: 50.0, seconds: 60.0 }],
        pg: PgBehaviour { latency: SECOND * 20, slow: None, contract_limit: 60 },
        recovery_interval: SECOND * 60,
        conditions: vec![
            condition("limit 40, 60 s timeout", 60, Some(40), true),
            condition("limit 40, 5 s timeout", 5, Some(40), true),
            condition("limit 40, 5 s, PG without limit", 5, Some(40), false),
            condition("limit 60, 60 s timeout", 60, Some(60), true),
            condition("learned, 60 s timeout", 60, None, true),
        ],
    }
}

/// Normal load (10/s for 60 s), approvals in 300 ms except a tenth in 20 s.
pub fn tail() -> Experiment {
    Experiment {
        name: "tail",
        phases: vec![Phase { per_second: 10.0, seconds: 60.0 }],
        pg: PgBehaviour { latency: Duration::from_millis(300), slow: Some((0.1, SECOND * 20)), contract_limit: 60 },
        recovery_interval: SECOND * 60,
        conditions: vec![
            condition("limit 40, 60 s timeout", 60, Some(40), true),
            condition("limit 40, 5 s timeout", 5, Some(40), true),
            condition("learned, 60 s timeout", 60, None, true),
        ],
    }
}

/// How an experiment is shrunk: `time` multiplies every duration (the PG's,
/// the server's, the page's and the arrivals'); `size` multiplies the arrival
/// rates, the contract limit and the limits, keeping demand and capacity in the
/// same ratio.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scale {
    pub time: f64,
    pub size: f64,
}

impl Scale {
    pub fn duration(&self, duration: Duration) -> Duration {
        duration.mul_f64(self.time)
    }

    /// A count scaled by size, at least one.
    pub fn count(&self, count: u32) -> u32 {
        ((f64::from(count) * self.size).round() as u32).max(1)
    }

    /// When each customer arrives, from the start: evenly within each phase.
    pub fn arrivals(&self, phases: &[Phase]) -> Vec<Duration> {
        let mut arrivals = Vec::new();
        let mut start = 0.0;
        for phase in phases {
            let customers = (phase.per_second * phase.seconds * self.size).round() as usize;
            let spacing = phase.seconds / customers.max(1) as f64;
            arrivals.extend((0..customers).map(|n| Duration::from_secs_f64((start + spacing * n as f64) * self.time)));
            start += phase.seconds;
        }
        arrivals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_brownout_brings_3150_customers_over_75_seconds() {
        let arrivals = Scale { time: 1.0, size: 1.0 }.arrivals(&brownout().phases);
        assert_eq!(arrivals.len(), 150 + 3_000);
        assert_eq!(arrivals[150], Duration::from_secs(15), "the second phase starts after the warm-up");
        assert!(arrivals.last().unwrap() < &Duration::from_secs(75));
    }

    #[test]
    fn scaling_keeps_demand_and_capacity_in_proportion() {
        let scale = Scale { time: 0.25, size: 0.2 };
        let arrivals = scale.arrivals(&brownout().phases);
        assert_eq!(arrivals.len(), 30 + 600);
        assert!(arrivals.last().unwrap() < &Duration::from_secs_f64(75.0 * 0.25));
        assert_eq!((scale.count(60), scale.count(40)), (12, 8));
        assert_eq!(scale.duration(Duration::from_secs(20)), Duration::from_secs(5));
    }
}
