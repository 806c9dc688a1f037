//! The build matrix: obtain and compile many tags or commits, each by one or more
//! toolchains, in parallel, and say for each (target, toolchain) what happened. Shared
//! with build.rs.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::compile::{self, BuildKind, BuildRecord, Toolchain};
use crate::manifest::{toolchain_label, FileHashes, Match};
use crate::source::{Resolution, Resolver, Want};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Built,
    /// No provider could deliver verified sources.
    Unavailable,
    /// Sources were had, but compiling the shared library or its load check failed.
    Failed,
}

/// One row of `lmdb-regress tags`: field names are a script interface.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagBuild {
    /// The tag or commit, followed by the toolchain's name unless it is the default:
    /// `LMDB_0.9.33 (clang -O2)`.
    pub tag: String,
    pub commit: Option<String>,
    pub status: Status,
    /// Absolute path of the shared library, when built.
    pub library: Option<PathBuf>,
    pub provenance: Option<String>,
    #[serde(rename = "match")]
    pub matches: Option<Match>,
    pub files: FileHashes,
    pub reason: Option<String>,
    /// Every build of this target made in this pass (shared library, C harness).
    #[serde(default)]
    pub builds: Vec<BuildRecord>,
    /// Builds that failed although the shared library was built (the C harness): the tag
    /// stays `built`, and only what needs the failed build goes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_builds: Vec<FailedBuild>,
    /// Why it is unavailable, in a few words, for [`unavailable_summary`].
    #[serde(skip)]
    pub brief: Option<String>,
    /// When the cache cannot be written, that is the fix to name (not another source).
    #[serde(skip)]
    pub cache_fix: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailedBuild {
    pub kind: BuildKind,
    pub reason: String,
}

impl TagBuild {
    pub fn build(&self, kind: BuildKind) -> Option<&BuildRecord> {
        self.builds.iter().find(|b| b.kind == kind)
    }
}

/// One toolchain of the matrix. Its builds are labelled `TAG (name)`, those of the
/// default toolchain (gcc -O2, or `--cc`/`--cflags`: `name` None) with the plain tag.
#[derive(Debug, Clone)]
pub struct MatrixToolchain {
    pub name: Option<String>,
    pub toolchain: Toolchain,
}

impl MatrixToolchain {
    /// The one toolchain of a matrix without `--toolchain`: its labels are plain tags.
    pub fn only(toolchain: Toolchain) -> MatrixToolchain {
        MatrixToolchain { name: None, toolchain }
    }

    /// `--toolchain`'s list, each named unless it is the default; two that would carry
    /// the same label are refused.
    pub fn named(list: Vec<Toolchain>) -> Result<Vec<MatrixToolchain>> {
        let mut out: Vec<MatrixToolchain> = Vec::new();
        for toolchain in list {
            let name = toolchain.name();
            if out.iter().any(|t| t.toolchain.name() == name) {
                bail!("two toolchains are both named \"{name}\": their builds would carry the same label");
            }
            out.push(MatrixToolchain { name: (!toolchain.is_default()).then_some(name), toolchain });
        }
        Ok(out)
    }

    /// The label of `target`'s build by this toolchain.
    pub fn label(&self, target: &str) -> String {
        toolchain_label(target, self.name.as_deref())
    }
}

#[derive(Clone)]
pub struct MatrixOptions {
    pub resolver: Resolver,
    /// Every target is built by each, in this order.
    pub toolchains: Vec<MatrixToolchain>,
    pub kinds: Vec<BuildKind>,
    /// harness/workloads.c, needed for `BuildKind::CHarness`.
    pub harness_c: Option<PathBuf>,
    pub jobs: usize,
    /// Set (by Ctrl-C) to start no further build; those under way finish or fail whole.
    pub stop: Option<Arc<AtomicBool>>,
}

/// What the matrix reports as it goes, for a progress bar or cargo warnings.
pub enum BuildEvent<'a> {
    Started(&'a str),
    Finished(&'a TagBuild),
}

/// Every target by every toolchain: one row per (target, toolchain), target by target.
/// The work goes toolchain by toolchain, so that a target's sources are fetched once
/// before its other toolchains' builds find them in the cache.
pub fn build_all(targets: &[Want], opts: &MatrixOptions, on_event: &(dyn Fn(BuildEvent) + Sync)) -> Vec<TagBuild> {
    let (nt, nw) = (opts.toolchains.len(), targets.len());
    let units: Vec<(usize, &Want, &MatrixToolchain)> =
        (0..nt * nw).map(|i| (i / nw, i % nw)).map(|(t, w)| (w * nt + t, &targets[w], &opts.toolchains[t])).collect();
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<TagBuild>>> = Mutex::new(vec![None; units.len()]);
    let jobs = opts.jobs.max(1).min(units.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(&(row, want, toolchain)) = units.get(i) else { break };
                let label = toolchain.label(&want.label());
                on_event(BuildEvent::Started(&label));
                let status = match opts.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                    true => TagBuild { reason: Some("not built: interrupted".into()), ..unbuilt(want, toolchain) },
                    false => build_one(want, toolchain, opts),
                };
                on_event(BuildEvent::Finished(&status));
                results.lock().unwrap()[row] = Some(status);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|r| r.expect("every target ran")).collect()
}

