//! A versioned JSON document holding everything: configuration, environment, builds,
//! every raw sample, failures, summaries and comparisons.

use anyhow::Result;
use serde::Serialize;

use super::model::{ReportModel, Section};
use super::{Exporter, Output};

/// Bumped on any change a reader could trip over.
pub const REPORT_SCHEMA: u32 = 1;

pub struct Json;

#[derive(Serialize)]
struct Document<'a> {
    schema: u32,
    kind: &'static str,
    unit: &'static str,
    partial: bool,
    baseline: &'a str,
    newest: Option<&'a str>,
    config: &'a crate::workload::WorkloadConfig,
    plan: &'a crate::runner::runfile::Plan,
    environment: &'a crate::environment::Environment,
    instruction_counter: Option<&'a str>,
    tags: &'a [crate::runner::runfile::TagStatus],
    sections: &'a [Section],
    overhead: &'a [super::model::OverheadRow],
    failures: &'a [crate::runner::runfile::Failure],
    end: Option<&'a crate::runner::runfile::End>,
    samples: &'a [crate::runner::runfile::Sample],
}

pub fn render(m: &ReportModel) -> Result<String> {
    let doc = Document {
        schema: REPORT_SCHEMA,
        kind: "lmdb-regress-report",
        unit: m.unit.label,
        partial: m.partial(),
        baseline: &m.baseline,
        newest: m.newest.as_deref(),
        config: &m.config,
        plan: &m.plan,
        environment: &m.environment,
        instruction_counter: m.instruction_counter.as_deref(),
        tags: &m.tags,
        sections: &m.sections,
        overhead: &m.overhead,
        failures: &m.failures,
        end: m.end.as_ref(),
        samples: &m.samples,
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

impl Exporter for Json {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".json".into(), bytes: render(m)?.into_bytes() }])
    }
}
