//! `lmdb-regress report` and `compare`: saved runs in, tables out.

use std::path::Path;

use anyhow::Result;

use crate::files::{self, Existing};
use crate::report::gate::{self, FailOn};
use crate::report::{self, Format};
use crate::runner::runfile;

pub fn run(
    file: &Path,
    formats: &[Format],
    baseline: Option<&str>,
    out_dir: Option<&Path>,
    metric: Option<runfile::Metric>,
    existing: Existing,
    fail_on: Option<FailOn>,
) -> Result<()> {
    let formats = report::distinct(formats);
    let data = runfile::load(file)?;
    let model = report::model::build_with(&data, baseline, metric)?;
    match out_dir {
        Some(dir) => {
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
            let outputs = report::files_of(&model, &formats, dir, &stem)?;
            files::refuse_inputs(outputs.iter().map(|(p, _)| p.as_path()), &[file])?;
            super::write_set(&outputs, existing)?;
            for (p, _) in outputs {
                println!("{}", p.display());
            }
        }
        None => {
            use std::io::Write;
            let format = report::stdout_format(&formats)?;
            std::io::stdout().lock().write_all(&report::render(&model, format)?)?;
        }
    }
    match fail_on {
        Some(fail_on) => gate::of_report(&model, fail_on).conclude(),
        None => Ok(()),
    }
}

pub fn compare(old: &Path, new: &Path, json: bool, fail_on: Option<FailOn>) -> Result<()> {
    let (o, n) = (runfile::load(old)?, runfile::load(new)?);
    for (path, run) in [(old, &o), (new, &n)] {
        if run.samples.is_empty() {
            anyhow::bail!(
                "{} holds no sample (its run was stopped, or failed, before its first one): nothing to compare",
                path.display()
            );
        }
    }
    let c = report::compare::build(&o, &n)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", report::compare::render_text(&c));
    }
    match fail_on {
        Some(fail_on) => gate::of_compare(&c, fail_on).conclude(),
        None => Ok(()),
    }
}
