//! The trend chart: a tag's median along one axis, one line per tag (the site's across
//! runs; a run's across its memory limits).

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::cells::{self, short_tag};
use super::svg::{axes, err, headed, with_titles, Tip, SIZE};
use crate::record::label::Label;

/// One series of a trend chart: a tag's median in each run (None where it was not measured).
pub struct TrendSeries {
    pub label: Label,
    pub medians: Vec<Option<f64>>,
}

/// Medians along `x` (the site's runs, a run's memory limits): one line per tag, coloured
/// from blue (oldest tag) to red (newest), points in the order given, labelled `runs`.
pub fn trend(title: &str, unit: &str, (x, runs): (&str, &[String]), series: &[TrendSeries]) -> Result<String> {
    let values = || series.iter().flat_map(|s| s.medians.iter().flatten().copied());
    let (lo, hi) = (values().fold(f64::INFINITY, f64::min), values().fold(f64::NEG_INFINITY, f64::max));
    if !lo.is_finite() {
        return Err(anyhow!("a trend chart needs at least one median"));
    }
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.01).max(1e-9);
    let n = runs.len() as i32;
    let hue = |i: usize| 0.62 * (1.0 - i as f64 / (series.len().max(2) - 1) as f64);
    let color = |i: usize| HSLColor(hue(i), 0.75, 0.42);
    let mut buf = String::new();
    let tips = {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        let area = headed(&root, title, None)?;
        let (plot, key) = area.split_horizontally(SIZE.0 - 150);
        let mut c = ChartBuilder::on(&plot)
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(76)
            .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), (lo - pad).max(0.0)..hi + pad)
            .map_err(err)?;
        // Dates are wide: at most six labelled, every point's tooltip names its run.
        axes(&mut c.configure_mesh())
            .x_labels(runs.len().min(6))
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    runs.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .x_desc(x)
            .y_desc(unit)
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(err)?;
        let mut tips = Vec::new();
        for (k, s) in series.iter().enumerate() {
            let points: Vec<(SegmentValue<i32>, f64)> = s
                .medians
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (SegmentValue::CenterOf(i as i32), v)))
                .collect();
            c.draw_series(LineSeries::new(points.clone(), color(k).stroke_width(2))).map_err(err)?;
            c.draw_series(points.iter().map(|p| Circle::new(p.clone(), 4, color(k).filled()))).map_err(err)?;
            tips.extend(points.iter().zip(s.medians.iter().enumerate().filter(|(_, v)| v.is_some())).map(
                |(p, (i, v))| Tip {
                    at: c.backend_coord(p),
                    text: format!(
                        "{} in {}: median {} {unit}",
                        short_tag(&cells::label(&s.label)),
                        runs[i],
                        cells::num(v.unwrap_or_default())
                    ),
                },
            ));
        }
        draw_key(&key, series, &color)?;
        root.present().map_err(err)?;
        tips
    };
    Ok(with_titles(buf, title, &tips))
}

/// The tags' colours, one line each, beside a trend chart.
fn draw_key(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    series: &[TrendSeries],
    color: &dyn Fn(usize) -> HSLColor,
) -> Result<()> {
    let step = ((SIZE.1 as i32 - 80) / series.len().max(1) as i32).clamp(10, 22);
    for (k, s) in series.iter().enumerate() {
        let y = 60 + k as i32 * step;
        area.draw(&Rectangle::new([(4, y - 5), (18, y + 5)], color(k).filled())).map_err(err)?;
        let style = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(short_tag(&cells::label(&s.label)).to_string(), (24, y), style)).map_err(err)?;
    }
    Ok(())
}
