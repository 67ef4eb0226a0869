//! An experiment's runs as one table, and as JSON.

use std::fmt::Write;

use crate::run::Figures;

/// The table of all runs, one row per condition.
pub fn table(runs: &[Figures]) -> String {
    let mut out = String::new();
    let header = [
        "condition",
        "customers",
        "PAID",
        "FAILED (by code)",
        "PG confirms (first + resent)",
        "PG 429",
        "PG_BUSY",
        "via UNKNOWN",
        "to final p50/p95/max s",
        "peak PG",
        "peak waiting",
        "API p95 ms (idle / run)",
    ];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            let failed =
                run.failed.iter().map(|(code, count)| format!("{count} {code}")).collect::<Vec<_>>().join(", ");
            vec![
                run.condition.name.to_owned(),
                run.customers.to_string(),
                run.paid.to_string(),
                if failed.is_empty() { "0".to_owned() } else { failed },
                format!("{} ({} + {})", run.pg_confirms, run.first_calls, run.recovery_resends),
                run.contract_limit_rejections.to_string(),
                run.pg_busy.to_string(),
                format!("{:.0} %", run.unknown_share * 100.0),
                format!(
                    "{:.1} / {:.1} / {:.1}",
                    run.time_to_final_ms.p50 / 1000.0,
                    run.time_to_final_ms.p95 / 1000.0,
                    run.time_to_final_ms.max / 1000.0
                ),
                run.peak_pg_in_processing.to_string(),
                format!("{:.0}", run.peak_server_waiting),
                format!("{:.1} / {:.1}", run.api_idle_ms.p95, run.api_loaded_ms.p95),
            ]
        })
        .collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    for run in runs {
        let _ = writeln!(
            out,
            "  {}: {} recovery lookups; server's own p95 for a read {:.1} ms; {} left unsettled, {} double charges, {} ledger mismatches",
            run.condition.name,
            run.recovery_lookups,
            run.server_read_p95_ms,
            run.left_unsettled,
            run.double_charges,
            run.ledger_mismatches
        );
    }
    out
}

/// Whether a run broke what must never break: a payment left unknown, a
/// double charge, a charge without a PAID order or the reverse.
pub fn broken(run: &Figures) -> bool {
    run.left_unsettled > 0 || run.double_charges > 0 || run.ledger_mismatches > 0
}