/// What is known of `want` by `toolchain` before anything is fetched or built.
fn unbuilt(want: &Want, toolchain: &MatrixToolchain) -> TagBuild {
    let pinned = match want {
        Want::Tag(t) => t.files.clone(),
        _ => FileHashes::new(),
    };
    TagBuild {
        tag: toolchain.label(&want.label()),
        commit: want.tag().map(|t| t.commit.clone()),
        status: Status::Unavailable,
        library: None,
        provenance: None,
        matches: None,
        files: pinned,
        reason: None,
        builds: Vec::new(),
        failed_builds: Vec::new(),
        brief: None,
        cache_fix: None,
    }
}

/// `want` built by `toolchain` (one of `opts.toolchains`), labelled as that toolchain's.
pub fn build_one(want: &Want, toolchain: &MatrixToolchain, opts: &MatrixOptions) -> TagBuild {
    let mut status = unbuilt(want, toolchain);
    let label = status.tag.clone();
    let src = match opts.resolver.resolve(want) {
        Resolution::Found(src) => src,
        Resolution::Failed(error) => {
            status.status = Status::Failed;
            status.reason = Some(error);
            return status;
        }
        unavailable => {
            status.reason = unavailable.why();
            status.brief = unavailable.brief();
            status.cache_fix = unavailable.cache_fix();
            return status;
        }
    };
    status.commit = src.commit.clone().or(status.commit);
    status.provenance = Some(src.provenance.to_string());
    status.matches = Some(src.matches);
    status.files = src.files.clone();
    // A patch may change what lmdb.h declares; the build must still report that.
    let expect = match want {
        Want::Tag(t) => t.version(),
        _ => None,
    };
    let programs = crate::mtest::programs_at(opts.resolver.git.as_deref(), want, src.commit.as_deref());
    for &kind in &opts.kinds {
        let harness = opts.harness_c.as_deref();
        let builds_dir = opts.resolver.cache.builds_dir();
        match compile::build(&src, &toolchain.toolchain, kind, harness, &builds_dir, expect, &programs) {
            Ok(mut rec) => {
                rec.label = label.clone();
                if kind == BuildKind::SharedLibrary {
                    status.library = Some(rec.artifact.clone());
                }
                status.builds.push(rec);
            }
            // Without the shared library nothing of this tag can be measured.
            Err(e) if kind == BuildKind::SharedLibrary => {
                status.status = Status::Failed;
                status.reason = Some(format!("{e:#}"));
                return status;
            }
            Err(e) => status.failed_builds.push(FailedBuild { kind, reason: format!("{e:#}") }),
        }
    }
    status.status = Status::Built;
    if let Some(note) = version_note(want, &status.builds) {
        status.provenance = status.provenance.map(|p| format!("{p}; {note}"));
    }
    status
}

/// A patched unit whose library reports a version other than its base tag's (a patch
/// that changes lmdb.h's `MDB_VERSION_*`), said beside its sources: it is still measured
/// as a patch of its base, never as the version it reports.
fn version_note(want: &Want, builds: &[BuildRecord]) -> Option<String> {
    let Want::Patched { base, .. } = want else { return None };
    let expected = base.tag()?.version()?;
    let lib = builds.iter().find(|b| b.kind == BuildKind::SharedLibrary)?;
    let numbers = crate::manifest::reported_version(&lib.lmdb_version)?;
    (numbers != expected).then(|| {
        let (a, b, c) = expected;
        let reported = format!("{}.{}.{}", numbers.0, numbers.1, numbers.2);
        format!(
            "note: it reports version {reported}, not its base's {a}.{b}.{c} (the patch changes lmdb.h's \
             MDB_VERSION_*); it is measured as a patch of {}",
            base.label()
        )
    })
}

/// Every unavailable target in one short block, said once per command: which, why (each
/// distinct reason once) and the one option that supplies them. Empty when all were had.
pub fn unavailable_summary(rows: &[TagBuild]) -> Vec<String> {
    let missing: Vec<&TagBuild> = rows.iter().filter(|r| r.status == Status::Unavailable).collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let name = |r: &TagBuild| r.tag.strip_prefix("LMDB_").unwrap_or(&r.tag).to_string();
    let mut by_why: Vec<(String, Vec<String>)> = Vec::new();
    for r in &missing {
        let why = r.brief.clone().unwrap_or_else(|| "no source delivered them".into());
        match by_why.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(name(r)),
            None => by_why.push((why, vec![name(r)])),
        }
    }
    let names: Vec<String> = missing.iter().map(|r| name(r)).collect();
    let what = if rows.iter().all(|r| r.commit.is_some()) { "tags" } else { "tags and commits" };
    let mut out = vec![format!("{} of {} {what} unavailable here: {}", missing.len(), rows.len(), names.join(", "))];
    match by_why.as_slice() {
        [(why, _)] => out.push(format!("why: {why}")),
        groups => out.extend(groups.iter().map(|(why, names)| format!("why ({}): {why}", names.join(", ")))),
    }
    if let Some(fix) = missing.iter().find_map(|r| r.cache_fix.clone()) {
        out.push(format!("fix: {fix}"));
        return out;
    }
    out.push(if missing.iter().all(|r| r.commit.is_none()) {
        "fix: --git PATH (or LMDB_GIT) naming a repository that has these commits".into()
    } else {
        format!("fix: --git PATH (or LMDB_GIT) naming a clone of OpenLDAP's repository: git clone {OPENLDAP_GIT}")
    });
    out
}

/// Where OpenLDAP's repository, which holds every LMDB tag, is cloned from.
pub const OPENLDAP_GIT: &str = "https://git.openldap.org/openldap/openldap.git";
