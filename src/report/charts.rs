//! The SVG format's files: each section's chart and the extras' (`svg.rs` draws them),
//! and for a run under several memory limits each section's median against the limit.

use anyhow::Result;

use super::model::{ReportModel, Section};
use super::svg::{chart, extra_chart, Svg};
use super::trend::{trend, TrendSeries};
use super::{Exporter, Output};
use crate::record::Label;

impl Exporter for Svg {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        let sections = m.sections.iter().map(|s| {
            let engine = if m.engines().len() > 1 { format!("-{}", s.engine) } else { String::new() };
            Ok(Output { suffix: format!("-{}{engine}.svg", s.workload), bytes: chart(m, s)?.into_bytes() })
        });
        let extras = m
            .extras
            .charts
            .iter()
            .map(|c| Ok(Output { suffix: c.suffix.clone(), bytes: extra_chart(c)?.into_bytes() }));
        let limits = m.sections.iter().filter_map(|s| {
            let svg = memory_limits(m, s)?;
            Some(
                svg.map(|svg| Output { suffix: format!("-{}-memory-limits.svg", s.workload), bytes: svg.into_bytes() }),
            )
        });
        sections.chain(extras).chain(limits).collect()
    }
}

/// A section measured under several memory limits (`run --memory-limit`): each tag's
/// median against the limit, largest first, so the cliff where its data stops fitting
/// shows; None for a section of fewer than two limits.
fn memory_limits(m: &ReportModel, s: &Section) -> Option<Result<String>> {
    let mut limits: Vec<_> = s.ranked.iter().filter_map(|r| r.tag.memory_limit).collect();
    limits.sort_by(|a, b| b.cmp(a));
    limits.dedup();
    if limits.len() < 2 {
        return None;
    }
    let mut tags: Vec<Label> = s.ranked.iter().map(|r| Label { memory_limit: None, ..r.tag.clone() }).collect();
    tags.sort_by_key(|t| t.release_key());
    tags.dedup();
    let median = |tag: &Label, limit| {
        let at = tag.with_memory_limit(limit);
        s.ranked.iter().find(|r| r.tag == at).map(|r| r.summary.median)
    };
    let series: Vec<TrendSeries> = tags
        .iter()
        .map(|t| TrendSeries { label: t.clone(), medians: limits.iter().map(|l| median(t, *l)).collect() })
        .collect();
    let names: Vec<String> = limits.iter().map(|l| l.to_string()).collect();
    let unit = m.unit_of(s);
    let title = format!("{} — median {unit} by memory limit", m.section_title(s));
    Some(trend(&title, unit, ("memory limit", &names), &series))
}
