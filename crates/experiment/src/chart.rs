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
    let highest = |lines: &[Line]| {
        series.iter().flat_map(|sample| lines.iter().map(move |(_, _, value)| value(sample))).fold(10.0, f64::max)
            * 1.05
    };
    let mut chart = ChartBuilder::on(area)
        .caption(run.condition.name, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(48)
        .right_y_label_area_size(56)
        .build_cartesian_2d(0.0..end, 0.0..highest(&LEVELS))?
        .set_secondary_coord(0.0..end, 0.0..highest(&TOTALS));
    chart.configure_mesh().x_desc("seconds").y_desc("now").light_line_style(WHITE.mix(0.0)).draw()?;
    chart.configure_secondary_axes().y_desc("so far").draw()?;
    for (label, color, value) in LEVELS {
        chart
            .draw_series(LineSeries::new(series.iter().map(|sample| (sample.t, value(sample))), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    for (label, color, value) in TOTALS {
        chart
            .draw_secondary_series(LineSeries::new(
                series.iter().map(|sample| (sample.t, value(sample))),
                color.stroke_width(2),
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

/// On the left axis: what is true at each moment, and the sales so far.
const LEVELS: [Line; 4] = [
    ("sold so far", RGBColor(0x1b, 0x7f, 0x3a), |sample| sample.sold as f64),
    ("in processing at the PG", RGBColor(0x1f, 0x5f, 0xbf), |sample| sample.pg_in_processing as f64),
    ("server's limit", RGBColor(0x70, 0x70, 0x70), |sample| sample.limit),
    ("UNKNOWN now", RGBColor(0xd9, 0x7a, 0x00), |sample| sample.unknown as f64),
];

/// On the right axis: the confirms refused for capacity so far (by the PG or the server).
const TOTALS: [Line; 1] =
    [("refused for capacity so far (right)", RGBColor(0xb0, 0x20, 0x20), |sample| sample.rejections as f64)];
