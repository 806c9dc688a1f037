//! `lmdb-regress build`: fetch, verify and compile what a tag spec names.

use anyhow::{bail, Result};

use super::args::BuildArgs;
use crate::compile::BuildKind;
use crate::matrix::Status;

pub fn run(spec: &str, args: &BuildArgs, c_harness: bool, json: bool) -> Result<()> {
    let m = super::manifest()?;
    let mut kinds = vec![BuildKind::SharedLibrary];
    if c_harness {
        kinds.push(BuildKind::CHarness);
    }
    let opts = super::matrix_options(args, kinds)?;
    let wants = crate::tags::parse_spec(&m, spec, opts.resolver.git.is_some())?;
    let rows = super::build_with_progress(&wants, &opts);
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        let width = crate::terminal::width(crate::terminal::Stream::Stdout);
        print!("{}", super::tags::build_table(&rows, width));
        let libraries = opts.resolver.cache.builds_dir().join("<tag>-so-<build>/liblmdb.so");
        let note = format!("Each library is {} (`build --json` gives every path).", libraries.display());
        println!("{}", crate::terminal::wrap(&note, width, ""));
    }
    if rows.iter().all(|r| r.status != Status::Built) {
        bail!("nothing was built (why is said above)");
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
