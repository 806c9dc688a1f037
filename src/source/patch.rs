//! A unified diff applied to a unit's verified sources (`--tags 0.9.33+fix.patch`).
//!
//! diffy parses each file's part of the patch; each hunk is then placed here, exactly: its
//! context and removed lines must match the file line for line (no fuzz, ever), searched
//! outward from the line its header names, as GNU patch does with `--fuzz 0`. diffy's own
//! `apply` places hunks the same way but says neither where nor by how much they moved, and
//! fails with a bare number; placing them here names the file, the hunk and its header when
//! one does not apply, and records each hunk's offset. Files are matched by name, whatever
//! their leading folders (`a/libraries/liblmdb/mdb.c` and `mdb.c` both name `mdb.c`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::manifest::{is_library_file, FileHashes, Match, OPTIONAL_FILES, SOURCE_FILES};

/// Source files' bytes by file name (`mdb.c`).
pub type Sources = BTreeMap<String, Vec<u8>>;

/// A patch file as named in a tag spec, read once: what is hashed is what is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// As given (`patches/revert-8557.patch`).
    pub path: PathBuf,
    /// Its file name, as labels show it (`revert-8557.patch`).
    pub name: String,
    pub bytes: Vec<u8>,
    pub sha256: String,
}

impl PatchFile {
    pub fn read(path: &Path) -> Result<PatchFile> {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read the patch {}", path.display()))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let sha256 = hex::encode(Sha256::digest(&bytes));
        Ok(PatchFile { path: path.to_path_buf(), name, bytes, sha256 })
    }
}

/// Where one hunk went, as the build record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub file: String,
    /// The hunk's number within its file's part of the patch, from 1 (as GNU patch counts).
    pub hunk: usize,
    /// The line of the unpatched file where the hunk's first old line was found, from 1.
    pub line: usize,
    /// `line` less the line the hunk's header names: 0 where the patch was made.
    pub offset: i64,
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} hunk #{} at line {}", self.file, self.hunk, self.line)?;
        match self.offset {
            0 => Ok(()),
            1 | -1 => write!(f, " (offset {} line)", self.offset),
            n => write!(f, " (offset {n} lines)"),
        }
    }
}

/// What a patched unit's build record says of its patch: the patch, the base it was applied
/// to (its verified hashes, where they came from), and where every hunk went. No fuzz is ever used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchRecord {
    /// The patch's file name and SHA-256.
    pub file: String,
    pub sha256: String,
    /// The base unit's label, commit and verified file hashes (a tag's are its pins).
    pub base: String,
    pub base_commit: Option<String>,
    pub base_files: FileHashes,
    #[serde(rename = "base_match")]
    pub base_matches: Match,
    /// Where the base's sources first came from.
    pub base_provenance: super::Provenance,
    pub hunks: Vec<Placement>,
}

impl PatchRecord {
    /// "mdb.c hunk #1 at line 1234 (offset 5 lines)" for each hunk that moved; None when
    /// every hunk applied where its header says.
    pub fn offsets(&self) -> Option<String> {
        let moved: Vec<String> = self.hunks.iter().filter(|h| h.offset != 0).map(|h| h.to_string()).collect();
        (!moved.is_empty()).then(|| moved.join(", "))
    }
}

/// The patched files (those the patch changes, by name) and where each hunk went. `files`
/// are the unit's verified sources by name; `base` names them in errors.
pub fn apply(patch: &PatchFile, files: &Sources, base: &str) -> Result<(Sources, Vec<Placement>)> {
    let parts = file_parts(&patch.bytes);
    if parts.is_empty() {
        bail!("{}: no file in it (a unified diff: `--- a/mdb.c`, `+++ b/mdb.c`, then hunks)", patch.path.display());
    }
    let mut out = Sources::new();
    let mut placements = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let parsed = diffy::Patch::from_bytes(part)
            .map_err(|e| anyhow::anyhow!("{}: file {} of the patch: {e}", patch.path.display(), i + 1))?;
        let name = target_name(&parsed, &patch.path)?;
        let image = match out.get(&name).or_else(|| files.get(&name)) {
            Some(_) if is_new_file(&parsed) => bail!(
                "{}: its part for {name} creates the file (its original side is /dev/null), and {base} has {name} \
                 already: applied, it would be put before the file's own lines; take the diff against {base}'s \
                 {name} (`diff -u`, `git diff`); nothing is built",
                patch.path.display()
            ),
            Some(bytes) => bytes.clone(),
            None if is_new_file(&parsed) && OPTIONAL_FILES.contains(&name.as_str()) => Vec::new(),
            None => bail!("{}: it changes {name}, which {base} does not have", patch.path.display()),
        };
        let (patched, placed) = apply_file(&parsed, &image, &name, &format!("{base}'s {name}"))
            .map_err(|e| anyhow::anyhow!("{}: {name} {e}; nothing is built", patch.path.display()))?;
        if patched.is_empty() && SOURCE_FILES.contains(&name.as_str()) {
            bail!("{}: it deletes {name}, without which nothing builds", patch.path.display());
        }
        placements.extend(placed);
        out.insert(name, patched);
    }
    Ok((out, placements))
}

