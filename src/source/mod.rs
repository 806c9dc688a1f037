//! Where liblmdb's source files come from, and proof that they are what we asked for.
//!
//! Providers are tried in order — cache, git, upstream archive, registry packages — and
//! every file a provider hands over is hashed before anything else sees it. Shared with
//! build.rs: this module only refers to `crate::manifest`, `crate::source` and the
//! foundation's `envvars`, `files` and `children`.

mod archive;
mod cache;
mod git;
mod patch;
mod registry;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::manifest::{FileHashes, Match, TagEntry, OPTIONAL_FILES, SOURCE_FILES};

pub use cache::SourceCache;
pub use git::{CommitInfo, GitRepo};
pub use patch::{PatchFile, PatchRecord, Placement};

/// What to fetch: a pinned tag, (git only) any commit, either with a patch applied, or the
/// library sources of a local directory.
#[derive(Debug, Clone)]
pub enum Want<'a> {
    Tag(&'a TagEntry),
    Commit(String),
    /// `BASE+FILE`: a tag or commit with a patch applied to its verified sources.
    Patched {
        base: Box<Want<'a>>,
        patch: PatchFile,
    },
    /// `--source DIR`: whatever the directory holds now, hashed as found.
    Local(PathBuf),
}

/// What a patched unit's label puts between its base and its patch.
const PATCH_SEPARATOR: &str = " + ";
/// What a local directory's label starts with.
const LOCAL_PREFIX: &str = "local:";

impl Want<'_> {
    /// `LMDB_0.9.33`, `1a2b3c4d5e`, `LMDB_0.9.33 + revert-8557.patch`, `local:../liblmdb`.
    pub fn label(&self) -> String {
        match self {
            Want::Tag(t) => t.name.clone(),
            Want::Commit(c) => c.clone(),
            Want::Patched { base, patch } => format!("{}{PATCH_SEPARATOR}{}", base.label(), patch.name),
            Want::Local(dir) => format!("{LOCAL_PREFIX}{}", dir.display()),
        }
    }

    /// The commit a git repository is asked for: a commit's id as given, or the id a ref
    /// name was resolved to (its label is `mdb.RE/0.9 @ 1a2b3c4d`, see [`ref_label`]); a
    /// patched unit's base's. A local directory has none (empty).
    pub fn rev(&self) -> &str {
        match self {
            Want::Tag(t) => &t.commit,
            Want::Commit(c) => c.rsplit_once(REF_SEPARATOR).map_or(c.as_str(), |(_, id)| id),
            Want::Patched { base, .. } => base.rev(),
            Want::Local(_) => "",
        }
    }

    /// The directory a local unit's label (`local:../liblmdb`) names, as it was given.
    pub fn local_dir(label: &str) -> Option<&str> {
        label.strip_prefix(LOCAL_PREFIX)
    }

    /// Whether a unit's label is a patched unit's (`LMDB_0.9.33 + revert-8557.patch`).
    pub fn is_patched(label: &str) -> bool {
        label.contains(PATCH_SEPARATOR)
    }

    /// The pinned tag this unit is, or is a patch of.
    pub fn tag(&self) -> Option<&TagEntry> {
        match self {
            Want::Tag(t) => Some(t),
            Want::Patched { base, .. } => base.tag(),
            Want::Commit(_) | Want::Local(_) => None,
        }
    }
}

const REF_SEPARATOR: &str = " @ ";

/// The label of a branch or tag name resolved to `commit`: the name as given, then the
/// commit's first 8 digits (`mdb.RE/0.9 @ 1a2b3c4d`).
pub fn ref_label(name: &str, commit: &str) -> String {
    format!("{name}{REF_SEPARATOR}{}", &commit[..commit.len().min(8)])
}

/// Where a verified set of sources came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// `git`, `archive`, `crate` or `pypi`: the provider that first delivered the files.
    pub origin: String,
    /// Repository and commit, URL, or package and version.
    pub detail: String,
    /// True when this run took the files from the local cache.
    #[serde(default)]
    pub cached: bool,
}

