//! The content-addressed source cache: `sources/<key>/` holds the verified library sources and
//! `source.json` (where they first came from); `refs/<names>/<commit>` maps commits to keys.
//! `<names>` lists the file names a commit's export takes (`lmdb.h+mdb.c+…`): a commit stored
//! when fewer names counted as library sources may lack one it has, so such refs are not used.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{content_key, hash_dir, verify, SourceSet, Want};
use crate::files::{write_atomic, Existing};
use crate::manifest::{OPTIONAL_FILES, SOURCE_FILES};

#[derive(Debug, Clone)]
pub struct SourceCache {
    pub root: PathBuf,
}

impl SourceCache {
    /// `LMDB_REGRESS_CACHE`, else the user's cache directory.
    pub fn from_env() -> Result<SourceCache> {
        let root = match crate::envvars::dir("LMDB_REGRESS_CACHE")? {
            Some(p) => p,
            None => dirs::cache_dir()
                .context("no user cache directory is known here; set LMDB_REGRESS_CACHE")?
                .join("lmdb-regress"),
        };
        Ok(SourceCache { root })
    }

    pub fn at(root: &Path) -> SourceCache {
        SourceCache { root: root.to_path_buf() }
    }

    pub fn builds_dir(&self) -> PathBuf {
        self.root.join("builds")
    }

    /// Where random layouts are linked and kept (`crate::layout`).
    pub fn layouts_dir(&self) -> PathBuf {
        self.root.join("layouts")
    }

    /// That a file can be made in the cache and in each of its folders that exists: said
    /// before anything is fetched or built, rather than by every build and layout after.
    pub fn check_writable(&self) -> Result<()> {
        let fix = "make it writable, or set LMDB_REGRESS_CACHE to a folder you can write";
        std::fs::create_dir_all(&self.root)
            .with_context(|| format!("the cache {} cannot be written: {fix}", self.root.display()))?;
        let (root, refs) = (&self.root, self.refs_dir());
        let folders = [root.clone(), self.sources_dir(), self.builds_dir(), self.layouts_dir(), root.join("tmp")];
        for dir in folders.into_iter().chain([root.join("refs"), refs]) {
            if dir.is_dir() {
                tempfile::Builder::new().prefix(".write-check-").tempfile_in(&dir).with_context(|| {
                    format!("the cache {} cannot be written (in {}): {fix}", self.root.display(), dir.display())
                })?;
            }
        }
        Ok(())
    }

    fn refs_dir(&self) -> PathBuf {
        let names: Vec<&str> = SOURCE_FILES.iter().chain(OPTIONAL_FILES.iter()).copied().collect();
        self.root.join("refs").join(names.join("+"))
    }

    fn sources_dir(&self) -> PathBuf {
        self.root.join("sources")
    }

    pub fn scratch_dir(&self) -> Result<tempfile::TempDir> {
        let tmp = self.root.join("tmp");
        std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(tempfile::tempdir_in(&tmp)?)
    }

    /// A cached copy of `want`, re-verified (a cache on disk can be edited like anything else).
    pub fn lookup(&self, want: &Want) -> Result<Option<SourceSet>> {
        let keys: Vec<String> = match want {
            Want::Tag(t) => t.accepted_hashes().into_iter().map(|(h, _)| content_key(h)).collect(),
            Want::Commit(_) => match std::fs::read_to_string(self.refs_dir().join(want.rev())) {
                Ok(k) => vec![k.trim().to_string()],
                Err(_) => return Ok(None),
            },
            // Made from other sources each time (`Resolver::resolve`), then stored by content.
            Want::Patched { .. } | Want::Local(_) => return Ok(None),
        };
        for key in keys {
            let dir = self.sources_dir().join(&key);
            let record = dir.join("source.json");
            if !record.is_file() {
                continue;
            }
            let mut set: SourceSet = serde_json::from_slice(&std::fs::read(&record)?)
                .with_context(|| format!("corrupt cache record {}", record.display()))?;
            if set.provenance.is_made() {
                // Stored by a unit made here before such units were kept apart: not this tag's.
                continue;
            }
            let files = hash_dir(&dir)?;
            let matches = verify(want, &files, &format!("cache {}", dir.display()))?;
            if let Want::Commit(_) = want {
                if files != set.files {
                    anyhow::bail!("cache {}: files changed since they were stored", dir.display());
                }
            }
            set.label = want.label();
            set.dir = dir;
            set.files = files;
            set.matches = matches;
            set.provenance.cached = true;
            return Ok(Some(set));
        }
        Ok(None)
    }

