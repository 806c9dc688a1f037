//! Charts to attach: per workload, the median per tag in release order with its 95%
//! interval as a whisker, drawn with plotters.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use super::cells::short_tag;
use super::model::{ReportModel, Section};
use super::{Exporter, Output};
use crate::manifest::release_key;

pub struct Svg;

const NEWEST: RGBColor = RGBColor(200, 60, 30);
const OTHER: RGBColor = RGBColor(40, 90, 170);

pub fn chart(m: &ReportModel, s: &Section) -> Result<String> {
    let mut rows: Vec<_> = s.ranked.iter().collect();
    rows.sort_by_key(|r| release_key(&r.tag));
    let n = rows.len() as i32;
    let bounds: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| r.summary.median_ci.map(|c| (c.lo, c.hi)).unwrap_or((r.summary.min, r.summary.max)))
        .collect();
    let lo = bounds.iter().map(|b| b.0).chain(rows.iter().map(|r| r.summary.min)).fold(f64::INFINITY, f64::min);
    let hi = bounds.iter().map(|b| b.1).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.01).max(1e-9);
    let (ylo, yhi) = ((lo - pad).max(0.0), hi + pad);
    let title =
        format!("{} — median {} with 95% interval, × minimum (newest tag in red)", m.section_title(s), m.unit.label);
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
        let labels: Vec<String> = rows.iter().map(|r| short_tag(&r.tag).to_string()).collect();
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(rows.len())
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .x_desc("LMDB tag")
            .y_desc(m.unit.label)
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        let color = |tag: &str| {
            if m.newest.as_deref() == Some(tag) {
                NEWEST
            } else {
                OTHER
            }
        };
        c.draw_series(rows.iter().zip(&bounds).enumerate().map(|(i, (r, b))| {
            ErrorBar::new_vertical(
                SegmentValue::CenterOf(i as i32),
                b.0,
                r.summary.median,
                b.1,
                color(&r.tag).stroke_width(2),
                12,
            )
        }))
        .map_err(|e| anyhow!("{e:?}"))?;
        c.draw_series(rows.iter().enumerate().map(|(i, r)| {
            Circle::new((SegmentValue::CenterOf(i as i32), r.summary.median), 4, color(&r.tag).filled())
        }))
        .map_err(|e| anyhow!("{e:?}"))?;
        // The fastest sample: on a shared machine the floor separates tags the medians blur.
        c.draw_series(rows.iter().enumerate().map(|(i, r)| {
            Cross::new((SegmentValue::CenterOf(i as i32), r.summary.min), 4, color(&r.tag).stroke_width(1))
        }))
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
            .collect()
    }
}
