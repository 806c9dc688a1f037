//! `lmdb-regress tags`: every tag in lmdb-tags, where its sources would come from and which
//! builds of it are cached. A listing: nothing is fetched or built (`build` does that).

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::compile::{BuildKind, BuildRecord};
use crate::manifest::TagEntry;
use crate::matrix::{Status, TagBuild};
use crate::source::{GitRepo, Resolver, Want};
use crate::terminal::{self, Stream};

/// One row of `tags --json`: field names are a script interface.
#[derive(Debug, Serialize)]
pub struct TagListing {
    pub tag: String,
    /// The pinned commit.
    pub commit: String,
    /// Where `build` would take the sources from first: `cache`, `git` (the repository
    /// `--git` names), `registry` (a package carries a copy; needs the network) or
    /// `archive` (only the upstream archive; needs the network, or `--git`).
    pub sources: &'static str,
    /// The cached copy's provenance and match, the repository, or the registry packages.
    pub detail: String,
    /// Cached builds of this tag's sources, one per toolchain (the library is
    /// `builds[i].artifact`).
    pub builds: Vec<BuildRecord>,
}

pub fn run(git: Option<PathBuf>, json: bool) -> Result<()> {
    let m = super::manifest()?;
    let resolver = Resolver::from_env(git)?;
    let repo = resolver.git.as_deref().map(GitRepo::open).transpose()?;
    let builds = crate::compile::cached_builds(&resolver.cache.builds_dir());
    let rows: Vec<TagListing> = m.tags.iter().map(|t| listing(t, &resolver, repo.as_ref(), &builds)).collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    let width = terminal::width(Stream::Stdout);
    let intro = format!(
        "Listing only: nothing is fetched or built here; `lmdb-regress build --tags SPEC` fetches, \
         verifies and compiles (default range {}). Cache: {}",
        m.default,
        resolver.cache.root.display()
    );
    println!("{}\n", terminal::wrap(&intro, width, ""));
    print!("{}", listing_table(&rows, width));
    Ok(())
}

fn listing(t: &TagEntry, resolver: &Resolver, repo: Option<&GitRepo>, builds: &[BuildRecord]) -> TagListing {
    let want = Want::Tag(t);
    let (sources, detail) = match resolver.cache.lookup(&want) {
        Ok(Some(set)) => {
            let from = crate::source::Provenance { cached: false, ..set.provenance };
            ("cache", format!("{from}, {}", set.matches))
        }
        cached => {
            let damaged = cached.err().map(|e| format!(" (the cached copy is refused: {e:#})")).unwrap_or_default();
            let (s, d) = fetchable(t, repo);
            (s, format!("{d}{damaged}"))
        }
    };
    let accepted: Vec<_> = t.accepted_hashes().into_iter().map(|(h, _)| h).collect();
    // A commit with the tag's files has the same build, cached under the commit's name too.
    let mut builds: Vec<BuildRecord> = builds.iter().filter(|b| accepted.contains(&&b.files)).cloned().collect();
    builds.sort_by_key(|b| (b.build_id.clone(), b.label != t.name));
    builds.dedup_by(|b, a| a.build_id == b.build_id);
    TagListing { tag: t.name.clone(), commit: t.commit.clone(), sources, detail, builds }
}

/// Where sources not in the cache would come from, asking no network.
fn fetchable(t: &TagEntry, repo: Option<&GitRepo>) -> (&'static str, String) {
    if let Some(r) = repo.filter(|r| r.resolve(&t.name).or_else(|_| r.resolve(&t.commit)).is_ok()) {
        return ("git", r.path.display().to_string());
    }
    match t.copies.iter().map(|c| c.describe()).collect::<Vec<_>>() {
        copies if copies.is_empty() => ("archive", "upstream only (or --git PATH)".into()),
        copies => ("registry", copies.join(", ")),
    }
}

fn listing_table(rows: &[TagListing], width: usize) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let built: Vec<String> = r.builds.iter().map(|b| b.toolchain.name()).collect();
            let built = if built.is_empty() { "-".to_string() } else { built.join(", ") };
            vec![r.tag.clone(), format!("{}: {}", r.sources, r.detail), built]
        })
        .collect();
    terminal::table(&["tag", "sources", "cached builds"], &cells, width, &[1])
}

/// What `build` did, one row per tag (and toolchain), with each library's build id (its
/// folder in the cache; `build --json` gives the full paths) and what LMDB's mtest said of
/// it. Unavailable tags were summed up apart.
pub fn build_table(rows: &[TagBuild], width: usize) -> String {
    // Each distinct cause of a tag not built once, in full, as a note under the table.
    let mut causes: Vec<&str> = Vec::new();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let library = r.build(BuildKind::SharedLibrary);
            let build = match (r.status, library) {
                (_, Some(b)) => b.build_id.clone(),
                (Status::Failed, None) => "failed (above)".into(),
                _ => "-".into(),
            };
            let mtest = library.and_then(|b| b.mtest.as_ref()).map_or_else(|| "-".into(), |m| m.to_string());
            let mut status =
                serde_json::to_value(r.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
            if let Some(why) = r.reason.as_deref().filter(|_| r.status != Status::Built) {
                let n = causes.iter().position(|c| *c == why).unwrap_or_else(|| {
                    causes.push(why);
                    causes.len() - 1
                });
                status += &format!(" [{}]", n + 1);
            }
            vec![
                r.tag.clone(),
                status,
                r.provenance.clone().unwrap_or_else(|| "-".into()),
                r.matches.map(|m| m.to_string()).unwrap_or_else(|| "-".into()),
                build,
                mtest,
            ]
        })
        .collect();
    let mut out = terminal::table(&["tag", "status", "sources", "match", "build", "mtest"], &cells, width, &[2]);
    for (i, why) in causes.iter().enumerate() {
        let mark = format!("[{}] ", i + 1);
        // Whole words, wrapped; a word wider than a line (a path) shortened whole.
        let room = width.saturating_sub(mark.len()).max(12);
        let words: Vec<String> = why.split_whitespace().map(|w| terminal::fit_word(w, room)).collect();
        out += &terminal::wrap(&format!("{mark}{}", words.join(" ")), width, &" ".repeat(mark.len()));
        out.push('\n');
    }
    out
}
