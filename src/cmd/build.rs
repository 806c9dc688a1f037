//! `lmdb-regress build`: fetch, verify and compile what a tag spec names.

use anyhow::{bail, Context, Result};

use super::args::BuildArgs;
use crate::compile::BuildKind;
use crate::layout;
use crate::matrix::{MatrixOptions, Status, TagBuild};
use crate::source::Want;

pub fn run(
    spec: &str,
    sources: &[std::path::PathBuf],
    args: &BuildArgs,
    c_harness: bool,
    json: bool,
    layout_objects: bool,
) -> Result<()> {
    let m = super::manifest()?;
    let mut kinds = vec![BuildKind::SharedLibrary];
    if c_harness {
        kinds.push(BuildKind::CHarness);
    }
    let opts = super::matrix_options(args, kinds)?;
    let wants = super::units(&m, spec, sources, opts.resolver.git.as_deref())?;
    let rows = super::build_with_progress(&wants, &opts)?;
    if layout_objects {
        compile_layout_objects(&rows, &wants, &opts)?;
    }
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

/// Every build's objects for random layouts, as `run` would compile them, on every core.
fn compile_layout_objects(rows: &[TagBuild], wants: &[Want], opts: &MatrixOptions) -> Result<()> {
    let builds: Vec<(usize, BuildKind)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.status == Status::Built)
        .flat_map(|(i, r)| r.builds.iter().map(move |b| (i, b.kind)))
        .collect();
    let bar = crate::progress::bar(builds.len() as u64, "compiling objects for random layouts");
    let work = |&(i, kind): &(usize, BuildKind)| {
        let (want, toolchain) = super::row_origin(i, wants, opts);
        layout::objects_of(want, &toolchain.toolchain, kind, opts)
    };
    crate::runner::pool::for_each(&builds, opts.jobs, work, |&(i, _), objects| {
        bar.inc(1);
        objects.map(drop).with_context(|| format!("{}: objects for random layouts", rows[i].tag))
    })?;
    bar.finish_and_clear();
    Ok(())
}

pub fn source_dir(spec: &str, git: Option<std::path::PathBuf>) -> Result<()> {
    let m = super::manifest()?;
    let resolver = crate::source::Resolver::from_env(git)?;
    let wants = crate::tags::parse_spec(&m, spec, resolver.git.as_deref())?;
    for want in &wants {
        match resolver.resolve(want) {
            crate::source::Resolution::Found(set) => println!("{}", set.dir.display()),
            unavailable => bail!("{} unavailable: {}", want.label(), unavailable.why().unwrap_or_default()),
        }
    }
    Ok(())
}
