//! The runs of an experiment over time, one panel per condition, as SVG:
//! payments sold, confirms in processing at the PG, payments UNKNOWN, confirms
//! refused for capacity, and the server's PG concurrency limit.

use std::path::Path;

use plotters::prelude::*;

use crate::run::{Figures, Sample};

const PANEL_HEIGHT: u32 = 260;

/// A line of a panel: its label, its colour, and what it draws from a sample.
type Line = (&'static str, RGBColor, fn(&Sample) -> f64);
const WIDTH: u32 = 900;

/// Draws every run's series into one SVG file at `path`.
pub fn draw(title: &str, runs: &[Figures], path: &Path) -> Result<(), String> {
    let height = PANEL_HEIGHT * runs.len().max(1) as u32 + 40;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(|error| error.to_string())?;
    let panels = root.split_evenly((runs.len().max(1), 1));
    for (panel, run) in panels.iter().zip(runs) {
        draw_run(panel, run).map_err(|error| error.to_string())?;
    }
    root.present().map_err(|error| error.to_string())
}

fn draw_run(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    run: &Figures,
) -> Result<(), Box<dyn std::error::Error>> {
    let series = &run.series;
    let end = series.last().map_or(1.0, |sample| sample.t).max(1.0);
    let top = series
        .iter()
        .map(|sample| {
            (sample.sold as f64).max(sample.pg_in_processing as f64).max(sample.unknown as f64).max(sample.limit)
        })
        .fold(10.0, f64::max)
        .max(series.iter().map(|sample| sample.rejections as f64).fold(0.0, f64::max).min(f64::MAX));
    let mut chart = ChartBuilder::on(area)
        .caption(run.condition.name, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..end, 0.0..top * 1.05)?;
    chart.configure_mesh().x_desc("seconds").light_line_style(WHITE.mix(0.0)).draw()?;
    let lines: [Line; 5] = [
        ("sold", RGBColor(0x1b, 0x7f, 0x3a), |sample| sample.sold as f64),
        ("in processing at the PG", RGBColor(0x1f, 0x5f, 0xbf), |sample| sample.pg_in_processing as f64),
        ("UNKNOWN", RGBColor(0xd9, 0x7a, 0x00), |sample| sample.unknown as f64),
        ("refused for capacity", RGBColor(0xb0, 0x20, 0x20), |sample| sample.rejections as f64),
        ("server's limit", RGBColor(0x70, 0x70, 0x70), |sample| sample.limit),
    ];
    for (label, color, value) in lines {
        chart
            .draw_series(LineSeries::new(series.iter().map(|sample| (sample.t, value(sample))), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK.mix(0.3)).draw()?;
    Ok(())
}
