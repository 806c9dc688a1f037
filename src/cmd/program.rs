//! `run --program`: the run's programs compiled against every unit's build before the
//! rounds, and a resumed run's programs held to the sources its header records.

use std::path::Path;

use anyhow::{bail, Result};

use crate::compile::BuildKind;
use crate::record::{self, Failure, FailureStage, ProgramRecord};
use crate::runner::program;
use crate::runner::Unit;

/// Each unit with `programs` compiled against its build (on every core, each from the
/// cache when compiled before); a program that does not compile against a unit is that
/// unit's recorded failure, with the compiler's message, and the other units go on.
pub fn compile_all(
    programs: &[ProgramRecord],
    mut units: Vec<Unit>,
    tags: &[record::TagStatus],
    git: Option<&Path>,
    jobs: usize,
    failures: &mut Vec<Failure>,
) -> Result<Vec<Unit>> {
    if programs.is_empty() {
        return Ok(units);
    }
    let dir = program::cache_dir(&crate::source::Resolver::from_env(git.map(Path::to_path_buf))?.cache.root);
    let pairs: Vec<(usize, &ProgramRecord)> =
        (0..units.len()).flat_map(|i| programs.iter().map(move |p| (i, p))).collect();
    let bar = crate::progress::bar(pairs.len() as u64, "compiling the programs");
    let work = |&(i, p): &(usize, &ProgramRecord)| -> Result<crate::runner::CompiledProgram> {
        let u = &units[i];
        let built = u.label.built();
        let build = tags
            .iter()
            .filter(|t| t.label == built)
            .flat_map(|t| &t.builds)
            .find(|b| b.kind == BuildKind::SharedLibrary);
        match build {
            Some(b) => program::compile(p, (&program::build_label(u), b), &dir),
            None => bail!("{} has no shared library to compile {}.c against", u.label, p.name),
        }
    };
    let mut compiled = Vec::new();
    crate::runner::pool::for_each(&pairs, jobs, work, |&(i, p), r| {
        bar.inc(1);
        compiled.push((i, p, r));
        Ok(())
    })?;
    bar.finish_and_clear();
    for (i, p, r) in compiled {
        let u = &mut units[i];
        match r {
            Ok(c) => {
                u.programs.insert(program::workload_of(p), c);
            }
            Err(e) => {
                eprintln!("not measured: {} on {}: {e:#}", p.name, u.label);
                failures.push(Failure {
                    round: None,
                    engine: u.engine,
                    unit: u.label.clone(),
                    workload: Some(program::workload_of(p)),
                    stage: FailureStage::Compile,
                    error: format!("{e:#}"),
                    died: false,
                    cause: None,
                });
            }
        }
    }
    Ok(units)
}

/// That every program a run file records still has the source it recorded: a resumed run
/// measures the same programs; the error names both hashes.
pub fn check_unchanged(programs: &[ProgramRecord], path: &Path) -> Result<()> {
    for p in programs {
        let now = program::source_sha256(&p.source)
            .map_err(|e| anyhow::anyhow!("{} cannot be resumed: {e:#}", path.display()))?;
        if now != p.sha256 {
            bail!(
                "{} cannot be resumed: its program {} ({}) has SHA-256 {now} now, but the run file records {} \
                 for it: restore that source, or start a new run",
                path.display(),
                p.name,
                p.source.display(),
                p.sha256
            );
        }
    }
    Ok(())
}
