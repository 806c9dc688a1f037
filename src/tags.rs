//! Tag specifications: `0.9.17..0.9.33`, `LMDB_0.9.19`, `0.9.18,0.9.21`, series (`0.9`,
//! `1.0`), `all`, `default`, (with a git repository) commit ids and branch or tag names,
//! and any of these with a patch applied (`0.9.33+revert-8557.patch`). Shared with build.rs.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::manifest::{normalize_tag, Manifest};
use crate::source::{ref_label, GitRepo, PatchFile, Want};

/// The units a command measures: those `spec` names, then a local directory's for each
/// of `sources` (`--source DIR`), each once. Their names are not yet checked against the
/// label grammar (`cmd::units` does, one layer up, where labels live).
pub fn parse_units<'a>(m: &'a Manifest, spec: &str, sources: &[PathBuf], git: Option<&Path>) -> Result<Vec<Want<'a>>> {
    let mut out = parse_spec(m, spec, git)?;
    // One directory however spelled (`dir`, `dir/`, `./dir`) is one unit, named as first given.
    let mut dirs = std::collections::HashSet::new();
    let once = sources.iter().filter(|d| dirs.insert(std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())));
    out.extend(once.map(|dir| Want::Local(dir.clone())));
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.label()));
    Ok(out)
}

/// The tags `spec` names, in its order, each once. `git` is the repository commits and ref
/// names are resolved in (a ref name becomes a commit labelled `mdb.RE/0.9 @ 1a2b3c4d`).
pub fn parse_spec<'a>(m: &'a Manifest, spec: &str, git: Option<&Path>) -> Result<Vec<Want<'a>>> {
    let mut out: Vec<Want<'a>> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "all" => out.extend(m.tags.iter().map(Want::Tag)),
            "default" => out.extend(parse_spec(m, &m.default.clone(), git)?),
            // Tags, commits and ref names hold no '+': the first one starts the patch's path.
            _ if item.contains('+') => out.extend(parse_patched(m, item, git)?),
            _ => out.extend(parse_item(m, item, git)?),
        }
    }
    if out.is_empty() {
        bail!("the tag specification {spec:?} names no tag");
    }
    refuse_patch_collisions(&out)?;
    // A tag named twice is measured once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.label()));
    Ok(out)
}

/// Refuses two different patches of one file name on one base (`a/fix.patch` and
/// `b/fix.patch`): a unit's label names its patch by the file name alone, so the two would
/// be one unit, and the second would be dropped as named twice. The same patch named twice
/// (by any path) is one unit, measured once.
fn refuse_patch_collisions(wants: &[Want<'_>]) -> Result<()> {
    let mut first: std::collections::HashMap<String, &PatchFile> = std::collections::HashMap::new();
    for w in wants {
        let Want::Patched { patch, .. } = w else { continue };
        let label = w.label();
        match first.get(&label) {
            Some(earlier) if earlier.sha256 != patch.sha256 => bail!(
                "{} and {} are two different patches named {}: both would be the unit `{label}` (a label names \
                 its patch by the file name alone); rename one of them",
                earlier.path.display(),
                patch.path.display(),
                patch.name
            ),
            Some(_) => {}
            None => {
                first.insert(label, patch);
            }
        }
    }
    Ok(())
}

/// `BASE+FILE`: each unit BASE names, with the patch FILE applied (read once, here).
fn parse_patched<'a>(m: &'a Manifest, item: &str, git: Option<&Path>) -> Result<Vec<Want<'a>>> {
    let (base, file) = item.split_once('+').expect("the item holds a '+'");
    let (base, file) = (base.trim(), file.trim());
    if base.is_empty() || file.is_empty() {
        bail!("{item:?}: a patched unit is BASE+FILE, e.g. 0.9.33+revert-8557.patch");
    }
    let patch = PatchFile::read(Path::new(file)).with_context(|| format!("in the tag spec item {item:?}"))?;
    let bases = parse_spec(m, base, git)?;
    Ok(bases.into_iter().map(|b| Want::Patched { base: Box::new(b), patch: patch.clone() }).collect())
}

