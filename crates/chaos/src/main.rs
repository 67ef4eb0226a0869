//! `payonce-chaos`: parses flags, runs one campaign, prints its table, writes
//! its JSON, and exits non-zero if any order disagrees with the PG's ledger.

use std::process::ExitCode;

use clap::Parser;
use payonce_chaos::cli::Options;

#[tokio::main]
async fn main() -> ExitCode {
    let options = Options::parse();
    let report = match payonce_chaos::run(&options).await {
        Ok(report) => report,
        Err(error) => {
            eprintln!("payonce-chaos: {error}");
            return ExitCode::from(2);
        }
    };
    println!("{report}");
    if let Some(path) = &options.json {
        let written = serde_json::to_string_pretty(&report)
            .map_err(std::io::Error::other)
            .and_then(|json| std::fs::write(path, json + "\n"));
        if let Err(error) = written {
            eprintln!("payonce-chaos: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if report.failed() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
