//! `lmdb-regress build`: fetch, verify and compile what a tag spec names.

use anyhow::{bail, Result};

use super::args::BuildArgs;
use crate::compile::BuildKind;
use crate::matrix::Status;

pub fn run(spec: &str, args: &BuildArgs, c_harness: bool) -> Result<()> {
    let m = super::manifest()?;
    let mut kinds = vec![BuildKind::SharedLibrary];
    if c_harness {
        kinds.push(BuildKind::CHarness);
    }
    let opts = super::matrix_options(args, kinds)?;
    let wants = crate::tags::parse_spec(&m, spec, opts.resolver.git.is_some())?;
    let rows = super::build_with_progress(&wants, &opts)?;
    print!("{}", super::tags::table(&rows));
    let bad = rows.iter().filter(|r| r.status != Status::Built).count();
    if bad == rows.len() {
        bail!("nothing was built");
    }
    if bad > 0 {
        eprintln!("{bad} of {} not built; the table says why", rows.len());
    }
    Ok(())
}

pub fn source_dir(spec: &str, git: Option<std::path::PathBuf>) -> Result<()> {
    let m = super::manifest()?;
    let resolver = crate::source::Resolver::from_env(git)?;
    let wants = crate::tags::parse_spec(&m, spec, resolver.git.is_some())?;
    for want in &wants {
        match resolver.resolve(want) {
            crate::source::Resolution::Found(set) => println!("{}", set.dir.display()),
            unavailable => bail!("{} unavailable: {}", want.label(), unavailable.why().unwrap_or_default()),
        }
    }
    Ok(())
}
