//! One exploration and what it found, for the command and the tests.

use std::time::{Duration, Instant};

use stateright::{Checker, Expectation, Model, Path};

use crate::protocol::{Action, Protocol};
use crate::state::State;
use crate::trace;

/// What one property came to.
#[derive(Debug)]
pub struct Finding {
    pub property: &'static str,
    /// `always` and `eventually` must find nothing; `sometimes` must find an example.
    pub expectation: Expectation,
    pub discovery: Option<Path<State, Action>>,
    /// The discovery as a readable trace, ending where a promise broke.
    pub trace: Option<String>,
}

impl Finding {
    /// A counterexample to a promise, or a `sometimes` never reached.
    pub fn is_broken(&self) -> bool {
        match self.expectation {
            Expectation::Always | Expectation::Eventually => self.discovery.is_some(),
            Expectation::Sometimes => self.discovery.is_none(),
        }
    }
}

#[derive(Debug)]
pub struct Report {
    pub unique_states: usize,
    pub generated_states: usize,
    pub depth: usize,
    pub took: Duration,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn broken(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|finding| finding.is_broken())
    }

    pub fn finding(&self, property: &str) -> &Finding {
        self.findings.iter().find(|finding| finding.property == property).expect("a property of the model")
    }

    /// One line: how much was explored, how deep, how fast.
    pub fn summary(&self) -> String {
        format!(
            "explored {} states ({} generated), depth {}, in {:.1} s",
            self.unique_states,
            self.generated_states,
            self.depth,
            self.took.as_secs_f64()
        )
    }
}

/// Explores every state the protocol can reach, breadth first (so each
/// counterexample is a shortest one), on `threads` threads.
pub fn check(protocol: &Protocol, threads: usize) -> Report {
    let started = Instant::now();
    report(protocol, protocol.clone().checker().threads(threads).spawn_bfs().join(), started)
}

/// Explores depth first: a counterexample that needs many steps (two faults
/// and a refund) is found in a fraction of the time breadth first takes, and
/// a whole bound is explored with less CPU (about 11 CPU-seconds on one
/// thread for 1 fault and 2 workers per server, against 13.5 breadth first
/// and 17 on two threads), but a counterexample it finds is not the shortest.
pub fn find(protocol: &Protocol, threads: usize) -> Report {
    let started = Instant::now();
    report(protocol, protocol.clone().checker().threads(threads).spawn_dfs().join(), started)
}

fn report(protocol: &Protocol, checker: impl Checker<Protocol>, started: Instant) -> Report {
    let took = started.elapsed();
    let findings = protocol
        .properties()
        .into_iter()
        .map(|property| {
            let discovery = checker.discovery(property.name);
            let trace = discovery.as_ref().map(|path| match property.expectation {
                // The first state that breaks it ends the trace.
                Expectation::Always => trace::render_until(path, |state| !(property.condition)(protocol, state)),
                Expectation::Eventually | Expectation::Sometimes => trace::render_until(path, |_| false),
            });
            Finding { property: property.name, expectation: property.expectation.clone(), discovery, trace }
        })
        .collect();
    Report {
        unique_states: checker.unique_state_count(),
        generated_states: checker.state_count(),
        depth: checker.max_depth(),
        took,
        findings,
    }
}