/// One item of a specification other than `all` and `default`.
fn parse_item<'a>(m: &'a Manifest, item: &str, git: Option<&Path>) -> Result<Vec<Want<'a>>> {
    if let Some((a, b)) = item.split_once("..") {
        // An open end runs to the oldest or the newest pinned tag.
        let ia = if a.trim().is_empty() { 0 } else { index(m, a)? };
        let ib = if b.trim().is_empty() { m.tags.len().saturating_sub(1) } else { index(m, b)? };
        if ia > ib {
            bail!("tag range {item} runs backwards: {} comes before {}", m.tags[ib].name, m.tags[ia].name);
        }
        return Ok(m.tags[ia..=ib].iter().map(Want::Tag).collect());
    }
    if let Some(t) = m.find(item) {
        return Ok(vec![Want::Tag(t)]);
    }
    if let Some(series) = series(m, item) {
        return Ok(series);
    }
    if looks_like_commit(item) {
        if git.is_none() {
            bail!("{item} looks like a commit id: commits need --git PATH (or LMDB_GIT)");
        }
        return Ok(vec![Want::Commit(item.to_string())]);
    }
    match git {
        Some(repo) => {
            let repo = GitRepo::open(repo)?;
            let commit = repo.resolve(item).map_err(|_| {
                anyhow::anyhow!(
                    "{item} is neither a known tag ({}) nor a branch, tag or commit of {}",
                    m.known_names(),
                    repo.path.display()
                )
            })?;
            Ok(vec![Want::Commit(ref_label(item, &commit))])
        }
        None => bail!(
            "unknown tag {}; known tags: {} (branch names and other git refs need --git PATH)",
            normalize_tag(item),
            m.known_names()
        ),
    }
}

/// A release series, `0.9` or `1.0` (or `LMDB_1.0`): every pinned tag of it, oldest first.
fn series<'a>(m: &'a Manifest, item: &str) -> Option<Vec<Want<'a>>> {
    let (major, minor) = item.strip_prefix("LMDB_").unwrap_or(item).split_once('.')?;
    let (major, minor): (i32, i32) = (major.parse().ok()?, minor.parse().ok()?);
    let tags: Vec<Want> = m
        .tags
        .iter()
        .filter(|t| t.version().is_some_and(|(a, b, _)| (a, b) == (major, minor)))
        .map(Want::Tag)
        .collect();
    (!tags.is_empty()).then_some(tags)
}

fn index(m: &Manifest, name: &str) -> Result<usize> {
    m.index_of(name.trim()).ok_or_else(|| {
        anyhow::anyhow!(
            "unknown tag {}; known tags: {} (ranges: 0.9.17..0.9.33, 0.9.35.. to the newest, ..0.9.20 from the oldest)",
            normalize_tag(name.trim()),
            m.known_names()
        )
    })
}

