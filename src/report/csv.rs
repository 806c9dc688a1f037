//! CSV for scripts: one file of summaries, one of raw samples.

use std::fmt::Write;

use anyhow::Result;

use super::model::ReportModel;
use super::{Exporter, Output};

pub struct Csv;

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

pub fn summaries(m: &ReportModel) -> String {
    let mut o = String::from(
        "engine,workload,tag,rank,n,median,median_lo,median_hi,mean,mean_lo,mean_hi,stddev,min,max,cv,\
         vs_fastest_ratio,vs_fastest_lo,vs_fastest_hi,vs_fastest_p,vs_baseline_ratio,vs_baseline_lo,vs_baseline_hi,vs_baseline_p,unit\n",
    );
    for s in &m.sections {
        for r in &s.ranked {
            let b = s.vs_baseline.iter().find(|b| b.tag == r.tag).and_then(|b| b.vs_baseline.as_ref());
            let f = r.vs_fastest.as_ref();
            let x = &r.summary;
            let _ = writeln!(
                o,
                "{},{},{},{},{},{:.6},{},{},{:.6},{},{},{:.6},{:.6},{:.6},{:.6},{},{},{},{},{},{},{},{},{}",
                s.engine,
                s.workload,
                r.tag,
                r.rank,
                x.n,
                x.median,
                opt(x.median_ci.map(|c| c.lo)),
                opt(x.median_ci.map(|c| c.hi)),
                x.mean,
                opt(x.mean_ci.map(|c| c.lo)),
                opt(x.mean_ci.map(|c| c.hi)),
                x.stddev,
                x.min,
                x.max,
                x.cv,
                opt(f.map(|c| c.ratio)),
                opt(f.and_then(|c| c.ratio_ci.map(|i| i.lo))),
                opt(f.and_then(|c| c.ratio_ci.map(|i| i.hi))),
                opt(f.and_then(|c| c.p_value())),
                opt(b.map(|c| c.ratio)),
                opt(b.and_then(|c| c.ratio_ci.map(|i| i.lo))),
                opt(b.and_then(|c| c.ratio_ci.map(|i| i.hi))),
                opt(b.and_then(|c| c.p_value())),
                m.unit.label
            );
        }
    }
    o
}

pub fn samples(m: &ReportModel) -> String {
    let mut o = String::from("round,engine,tag,workload,ns,instructions,checksum\n");
    for s in &m.samples {
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{}",
            s.round,
            s.engine,
            s.tag,
            s.workload,
            s.ns,
            s.instructions.map(|i| i.to_string()).unwrap_or_default(),
            s.checksum.map(|c| c.to_string()).unwrap_or_default()
        );
    }
    o
}

impl Exporter for Csv {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![
            Output { suffix: "-summary.csv".into(), bytes: summaries(m).into_bytes() },
            Output { suffix: "-samples.csv".into(), bytes: samples(m).into_bytes() },
        ])
    }
}