    /// Copies verified files into the cache and returns the set as it now lives there.
    /// Units made here (a patch applied, a directory's files) are kept apart, under
    /// `sources/made/`, which no tag or commit is looked up in: a copy of a tag's own files
    /// made from a directory never stands for the tag, with the directory as its provenance.
    pub fn store(&self, want: &Want, mut set: SourceSet) -> Result<SourceSet> {
        let key = set.key();
        let sources = match want {
            Want::Patched { .. } | Want::Local(_) => self.sources_dir().join("made"),
            Want::Tag(_) | Want::Commit(_) => self.sources_dir(),
        };
        let dest = sources.join(&key);
        let writable = || format!("cannot write in {} (is the cache writable? LMDB_REGRESS_CACHE)", sources.display());
        std::fs::create_dir_all(&sources).with_context(writable)?;
        let staging = tempfile::tempdir_in(&sources).with_context(writable)?;
        for f in set.files.keys() {
            std::fs::copy(set.dir.join(f), staging.path().join(f))
                .with_context(|| format!("cannot copy {f} into the cache"))?;
        }
        // What is stored is what was hashed: a file changed in between (a directory being
        // edited) is said, not stored under the hashes of what it was.
        let copied = hash_dir(staging.path())?;
        if let Some((f, _)) = set.files.iter().find(|(f, h)| copied.get(*f) != Some(*h)) {
            anyhow::bail!(
                "{} changed while it was copied into the cache (it no longer has the SHA-256 it was read with): \
                 nothing is built from it; try again once it is no longer being written",
                set.dir.join(f).display()
            );
        }
        set.dir = dest.clone();
        let record = staging.path().join("source.json");
        write_atomic(&record, &serde_json::to_vec_pretty(&set)?, Existing::Refuse)?;
        // Content-addressed: if these files are stored already, the first record of where
        // they came from stands (a commit with a tag's files must not rename the tag's source).
        // An entry whose files no longer hash as its name says (edited on disk) is replaced.
        let staged = staging.keep();
        let made_here = || {
            let stored = std::fs::read(dest.join("source.json")).ok();
            stored.and_then(|b| serde_json::from_slice::<SourceSet>(&b).ok()).is_some_and(|s| s.provenance.is_made())
        };
        let lent = matches!(want, Want::Tag(_) | Want::Commit(_)) && made_here();
        let intact = !lent && dest.join("source.json").is_file() && hash_dir(&dest).is_ok_and(|h| h == set.files);
        if !intact && dest.exists() {
            std::fs::remove_dir_all(&dest).with_context(|| format!("cannot replace {}", dest.display()))?;
        }
        if intact || std::fs::rename(&staged, &dest).is_err() {
            let _ = std::fs::remove_dir_all(&staged);
            let stored: SourceSet = serde_json::from_slice(&std::fs::read(dest.join("source.json"))?)?;
            set.provenance = stored.provenance;
        }
        if let Want::Commit(_) = want {
            let refs = self.refs_dir();
            for name in std::iter::once(want.rev()).chain(set.commit.as_deref()) {
                write_atomic(&refs.join(name), key.as_bytes(), Existing::Replace)?;
            }
        }
        Ok(set)
    }
}
