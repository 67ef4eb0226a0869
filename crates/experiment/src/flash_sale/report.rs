//! A flash sale's runs as a table (one row per number of customers) and as an
//! SVG chart of memory and latency against the customers checking at once.

use std::fmt::Write;
use std::path::Path;

use plotters::prelude::*;

use super::Figures;

/// The table: one row per run, then each run's errors and no-place counts.
pub fn table(runs: &[Figures]) -> String {
    let header = [
        "customers",
        "orders/s",
        "confirms/s",
        "create p50/p99 ms",
        "confirm over the PG p50/p99 ms",
        "peak checking (waiting)",
        "server RSS idle → peak MB",
        "per waiting check KB",
        "server CPU mean/peak",
        "check past its wait p50/p99 ms",
        "answered at once",
        "commit → answer p50/p99 ms",
        "probe p50/p99 ms (idle → loaded)",
        "5xx",
        "generator CPU, send lag p99 ms",
    ];
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---:|".repeat(header.len()));
    for run in runs {
        let row = [
            run.customers.to_string(),
            format!("{:.0}", run.orders_per_second),
            format!("{:.0}", run.confirms_per_second),
            format!("{:.1} / {:.1}", run.create_ms.p50, run.create_ms.p99),
            if run.confirm_overhead_ms.count == 0 {
                "none answered in time".to_owned()
            } else {
                format!("{:.1} / {:.1}", run.confirm_overhead_ms.p50, run.confirm_overhead_ms.p99)
            },
            format!("{} ({})", run.peak_checking, run.peak_waiting),
            format!("{:.1} → {:.1}", run.server_rss_idle_mb, run.server_rss_peak_mb),
            format!("{:.1}", run.per_waiting_check_kb),
            format!("{:.2} / {:.2}", run.server_cpu_mean, run.server_cpu_peak),
            format!("{:.1} / {:.1}", run.unchanged_past_wait_ms.p50, run.unchanged_past_wait_ms.p99),
            run.answered_at_once.to_string(),
            format!("{:.0} / {:.0}", run.commit_to_answer_ms.p50, run.commit_to_answer_ms.p99),
            format!(
                "{:.1}/{:.1} → {:.1}/{:.1}",
                run.probe_idle_ms.p50, run.probe_idle_ms.p99, run.probe_loaded_ms.p50, run.probe_loaded_ms.p99
            ),
            run.server_errors().to_string(),
            format!("{:.2}, {:.1}", run.generator_cpu_mean, run.generator_send_lag_ms.p99),
        ];
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    for run in runs {
        let listed = |counts: Vec<(String, String)>| {
            let listed: Vec<String> = counts.into_iter().map(|(kind, count)| format!("{count} {kind}")).collect();
            if listed.is_empty() { "none".to_owned() } else { listed.join(", ") }
        };
        let told = listed(run.told.iter().map(|(kind, count)| (kind.clone(), count.to_string())).collect());
        let errors = listed(run.errors.iter().map(|(kind, count)| (kind.clone(), count.to_string())).collect());
        let no_place = listed(
            run.no_place
                .iter()
                .filter(|(_, count)| **count > 0)
                .map(|(why, count)| (why.clone(), count.to_string()))
                .collect(),
        );
        let by_server: Vec<String> = run.checks_by_server.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "  {} customers: told {told}; errors: {errors}; checks with no waiting place: {no_place}; \
             checks answered by each server: {}; PG peak in processing: {}; PG calls by HTTP version: {}",
            run.customers,
            by_server.join(" / "),
            run.pg_peak_in_flight,
            listed(run.pg_http_versions.iter().map(|(version, count)| (version.clone(), count.to_string())).collect()),
        );
    }
    out
}

/// Two panels against the customers checking at once: the server's memory
/// (peak RSS), and the latencies a customer feels (commit → answer p99, the
/// probe's p99 idle and loaded).
pub fn draw(title: &str, runs: &[Figures], path: &Path) -> Result<(), String> {
    draw_panels(title, runs, path).map_err(|error| error.to_string())
}

type Line = (&'static str, RGBColor, fn(&Figures) -> f64);

const MEMORY: [Line; 2] = [
    ("server RSS at peak, MB", RGBColor(0x1f, 0x5f, 0xbf), |run| run.server_rss_peak_mb),
    ("server RSS idle, MB", RGBColor(0x70, 0x70, 0x70), |run| run.server_rss_idle_mb),
];

const LATENCY: [Line; 3] = [
    ("commit → waiting check's answer p99, ms", RGBColor(0x1b, 0x7f, 0x3a), |run| run.commit_to_answer_ms.p99),
    ("probe p99 while checking, ms", RGBColor(0xd9, 0x7a, 0x00), |run| run.probe_loaded_ms.p99),
    ("probe p99 idle, ms", RGBColor(0x70, 0x70, 0x70), |run| run.probe_idle_ms.p99),
];

fn draw_panels(title: &str, runs: &[Figures], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (900, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let panels = root.split_evenly((2, 1));
    let most = runs.iter().map(|run| run.customers).max().unwrap_or(1) as f64 * 1.05;
    for (panel, (caption, lines)) in panels.iter().zip([("memory", &MEMORY[..]), ("latency", &LATENCY[..])]) {
        let highest = runs.iter().flat_map(|run| lines.iter().map(move |(_, _, value)| value(run))).fold(1.0, f64::max);
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..most, 0.0..highest * 1.1)?;
        chart.configure_mesh().x_desc("customers").light_line_style(WHITE.mix(0.0)).draw()?;
        for &(label, color, value) in lines {
            let points: Vec<(f64, f64)> = runs.iter().map(|run| (f64::from(run.customers), value(run))).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            chart.draw_series(points.into_iter().map(|point| Circle::new(point, 3, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    root.present()?;
    Ok(())
}