impl Provenance {
    /// Files made here (`patch`: a patch applied; `local`: a `--source` directory's), not
    /// delivered by a provider: such a copy is no tag's or commit's source.
    pub fn is_made(&self) -> bool {
        matches!(self.origin.as_str(), "patch" | "local")
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.to_lowercase().starts_with(&self.origin.to_lowercase()) {
            f.write_str(&self.detail)?;
        } else {
            write!(f, "{} {}", self.origin, self.detail)?;
        }
        if self.cached {
            f.write_str(" (cache)")?;
        }
        Ok(())
    }
}

/// Verified library sources in a directory of their own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceSet {
    pub label: String,
    /// The full commit id, when known (always for git; the pinned one for tags).
    pub commit: Option<String>,
    pub dir: PathBuf,
    pub files: FileHashes,
    pub provenance: Provenance,
    #[serde(rename = "match")]
    pub matches: Match,
    /// For a patched unit: the patch, its base and where each hunk went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PatchRecord>,
}

impl SourceSet {
    /// Content address: one hash over the file hashes.
    pub fn key(&self) -> String {
        content_key(&self.files)
    }
}

pub fn content_key(files: &FileHashes) -> String {
    let mut h = Sha256::new();
    for (name, hash) in files {
        h.update(name.as_bytes());
        h.update(b"=");
        h.update(hash.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

pub fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// Hashes the library sources in `dir`: the four every liblmdb has, and those of
/// [`OPTIONAL_FILES`] it holds.
pub fn hash_dir(dir: &Path) -> Result<FileHashes> {
    let optional = OPTIONAL_FILES.iter().filter(|f| dir.join(f).is_file());
    SOURCE_FILES.iter().chain(optional).map(|f| Ok((f.to_string(), sha256_file(&dir.join(f))?))).collect()
}

/// Checks freshly delivered files against a tag's pinned hashes (or its equivalent copies).
/// The error names every differing file with both hashes, and the provider.
pub fn verify(want: &Want, actual: &FileHashes, provider: &str) -> Result<Match> {
    let tag = match want {
        Want::Commit(_) => return Ok(Match::Unpinned),
        Want::Patched { .. } => return Ok(Match::Patched),
        Want::Local(_) => return Ok(Match::Local),
        Want::Tag(t) => t,
    };
    for (expected, m) in tag.accepted_hashes() {
        if expected == actual {
            return Ok(m);
        }
    }
    let mut msg = format!("{} from {provider}: files do not match the pinned hashes", tag.name);
    let names: std::collections::BTreeSet<&String> = tag.files.keys().chain(actual.keys()).collect();
    for f in names {
        let (exp, act) =
            (tag.files.get(f).map_or("none", String::as_str), actual.get(f).map_or("missing", String::as_str));
        if exp != act {
            msg.push_str(&format!("\n  {f}: expected {exp}, got {act}"));
        }
    }
    bail!(msg)
}

/// The bytes of `set`'s files, each still hashing as it was verified.
fn read_verified(set: &SourceSet) -> Result<patch::Sources> {
    let mut files = patch::Sources::new();
    for (name, verified) in &set.files {
        let path = set.dir.join(name);
        let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        if hex::encode(Sha256::digest(&bytes)) != *verified {
            bail!("{} changed after it was verified: delete {} to fetch it again", path.display(), set.dir.display());
        }
        files.insert(name.clone(), bytes);
    }
    Ok(files)
}

/// One way of obtaining sources, tried in turn by [`Resolver`].
#[derive(Debug)]
pub struct Attempt {
    pub provider: String,
    pub error: String,
}

#[derive(Debug)]
pub enum Resolution {
    Found(SourceSet),
    /// Nothing verified could be had. `attempts` says what was tried and why each failed.
    Unavailable {
        attempts: Vec<Attempt>,
        hint: String,
        /// The cache could not be written: the fix is the cache, not another source.
        cache_unwritable: bool,
    },
    /// The unit could not be made from what was had: a patch that does not apply, a
    /// directory without liblmdb's files. Nothing is built from it.
    Failed(String),
}

impl Resolution {
    /// For `Unavailable`: every provider tried with its error, in order, then the hint.
    pub fn why(&self) -> Option<String> {
        match self {
            Resolution::Found(_) => None,
            Resolution::Failed(error) => Some(error.clone()),
            Resolution::Unavailable { attempts, hint, .. } => {
                let tried: Vec<String> = attempts.iter().map(|a| format!("{}: {}", a.provider, a.error)).collect();
                Some(format!("tried {}; {hint}", tried.join("; ")))
            }
        }
    }

    /// For `Unavailable` when the fix is the cache rather than another source: the hint.
    pub fn cache_fix(&self) -> Option<String> {
        match self {
            Resolution::Unavailable { hint, cache_unwritable: true, .. } => Some(hint.clone()),
            _ => None,
        }
    }

    /// For `Unavailable`, in a few words: each distinct failure once, after the providers
    /// that met it ("archive git.openldap.org, archive github.com: unreachable").
    pub fn brief(&self) -> Option<String> {
        if let Resolution::Failed(error) = self {
            return Some(short_cause(error));
        }
        let Resolution::Unavailable { attempts, .. } = self else { return None };
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        for a in attempts {
            let cause = short_cause(&a.error);
            match groups.iter_mut().find(|(c, _)| *c == cause) {
                Some((_, providers)) => providers.push(&a.provider),
                None => groups.push((cause, vec![&a.provider])),
            }
        }
        Some(groups.iter().map(|(c, p)| format!("{}: {c}", p.join(", "))).collect::<Vec<_>>().join("; "))
    }
}

/// An error's first line without its parenthesised detail, cut between words to 60
/// characters: what a summary of several failures needs.
fn short_cause(error: &str) -> String {
    const MAX: usize = 60;
    let line = error.lines().next().unwrap_or_default();
    let line = line.split(" (").next().unwrap_or(line).trim();
    if line.chars().count() <= MAX {
        return line.to_string();
    }
    let cut: String = line.chars().take(MAX).collect();
    format!("{}…", cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head))
}

/// Settings for the provider chain.
#[derive(Debug, Clone)]
pub struct Resolver {
    pub cache: SourceCache,
    pub git: Option<PathBuf>,
    /// Skip the providers that need a network: upstream archives and registries.
    pub offline: bool,
    /// Upstream archive URL templates, `{ref}` replaced by the tag or commit.
    pub archive_urls: Vec<String>,
}

impl Resolver {
    /// The chain configured from the environment: `LMDB_REGRESS_CACHE`, `LMDB_GIT`,
    /// `LMDB_REGRESS_OFFLINE`, `LMDB_REGRESS_ARCHIVE_URLS` (comma-separated).
    /// A repository named by `--git` or LMDB_GIT must be one, whether or not it is needed.
    pub fn from_env(git: Option<PathBuf>) -> Result<Resolver> {
        let (git, named) = match git {
            Some(g) => (Some(g), "--git"),
            None => (crate::envvars::path("LMDB_GIT"), "LMDB_GIT"),
        };
        if let Some(repo) = &git {
            if let Err(e) = git::GitRepo::open(repo) {
                bail!(
                    "{named} {} is not a git repository (name a clone, or a bare repository, of OpenLDAP's or \
                     LMDB's): {}",
                    repo.display(),
                    e.root_cause()
                );
            }
        }
        let offline = crate::envvars::flag("LMDB_REGRESS_OFFLINE")?;
        let archive_urls = crate::envvars::archive_urls()?
            .unwrap_or_else(|| archive::DEFAULT_URLS.iter().map(|s| s.to_string()).collect());
        Ok(Resolver { cache: SourceCache::from_env()?, git, offline, archive_urls })
    }

    pub fn resolve(&self, want: &Want) -> Resolution {
        match want {
            Want::Patched { base, patch } => return self.resolve_patched(want, base, patch),
            Want::Local(dir) => return self.resolve_local(want, dir),
            Want::Tag(_) | Want::Commit(_) => {}
        }
        let mut attempts = Vec::new();
        fn note(attempts: &mut Vec<Attempt>, provider: &str, e: anyhow::Error) {
            attempts.push(Attempt { provider: provider.to_string(), error: format!("{e:#}") })
        }

        // An equivalent copy in the cache is kept in reserve while git may give identical files.
        let mut equivalent_cached = None;
        match self.cache.lookup(want) {
            Ok(Some(set)) if set.matches == Match::Equivalent && self.git.is_some() => equivalent_cached = Some(set),
            Ok(Some(set)) => return Resolution::Found(set),
            Ok(None) => {}
            Err(e) => note(&mut attempts, "cache", e),
        }
        // Every provider delivers into the cache: one that cannot be written is the reason.
        if let Err(e) = self.cache.scratch_dir() {
            note(&mut attempts, "cache", e);
            let hint = format!(
                "the cache {} cannot be written: make it writable, or set LMDB_REGRESS_CACHE to a folder you can write",
                self.cache.root.display()
            );
            return Resolution::Unavailable { attempts, hint, cache_unwritable: true };
        }
        if let Some(repo) = &self.git {
            match self.deliver(want, "git", |dir| git::GitRepo::open(repo)?.export(want, dir)) {
                Ok(set) => return Resolution::Found(set),
                Err(e) => note(&mut attempts, "git", e),
            }
        }
        if let Some(set) = equivalent_cached {
            return Resolution::Found(set);
        }
        let label = want.label();
        if let Want::Commit(_) = want {
            if self.git.is_none() {
                attempts.push(Attempt {
                    provider: "git".into(),
                    error: "a commit that is not a pinned tag can only come from a git repository".into(),
                });
            }
        }
        if self.offline {
            attempts.push(Attempt {
                provider: "archive, registries".into(),
                error: "skipped: LMDB_REGRESS_OFFLINE is set".into(),
            });
        } else {
            if matches!(want, Want::Tag(_)) {
                for url in &self.archive_urls {
                    let url = url.replace("{ref}", &label);
                    match self.deliver(want, "archive", |dir| archive::fetch(&url, dir)) {
                        Ok(set) => return Resolution::Found(set),
                        Err(e) => note(&mut attempts, &format!("archive {}", host_of(&url)), e),
                    }
                }
            }
            if let Want::Tag(tag) = want {
                for copy in &tag.copies {
                    match self.deliver(want, copy.registry_origin(), |dir| registry::fetch(copy, dir)) {
                        Ok(set) => return Resolution::Found(set),
                        Err(e) => note(&mut attempts, &copy.describe(), e),
                    }
                }
                if tag.copies.is_empty() {
                    attempts.push(Attempt {
                        provider: "registries".into(),
                        error: "no registry package carries this tag".into(),
                    });
                }
            }
        }
        let hint = match want {
            Want::Tag(t) => format!(
                "supply it with --git PATH (or LMDB_GIT) pointing at a clone of OpenLDAP's repository \
                 (git.openldap.org/openldap/openldap, tag {}) or of LMDB's, or let the upstream archive be reached",
                t.name
            ),
            Want::Commit(_) => "pass --git PATH (or LMDB_GIT) to a repository that has this commit".into(),
            Want::Patched { .. } | Want::Local(_) => unreachable!("resolved above"),
        };
        Resolution::Unavailable { attempts, hint, cache_unwritable: false }
    }

    /// Runs one provider into a scratch directory, verifies what it left there, and
    /// moves the verified files into the cache.
    fn deliver(
        &self,
        want: &Want,
        origin: &str,
        provide: impl FnOnce(&Path) -> Result<Delivered>,
    ) -> Result<SourceSet> {
        let scratch = self.cache.scratch_dir()?;
        let delivered = provide(scratch.path())?;
        let files = hash_dir(&delivered.dir)?;
        let matches = verify(want, &files, &format!("{origin} ({})", delivered.detail))?;
        let commit = match want {
            Want::Tag(t) => Some(t.commit.clone()),
            _ => delivered.commit.clone(),
        };
        let set = SourceSet {
            label: want.label(),
            commit,
            dir: delivered.dir.clone(),
            files,
            provenance: Provenance { origin: origin.to_string(), detail: delivered.detail, cached: false },
            matches,
            patch: None,
        };
        self.cache.store(want, set)
    }

    /// `base`'s verified sources with `patch` applied, in a fresh folder, stored in the
    /// cache by the patched content: a hunk that does not apply makes it unavailable, with
    /// the hunk named.
    fn resolve_patched(&self, want: &Want, base: &Want, patch: &PatchFile) -> Resolution {
        let base_set = match self.resolve(base) {
            Resolution::Found(set) => set,
            unavailable => return unavailable,
        };
        self.made(|| {
            let mut files = read_verified(&base_set)?;
            let (patched, hunks) = patch::apply(patch, &files, &base_set.label)?;
            files.extend(patched);
            let scratch = self.cache.scratch_dir()?;
            for (name, bytes) in &files {
                std::fs::write(scratch.path().join(name), bytes)?;
            }
            let record = PatchRecord {
                file: patch.name.clone(),
                sha256: patch.sha256.clone(),
                base: base_set.label.clone(),
                base_commit: base_set.commit.clone(),
                base_files: base_set.files.clone(),
                base_matches: base_set.matches,
                base_provenance: Provenance { cached: false, ..base_set.provenance.clone() },
                hunks,
            };
            // The patch's whole hash and the base's own provenance are in the record.
            let detail = format!("{} (SHA-256 {}…) on {}", patch.name, &patch.sha256[..12], base_set.label);
            let provenance = Provenance { origin: "patch".into(), detail, cached: false };
            let set = self.stored(want, scratch.path(), base_set.commit.clone(), provenance)?;
            Ok(SourceSet { patch: Some(record), ..set })
        })
    }

    /// The library sources `dir` holds now, copied into the cache by their content.
    fn resolve_local(&self, want: &Want, dir: &Path) -> Resolution {
        self.made(|| {
            let absolute = std::fs::canonicalize(dir).with_context(|| format!("--source {}", dir.display()))?;
            if let Some(missing) = SOURCE_FILES.iter().find(|f| !absolute.join(f).is_file()) {
                bail!(
                    "--source {} holds no {missing}: a unit's directory holds {} (and 1.0's module.c)",
                    dir.display(),
                    SOURCE_FILES.join(", ")
                );
            }
            // The label names the directory as given; its absolute path stays off reports.
            let provenance = Provenance { origin: "local".into(), detail: "directory, as found".into(), cached: false };
            self.stored(want, &absolute, None, provenance)
        })
    }

    /// The sources in `dir`, hashed and stored in the cache as `want`'s, from `provenance`.
    fn stored(&self, want: &Want, dir: &Path, commit: Option<String>, provenance: Provenance) -> Result<SourceSet> {
        let files = hash_dir(dir)?;
        let matches = verify(want, &files, &provenance.to_string())?;
        let set = SourceSet {
            label: want.label(),
            commit,
            dir: dir.to_path_buf(),
            files,
            provenance: provenance.clone(),
            matches,
            patch: None,
        };
        // The cache keeps the first provenance of identical files; this unit's is its own.
        Ok(SourceSet { provenance, matches, ..self.cache.store(want, set)? })
    }

    /// A unit made here rather than fetched, or why it could not be.
    fn made(&self, make: impl FnOnce() -> Result<SourceSet>) -> Resolution {
        match make() {
            Ok(set) => Resolution::Found(set),
            Err(e) => Resolution::Failed(format!("{e:#}")),
        }
    }
}

impl crate::manifest::RegistryCopy {
    fn registry_origin(&self) -> &'static str {
        match self.registry {
            crate::manifest::Registry::Crate => "crate",
            crate::manifest::Registry::Pypi => "pypi",
        }
    }
}

/// What a provider leaves: a directory holding the library sources, and a description.
pub struct Delivered {
    pub dir: PathBuf,
    pub detail: String,
    pub commit: Option<String>,
}

/// Finds the directory holding the four files every liblmdb has under `root` (archive layouts vary).
pub fn find_source_dir(root: &Path) -> Result<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        if SOURCE_FILES.iter().all(|f| d.join(f).is_file()) {
            found.push(d.clone());
        }
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                stack.push(e.path());
            }
        }
    }
    // The shallowest match: a tarball of all OpenLDAP could hold test copies deeper down.
    found.sort_by_key(|d| d.components().count());
    found
        .into_iter()
        .next()
        .with_context(|| format!("no directory with {} in what was downloaded", SOURCE_FILES.join(", ")))
}

fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    rest.split('/').next().unwrap_or(rest)
}
