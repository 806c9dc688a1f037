//! `lmdb-regress site DIR RUN...`: every run's HTML report, every history's page (its
//! `history.json`) and an index page, written as a folder GitHub Pages serves as it is
//! (relative links, `.nojekyll`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::files::{self, Existing};
use crate::record;
use crate::report::history::History;
use crate::report::site::{self, SiteHistory, SiteRun};
use crate::report::{html, model};

pub fn run(dir: &Path, runs: &[PathBuf], force: bool) -> Result<()> {
    check_arguments(dir, runs)?;
    let mut site_runs: Vec<SiteRun> = Vec::new();
    let mut histories: Vec<SiteHistory> = Vec::new();
    let mut taken: Vec<String> = vec!["index.html".into()];
    for path in runs {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
        if path.extension().is_some_and(|e| e == "json") {
            let history = load_history(path)?;
            let page = format!("history-{}.html", crate::runner::sanitize(&history.range));
            claim(&mut taken, &page, path)?;
            histories.push(SiteHistory { page, history });
            continue;
        }
        let data = record::load(path)?;
        let model = model::build(&data, None).with_context(|| format!("cannot report {}", path.display()))?;
        let page = format!("{stem}.html");
        claim(&mut taken, &page, path)?;
        site_runs.push(SiteRun { page, model });
    }
    let mut pages: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for r in &site_runs {
        pages.push((dir.join(&r.page), html::render(&r.model)?.into_bytes()));
    }
    for h in &histories {
        pages.push((
            dir.join(&h.page),
            crate::report::render_shown(&h.history, crate::report::Format::Html, &Default::default())?.into_bytes(),
        ));
    }
    pages.push((dir.join("index.html"), site::index(&site_runs, &histories)?.into_bytes()));
    // GitHub Pages serves the folder as it is, without Jekyll.
    pages.push((dir.join(".nojekyll"), Vec::new()));
    let inputs: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    files::refuse_inputs(pages.iter().map(|(p, _)| p.as_path()), &inputs)?;
    if !force {
        refuse_foreign(&pages)?;
    }
    super::write_set(&pages, Existing::Replace)?;
    for (p, _) in pages {
        println!("{}", p.display());
    }
    Ok(())
}

/// The folder comes first, then the runs: a file given as the folder, or no runs, is said
/// as such before anything is read.
fn check_arguments(dir: &Path, runs: &[PathBuf]) -> Result<()> {
    if dir.is_file() {
        bail!(
            "{} is a file, and site's first argument is the folder to write: `lmdb-regress site DIR {}{}`",
            dir.display(),
            dir.display(),
            runs.iter().map(|r| format!(" {}", r.display())).collect::<String>()
        );
    }
    if runs.is_empty() {
        bail!(
            "name the run files (and histories) to put in {}: `lmdb-regress site {} RUN...`",
            dir.display(),
            dir.display()
        );
    }
    Ok(())
}

/// A page name no other input of the site has.
fn claim(taken: &mut Vec<String>, page: &str, path: &Path) -> Result<()> {
    if taken.iter().any(|t| t == page) {
        bail!("two inputs would both be written as {page} ({}): rename one", path.display());
    }
    taken.push(page.to_string());
    Ok(())
}

/// A history's `history.json`, as `history` wrote it.
fn load_history(path: &Path) -> Result<History> {
    let text = files::read_text(path, "history")?;
    crate::report::document::read(&text, &path.display().to_string()).with_context(|| {
        format!("{} is not a history.json (a site takes run files, .jsonl, and histories, .json)", path.display())
    })
}

/// A site is rewritten in place, but a file in its folder that is none of the pages a
/// site holds (the user's own `index.html`, say) is not replaced without --force.
fn refuse_foreign(pages: &[(PathBuf, Vec<u8>)]) -> Result<()> {
    for (p, _) in pages {
        let ours = match std::fs::read(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Ok(old) => html::is_page(&old) || (old.is_empty() && p.ends_with(".nojekyll")),
            Err(_) => false,
        };
        if !ours {
            bail!(
                "{} exists and is not a page lmdb-regress wrote: choose another folder, or pass --force to replace it",
                p.display()
            );
        }
    }
    Ok(())
}