/// The patch cut into one part per file: each from its `--- ` line (followed by `+++ `) to
/// the next file's header or the next `diff ` line. What comes before the first (a commit's
/// message, `diff --git`, `index` lines) belongs to no file.
fn file_parts(bytes: &[u8]) -> Vec<Vec<u8>> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let starts_file =
        |i: usize| lines[i].starts_with(b"--- ") && lines.get(i + 1).is_some_and(|next| next.starts_with(b"+++ "));
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    for (i, line) in lines.iter().enumerate() {
        if starts_file(i) || line.starts_with(b"diff ") {
            parts.extend(current.take());
            current = starts_file(i).then(Vec::new);
        }
        if let Some(part) = current.as_mut() {
            part.extend_from_slice(line);
        }
    }
    parts.extend(current);
    parts
}

/// The library file a part changes, by the file name of its `+++` path (its `---` path for
/// a deletion); anything but liblmdb's library sources is refused.
fn target_name(part: &diffy::Patch<'_, [u8]>, patch: &Path) -> Result<String> {
    let named =
        |p: Option<&[u8]>| p.map(|p| String::from_utf8_lossy(p).trim().to_string()).filter(|p| p != "/dev/null");
    let path = named(part.modified()).or_else(|| named(part.original()));
    let path = path.with_context(|| format!("{}: a file's part names no file", patch.display()))?;
    let name = Path::new(&path).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !is_library_file(&name) {
        let sources: Vec<&str> = SOURCE_FILES.iter().chain(OPTIONAL_FILES.iter()).copied().collect();
        bail!(
            "{}: it changes {path}, which is not one of liblmdb's library sources ({}); take the library files' \
             diff alone (`git show COMMIT -- libraries/liblmdb/mdb.c`)",
            patch.display(),
            sources.join(", ")
        );
    }
    Ok(name)
}

fn is_new_file(part: &diffy::Patch<'_, [u8]>) -> bool {
    part.original().is_some_and(|p| p.trim_ascii() == b"/dev/null")
}

/// `part`'s hunks applied to `image` (`whose`: "LMDB_0.9.33's mdb.c") in order, each placed
/// exactly; the error names the hunk.
fn apply_file(
    part: &diffy::Patch<'_, [u8]>,
    image: &[u8],
    name: &str,
    whose: &str,
) -> Result<(Vec<u8>, Vec<Placement>)> {
    let old: Vec<&[u8]> = image.split_inclusive(|&b| b == b'\n').collect();
    let mut new: Vec<&[u8]> = Vec::with_capacity(old.len());
    let (mut copied, mut drift) = (0usize, 0i64);
    let mut placements = Vec::new();
    for (i, hunk) in part.hunks().iter().enumerate() {
        let at = place(hunk, &old, copied, drift).ok_or_else(|| not_applying(hunk, i + 1, whose))?;
        new.extend_from_slice(&old[copied..at]);
        new.extend(hunk.lines().iter().filter_map(|l| match l {
            diffy::Line::Context(s) | diffy::Line::Insert(s) => Some(*s),
            diffy::Line::Delete(_) => None,
        }));
        let offset = at as i64 - expected_index(hunk) as i64;
        placements.push(Placement { file: name.to_string(), hunk: i + 1, line: at + 1, offset });
        (copied, drift) = (at + old_lines(hunk).len(), offset);
    }
    new.extend_from_slice(&old[copied..]);
    Ok((new.concat(), placements))
}

