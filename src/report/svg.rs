//! Charts to attach: per workload, the median per tag in release order with its 95%
//! interval as a whisker, drawn with plotters.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use super::model::{ReportModel, Section};
use crate::manifest::release_key;
use super::cells::short_tag;
use super::{Exporter, Output};

pub struct Svg;

const NEWEST: RGBColor = RGBColor(200, 60, 30);
const OTHER: RGBColor = RGBColor(40, 90, 170);

/// One tag's column in a chart: a whisker from `lo` to `hi`, a dot at `mid`, a cross at `mark`.
pub struct Whisker {
    pub tag: String,
    pub lo: f64,
    pub mid: f64,
    pub hi: f64,
    pub mark: f64,
    pub newest: bool,
}

pub fn chart(m: &ReportModel, s: &Section) -> Result<String> {
    let mut rows: Vec<_> = s.ranked.iter().collect();
    rows.sort_by_key(|r| release_key(&r.tag));
    let columns: Vec<Whisker> = rows
        .iter()
        .map(|r| {
            let (lo, hi) = r.summary.median_ci.map(|c| (c.lo, c.hi)).unwrap_or((r.summary.min, r.summary.max));
            let newest = m.newest.as_deref() == Some(r.tag.as_str());
            // The cross is the fastest sample: on a shared machine the floor separates tags
            // the medians blur.
            Whisker { tag: r.tag.clone(), lo, mid: r.summary.median, hi, mark: r.summary.min, newest }
        })
        .collect();
    let title =
        format!("{} — median {} with 95% interval, × minimum (newest tag in red)", m.section_title(s), m.unit_of(s));
    whiskers(&title, m.unit_of(s), &columns)
}

/// Tags in the given order along x, each a whisker with its dot and cross.
pub fn whiskers(title: &str, y_desc: &str, columns: &[Whisker]) -> Result<String> {
    let n = columns.len() as i32;
    let lo = columns.iter().flat_map(|c| [c.lo, c.mark]).fold(f64::INFINITY, f64::min);
    let hi = columns.iter().flat_map(|c| [c.hi, c.mark]).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.01).max(1e-9);
    let (ylo, yhi) = ((lo - pad).max(0.0), hi + pad);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (960, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), ylo..yhi)
            .map_err(|e| anyhow!("{e:?}"))?;
        let labels: Vec<String> = columns.iter().map(|c| short_tag(&c.tag).to_string()).collect();
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(columns.len())
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .x_desc("LMDB tag")
            .y_desc(y_desc)
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        let color = |c: &Whisker| if c.newest { NEWEST } else { OTHER };
        c.draw_series(columns.iter().enumerate().map(|(i, w)| {
            ErrorBar::new_vertical(SegmentValue::CenterOf(i as i32), w.lo, w.mid, w.hi, color(w).stroke_width(2), 12)
        }))
        .map_err(|e| anyhow!("{e:?}"))?;
        c.draw_series(
            columns
                .iter()
                .enumerate()
                .map(|(i, w)| Circle::new((SegmentValue::CenterOf(i as i32), w.mid), 4, color(w).filled())),
        )
        .map_err(|e| anyhow!("{e:?}"))?;
        c.draw_series(
            columns
                .iter()
                .enumerate()
                .map(|(i, w)| Cross::new((SegmentValue::CenterOf(i as i32), w.mark), 4, color(w).stroke_width(1))),
        )
        .map_err(|e| anyhow!("{e:?}"))?;
        root.present().map_err(|e| anyhow!("{e:?}"))?;
    }
    Ok(buf)
}

impl Exporter for Svg {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        m.sections
            .iter()
            .map(|s| {
                let engine = if m.engines().len() > 1 { format!("-{}", s.engine) } else { String::new() };
                Ok(Output { suffix: format!("-{}{engine}.svg", s.workload), bytes: chart(m, s)?.into_bytes() })
            })
            .chain(super::presets::svg::charts(m))
            .collect()
    }
}
