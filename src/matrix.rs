//! The build matrix: obtain and compile many tags or commits, in parallel, and say for
//! each one what happened. Shared with build.rs.

use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::compile::{self, BuildKind, BuildRecord, Toolchain};
use crate::manifest::{FileHashes, Match};
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
pub struct TagStatus {
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailedBuild {
    pub kind: BuildKind,
    pub reason: String,
}

impl TagStatus {
    pub fn build(&self, kind: BuildKind) -> Option<&BuildRecord> {
        self.builds.iter().find(|b| b.kind == kind)
    }
}

pub struct MatrixOptions {
    pub resolver: Resolver,
    pub toolchain: Toolchain,
    pub kinds: Vec<BuildKind>,
    /// harness/workloads.c, needed for `BuildKind::CHarness`.
    pub harness_c: Option<PathBuf>,
    pub jobs: usize,
}

/// What the matrix reports as it goes, for a progress bar or cargo warnings.
pub enum Event<'a> {
    Started(&'a str),
    Finished(&'a TagStatus),
}

pub fn build_all(targets: &[Want], opts: &MatrixOptions, on_event: &(dyn Fn(Event) + Sync)) -> Vec<TagStatus> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<TagStatus>>> = Mutex::new(vec![None; targets.len()]);
    let jobs = opts.jobs.max(1).min(targets.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(want) = targets.get(i) else { break };
                let label = want.label();
                on_event(Event::Started(&label));
                let status = build_one(want, opts);
                on_event(Event::Finished(&status));
                results.lock().unwrap()[i] = Some(status);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|r| r.expect("every target ran")).collect()
}

pub fn build_one(want: &Want, opts: &MatrixOptions) -> TagStatus {
    let pinned = match want {
        Want::Tag(t) => t.files.clone(),
        Want::Commit(_) => FileHashes::new(),
    };
    let mut status = TagStatus {
        tag: want.label(),
        commit: match want {
            Want::Tag(t) => Some(t.commit.clone()),
            Want::Commit(_) => None,
        },
        status: Status::Unavailable,
        library: None,
        provenance: None,
        matches: None,
        files: pinned,
        reason: None,
        builds: Vec::new(),
        failed_builds: Vec::new(),
    };
    let src = match opts.resolver.resolve(want) {
        Resolution::Found(src) => src,
        unavailable => {
            status.reason = unavailable.why();
            return status;
        }
    };
    status.commit = src.commit.clone().or(status.commit);
    status.provenance = Some(src.provenance.to_string());
    status.matches = Some(src.matches);
    status.files = src.files.clone();
    let expect = match want {
        Want::Tag(t) => t.version(),
        Want::Commit(_) => None,
    };
    for &kind in &opts.kinds {
        let harness = opts.harness_c.as_deref();
        match compile::build(&src, &opts.toolchain, kind, harness, &opts.resolver.cache.builds_dir(), expect) {
            Ok(rec) => {
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
    status
}
