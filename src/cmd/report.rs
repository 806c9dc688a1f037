//! `lmdb-regress report` and `compare`: saved runs in, tables out.

use std::path::Path;

use anyhow::Result;

use crate::files::{self, Existing};
use crate::record;
use crate::report::gate::{self, FailOn};
use crate::report::github::Github;
use crate::report::{self, Format};

pub fn run(
    file: &Path,
    formats: &[Format],
    baseline: Option<&str>,
    out_dir: Option<&Path>,
    metric: Option<record::Metric>,
    existing: Existing,
    fail_on: Option<FailOn>,
) -> Result<()> {
    let formats = report::distinct(formats);
    let data = record::load(file)?;
    let model = report::model::build_with(&data, baseline, metric)?;
    let outcome = fail_on.map(|f| gate::of_report(&model, f));
    let github = Github::of_job(outcome.clone(), &[file]);
    match out_dir {
        Some(dir) => {
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
            let outputs = report::files_of_with(&model, &formats, dir, &stem, &github)?;
            files::refuse_inputs(outputs.iter().map(|(p, _)| p.as_path()), &[file])?;
            super::write_set(&outputs, existing)?;
            for (p, _) in outputs {
                println!("{}", p.display());
            }
        }
        None => {
            use std::io::Write;
            let format = report::stdout_format(&formats)?;
            std::io::stdout().lock().write_all(&report::render_with(&model, format, &github)?)?;
        }
    }
    if formats.contains(&Format::Github) {
        super::job_summary(&github.render(&model))?;
    }
    match outcome {
        Some(outcome) => outcome.conclude(),
        None => Ok(()),
    }
}

pub fn compare(old: &Path, new: &Path, format: Format, fail_on: Option<FailOn>) -> Result<()> {
    let (o, n) = (record::load(old)?, record::load(new)?);
    for (path, run) in [(old, &o), (new, &n)] {
        if run.samples.is_empty() {
            anyhow::bail!(
                "{} holds no sample (its run was stopped, or failed, before its first one): nothing to compare",
                path.display()
            );
        }
    }
    let c = report::compare::build(&o, &n)?;
    let differs = c.incomparable();
    if fail_on.is_some() && !differs.is_empty() {
        anyhow::bail!(
            "{} and {} were measured differently ({}): a gate over their comparisons would judge the difference \
             of configuration, not of LMDB; measure both alike, or compare them without --fail-on (which warns)",
            old.display(),
            new.display(),
            differs.join("; ")
        );
    }
    let outcome = fail_on.map(|f| gate::of_compare(&c, f));
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&c)?),
        format => {
            let mut d = report::compare::outline(&c);
            d.machine = Some(report::compare::machine(&o.header.environment, &n.header.environment));
            super::print_document(&d, format, &Github::of_job(outcome.clone(), &[old, new]), None)?
        }
    }
    match outcome {
        Some(outcome) => outcome.conclude(),
        None => Ok(()),
    }
}