fn not_applying(hunk: &diffy::Hunk<'_, [u8]>, n: usize, whose: &str) -> anyhow::Error {
    let context = hunk.function_context().map(|c| format!(" {}", String::from_utf8_lossy(c).trim_end()));
    let old = old_lines(hunk);
    let first = old.first().map(|l| format!(" (the first: {:?})", String::from_utf8_lossy(l).trim_end()));
    anyhow::anyhow!(
        "hunk #{n} (@@ -{} +{} @@{}) does not apply to {whose}: its {} context and removed lines{} match no \
         place in it exactly, and patches apply with no fuzz",
        hunk.old_range(),
        hunk.new_range(),
        context.unwrap_or_default(),
        old.len(),
        first.unwrap_or_default()
    )
}

/// The lines a hunk expects to find: its context and the lines it removes.
fn old_lines<'a>(hunk: &diffy::Hunk<'a, [u8]>) -> Vec<&'a [u8]> {
    hunk.lines()
        .iter()
        .filter_map(|l| match l {
            diffy::Line::Context(s) | diffy::Line::Delete(s) => Some(*s),
            diffy::Line::Insert(_) => None,
        })
        .collect()
}

/// The index (from 0) of the line a hunk's header names: a hunk that removes nothing and
/// has no context (`@@ -5,0 +6,2 @@`) goes after line 5.
fn expected_index(hunk: &diffy::Hunk<'_, [u8]>) -> usize {
    let start = hunk.old_range().start();
    if hunk.old_range().is_empty() {
        start
    } else {
        start.saturating_sub(1)
    }
}

