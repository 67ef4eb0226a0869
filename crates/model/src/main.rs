//! `payonce-model`: explores every interleaving of the settlement protocol
//! within the bounds given, and prints what it explored and what it found.
//! `--explore ADDRESS` serves Stateright's explorer instead, to step through
//! the model (and a counterexample) in a browser.

use std::process::ExitCode;

use clap::Parser;
use payonce_model::{Bounds, OldRule, Protocol, check};
use stateright::Model;

#[derive(Debug, Parser)]
#[command(about = "Explores every interleaving of the settlement protocol")]
struct Args {
    /// Faults in one run (kills, freezes, database errors, timeouts, 429s, stored 5xx, failed lookups).
    #[arg(long, default_value_t = Bounds::TESTED.faults)]
    faults: u8,
    /// Recovery passes between two ticks of time.
    #[arg(long, default_value_t = Bounds::TESTED.passes)]
    passes: u8,
    /// Background workers per server (1 or 2).
    #[arg(long, default_value_t = Bounds::TESTED.workers, value_parser = clap::value_parser!(u8).range(1..=2))]
    workers: u8,
    /// Tabs of the page that pay for the order (1 or 2).
    #[arg(long, default_value_t = Bounds::TESTED.tabs, value_parser = clap::value_parser!(u8).range(1..=2))]
    tabs: u8,
    /// Leave the operator's refund out (a smaller model).
    #[arg(long)]
    no_refunds: bool,
    /// A PG without idempotency keys (KakaoPay: its approve, lookups and
    /// cancels), under the rules the server applies to one.
    #[arg(long)]
    without_idempotency_keys: bool,
    /// The PG's rarer answers too: a 409 while a key's first request is
    /// processing, a body that cannot be read, a connection that fails.
    #[arg(long)]
    wire_faults: bool,
    /// One fault may be an outage of the PG's lookups, long enough to open
    /// the breaker at the server's threshold (five failures in a row).
    #[arg(long)]
    outage: bool,
    /// Put an old rule back (to see the checker catch it): one of
    /// confirm-settles-without-lease, half-open-forever, no-age-rule,
    /// partial-refund-without-amount, one-lease-name-per-server, lookup-by-key-only,
    /// and, with --without-idempotency-keys, refusal-of-a-resend-retried and
    /// refusal-settled-without-lease.
    #[arg(long = "old-rule", value_parser = parse_old_rule)]
    old_rules: Vec<OldRule>,
    /// Checker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Serve Stateright's explorer at this address (for example localhost:3000) instead.
    #[arg(long)]
    explore: Option<String>,
}

fn parse_old_rule(name: &str) -> Result<OldRule, String> {
    OldRule::from_name(name).ok_or_else(|| {
        let names: Vec<_> = OldRule::ALL.iter().map(|rule| rule.name()).collect();
        format!("no old rule {name:?}; known: {}", names.join(", "))
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    let bounds = Bounds {
        faults: args.faults,
        passes: args.passes,
        workers: args.workers,
        refunds: !args.no_refunds,
        tabs: args.tabs,
    };
    let mut base = Protocol::new(bounds);
    if args.without_idempotency_keys {
        base = base.without_idempotency_keys();
    }
    if args.wire_faults {
        base = base.with_wire_faults();
    }
    if args.outage {
        base = base.with_outage();
    }
    let protocol = args.old_rules.iter().fold(base, |protocol, rule| protocol.with_old_rule(*rule));
    if let Some(address) = args.explore {
        println!("explorer at http://{address}/ (Ctrl-C to stop)");
        protocol.checker().threads(args.threads).serve(address);
        return ExitCode::SUCCESS;
    }
    println!(
        "bounds: {bounds:?}; old rules: {:?}; PG without idempotency keys: {}; wire faults: {}; outage: {}",
        args.old_rules, args.without_idempotency_keys, args.wire_faults, args.outage
    );
    let report = check(&protocol, args.threads);
    println!("{}", report.summary());
    for finding in &report.findings {
        match (&finding.trace, finding.is_broken()) {
            (None, false) => println!("holds: {}", finding.property),
            (Some(_), false) => println!("reachable: {}", finding.property),
            (None, true) => println!("NEVER REACHED: {}", finding.property),
            (Some(trace), true) => println!("COUNTEREXAMPLE to {:?}:\n{trace}", finding.property),
        }
    }
    if report.broken().next().is_some() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