pub fn looks_like_commit(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(spec: &str, git: bool) -> anyhow::Result<Vec<String>> {
        let m = Manifest::builtin();
        // Commit ids need a repository only when they are built.
        let repo = git.then_some(Path::new("/nonexistent"));
        Ok(parse_spec(&m, spec, repo)?.iter().map(|w| w.label()).collect())
    }

    #[test]
    fn specs() {
        let d = labels("default", false).unwrap();
        assert_eq!(d.len(), 17);
        assert_eq!(d.first().unwrap(), "LMDB_0.9.17");
        assert_eq!(d.last().unwrap(), "LMDB_0.9.33");
        assert_eq!(labels("0.9.17..0.9.33", false).unwrap(), d);
        assert_eq!(labels("LMDB_0.9.19", false).unwrap(), ["LMDB_0.9.19"]);
        assert_eq!(labels("0.9.18,0.9.21", false).unwrap(), ["LMDB_0.9.18", "LMDB_0.9.21"]);
        assert_eq!(labels("all", false).unwrap().len(), 22);
        assert_eq!(labels("0.9.18,deadbeef", true).unwrap(), ["LMDB_0.9.18", "deadbeef"]);
        // Open ends: to the newest pinned tag, from the oldest.
        let all = labels("all", false).unwrap();
        assert_eq!(labels("0.9.35..", false).unwrap(), all[all.iter().position(|t| t == "LMDB_0.9.35").unwrap()..]);
        assert_eq!(labels("..0.9.18", false).unwrap(), ["LMDB_0.9.17", "LMDB_0.9.18"]);
        // Across series, in version order; series by their two numbers.
        assert_eq!(labels("0.9.35..1.0.1", false).unwrap(), ["LMDB_0.9.35", "LMDB_0.9.36", "LMDB_1.0.0", "LMDB_1.0.1"]);
        assert_eq!(labels("1.0", false).unwrap(), ["LMDB_1.0.0", "LMDB_1.0.1"]);
        assert_eq!(labels("LMDB_1.0", false).unwrap(), ["LMDB_1.0.0", "LMDB_1.0.1"]);
        assert_eq!(labels("0.9", false).unwrap(), all[..20]);
        assert_eq!(all.last().unwrap(), "LMDB_1.0.1");
        assert_eq!(labels("0.9.36..", false).unwrap(), ["LMDB_0.9.36", "LMDB_1.0.0", "LMDB_1.0.1"]);
    }

    #[test]
    fn a_patch_follows_its_base_and_a_directory_comes_last() {
        let dir = tempfile::tempdir().unwrap();
        let patch = dir.path().join("revert-8557.patch");
        std::fs::write(&patch, "--- a/mdb.c\n+++ b/mdb.c\n").unwrap();
        let m = Manifest::builtin();
        let spec = format!("0.9.18,0.9.33+{}", patch.display());
        let wants = parse_units(&m, &spec, &[PathBuf::from("../liblmdb")], None).unwrap();
        let labels: Vec<String> = wants.iter().map(|w| w.label()).collect();
        assert_eq!(labels, ["LMDB_0.9.18", "LMDB_0.9.33 + revert-8557.patch", "local:../liblmdb"]);
        let Want::Patched { base, patch: p } = &wants[1] else { panic!("not patched: {:?}", wants[1]) };
        assert_eq!((base.label().as_str(), p.sha256.len()), ("LMDB_0.9.33", 64));
        let e = format!("{:#}", parse_spec(&m, "0.9.33+/nonexistent/x.patch", None).unwrap_err());
        assert!(e.contains("cannot read the patch /nonexistent/x.patch"), "{e}");
        let e = parse_spec(&m, "0.9.33+", None).unwrap_err().to_string();
        assert!(e.contains("BASE+FILE"), "{e}");
    }

    #[test]
    fn two_patches_of_one_name_on_one_base_are_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a/fix.patch"), dir.path().join("b/fix.patch"));
        for (p, text) in [(&a, "--- a/mdb.c\n+++ b/mdb.c\n"), (&b, "--- a/midl.c\n+++ b/midl.c\n")] {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let m = Manifest::builtin();
        let e = parse_spec(&m, &format!("0.9.33+{},0.9.33+{}", a.display(), b.display()), None).unwrap_err();
        let e = e.to_string();
        assert!(e.contains(&format!("{} and {}", a.display(), b.display())), "{e}");
        assert!(e.contains("`LMDB_0.9.33 + fix.patch`") && e.contains("rename one"), "{e}");
        // On two bases they are two units; the same patch twice is one.
        let spec = format!("0.9.18+{},0.9.33+{}", a.display(), b.display());
        assert_eq!(parse_spec(&m, &spec, None).unwrap().len(), 2);
        let spec = format!("0.9.33+{},0.9.33+{}/../a/fix.patch", a.display(), dir.path().join("b").display());
        assert_eq!(parse_spec(&m, &spec, None).unwrap().len(), 1);
    }

    #[test]
    fn bad_specs_say_why() {
        let e = labels("0.9.99", false).unwrap_err().to_string();
        assert!(e.contains("unknown tag LMDB_0.9.99") && e.contains("LMDB_0.9.17, LMDB_0.9.18"), "{e}");
        let e = labels("deadbeef", false).unwrap_err().to_string();
        assert!(e.contains("--git"), "{e}");
        let e = labels("0.9.33..0.9.17", false).unwrap_err().to_string();
        assert!(e.contains("backwards"), "{e}");
        let e = labels("1.0.1..0.9.36", false).unwrap_err().to_string();
        assert!(e.contains("backwards: LMDB_0.9.36 comes before LMDB_1.0.1"), "{e}");
        let e = labels("0.9.30..1.0.9", false).unwrap_err().to_string();
        assert!(e.contains("unknown tag LMDB_1.0.9") && e.contains("ranges:"), "{e}");
        let e = labels("2.0", false).unwrap_err().to_string();
        assert!(e.contains("unknown tag LMDB_2.0"), "{e}");
        let e = labels("mdb.RE/0.9", false).unwrap_err().to_string();
        assert!(e.contains("need --git PATH"), "{e}");
    }
}