/// Where `hunk`'s old lines match `old` exactly, at or after `from` (hunks go forward and
/// do not overlap), nearest to where its header and the previous hunk's offset put it.
/// As GNU patch: a hunk with less context before its change than after must start the
/// file, one with less after must end it.
fn place(hunk: &diffy::Hunk<'_, [u8]>, old: &[&[u8]], from: usize, drift: i64) -> Option<usize> {
    let want = old_lines(hunk);
    let lines = hunk.lines();
    let lead = lines.iter().take_while(|l| matches!(l, diffy::Line::Context(_))).count();
    let trail = lines.iter().rev().take_while(|l| matches!(l, diffy::Line::Context(_))).count();
    let last = old.len().checked_sub(want.len())?;
    let fits = |at: usize| {
        at >= from
            && at <= last
            && old[at..at + want.len()] == want[..]
            && (lead >= trail || at == 0)
            && (trail >= lead || at == last)
    };
    let guess = (expected_index(hunk) as i64 + drift).clamp(0, last as i64) as usize;
    (0..=old.len())
        .flat_map(|d| [guess.checked_sub(d), guess.checked_add(d).filter(|_| d > 0)])
        .flatten()
        .find(|&at| fits(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

    fn patch(text: &str) -> PatchFile {
        PatchFile {
            path: "fix.patch".into(),
            name: "fix.patch".into(),
            bytes: text.as_bytes().to_vec(),
            sha256: String::new(),
        }
    }

    fn sources(mdb: &str) -> Sources {
        Sources::from([("mdb.c".to_string(), mdb.as_bytes().to_vec()), ("lmdb.h".to_string(), b"h\n".to_vec())])
    }

    const GIT_DIFF: &str = "commit 1a2b\nAuthor: x\n\n    a fix\n\ndiff --git a/libraries/liblmdb/mdb.c b/libraries/liblmdb/mdb.c\n\
        index 1..2 100644\n--- a/libraries/liblmdb/mdb.c\n+++ b/libraries/liblmdb/mdb.c\n@@ -4,3 +4,3 @@ fn\n four\n-five\n+FIVE\n six\n";

    #[test]
    fn a_git_diff_applies_by_file_name_and_says_where() {
        let (out, placed) = apply(&patch(GIT_DIFF), &sources(BASE), "LMDB_0.9.33").unwrap();
        assert_eq!(out.keys().collect::<Vec<_>>(), ["mdb.c"]);
        assert_eq!(String::from_utf8(out["mdb.c"].clone()).unwrap(), BASE.replace("five", "FIVE"));
        assert_eq!(placed, [Placement { file: "mdb.c".into(), hunk: 1, line: 4, offset: 0 }]);
    }

    #[test]
    fn a_moved_hunk_is_placed_and_its_offset_recorded() {
        let moved = format!("zero\nzero\n{BASE}");
        let (out, placed) = apply(&patch(GIT_DIFF), &sources(&moved), "LMDB_0.9.33").unwrap();
        assert_eq!(String::from_utf8(out["mdb.c"].clone()).unwrap(), moved.replace("five", "FIVE"));
        assert_eq!(placed[0].offset, 2);
        assert_eq!(placed[0].to_string(), "mdb.c hunk #1 at line 6 (offset 2 lines)");
    }

    #[test]
    fn a_hunk_that_does_not_match_exactly_is_named() {
        let flat = "--- mdb.c\n+++ mdb.c\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n@@ -8,3 +8,3 @@ tail\n eight\n-NINE\n+9\n ten\n";
        let e = apply(&patch(flat), &sources(BASE), "LMDB_0.9.33").unwrap_err().to_string();
        assert!(
            e.starts_with("fix.patch: mdb.c hunk #2 (@@ -8,3 +8,3 @@ tail) does not apply to LMDB_0.9.33's mdb.c"),
            "{e}"
        );
        assert!(e.contains("(the first: \"eight\")") && e.ends_with("no fuzz; nothing is built"), "{e}");
        // A near match (one context line off) is no match: no fuzz.
        let fuzzy = "--- mdb.c\n+++ mdb.c\n@@ -4,3 +4,3 @@\n four\n-five\n+FIVE\n SIX\n";
        assert!(apply(&patch(fuzzy), &sources(BASE), "b").unwrap_err().to_string().contains("hunk #1"));
    }

    #[test]
    fn only_library_files_are_patched() {
        let other = "--- a/CHANGES\n+++ b/CHANGES\n@@ -1 +1 @@\n-a\n+b\n";
        let e = apply(&patch(other), &sources(BASE), "b").unwrap_err().to_string();
        assert!(e.contains("changes b/CHANGES, which is not one of liblmdb's library sources"), "{e}");
        let e = apply(&patch("just words\n"), &sources(BASE), "b").unwrap_err().to_string();
        assert!(e.contains("no file in it"), "{e}");
    }

    #[test]
    fn a_new_file_part_for_a_file_the_base_has_is_refused() {
        let new_mdb = "--- /dev/null\n+++ b/libraries/liblmdb/mdb.c\n@@ -0,0 +1,2 @@\n+new\n+file\n";
        let e = apply(&patch(new_mdb), &sources(BASE), "LMDB_0.9.33").unwrap_err().to_string();
        assert!(
            e.starts_with("fix.patch: its part for mdb.c creates the file (its original side is /dev/null)"),
            "{e}"
        );
        assert!(e.contains("LMDB_0.9.33 has mdb.c already") && e.ends_with("nothing is built"), "{e}");
        // A file the base lacks is created.
        let (out, _) = apply(&patch(&new_mdb.replace("mdb.c", "module.c")), &sources(BASE), "b").unwrap();
        assert_eq!(out["module.c"], b"new\nfile\n");
    }

    #[test]
    fn two_files_and_a_change_at_the_end() {
        let two = "--- a/lmdb.h\n+++ b/lmdb.h\n@@ -1 +1,2 @@\n h\n+i\n--- a/mdb.c\n+++ b/mdb.c\n@@ -9,2 +9,3 @@\n nine\n ten\n+eleven\n";
        let (out, placed) = apply(&patch(two), &sources(BASE), "b").unwrap();
        assert_eq!(out["lmdb.h"], b"h\ni\n");
        assert!(String::from_utf8(out["mdb.c"].clone()).unwrap().ends_with("ten\neleven\n"));
        assert_eq!(placed.len(), 2);
        // Less context after the change than before: the hunk must end the file.
        let longer = format!("{BASE}eleven\n");
        let e = apply(&patch(two), &sources(&longer), "b").unwrap_err().to_string();
        assert!(e.contains("hunk #1 (@@ -9,2 +9,3 @@) does not apply"), "{e}");
    }
}
