//! A local git repository of LMDB or OpenLDAP, clone or bare: any tag, any commit.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{Delivered, Want};
use crate::manifest::{OPTIONAL_FILES, SOURCE_FILES};

/// Where liblmdb lives in each repository layout we know: OpenLDAP's and LMDB's
/// both keep it in `libraries/liblmdb`; a bare liblmdb repository at its root.
const LAYOUTS: [&str; 2] = ["libraries/liblmdb/", ""];

#[derive(Debug, Clone)]
pub struct GitRepo {
    pub path: PathBuf,
}

/// One commit as `git log` tells it.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: String,
    pub subject: String,
    pub author_date: String,
}

impl GitRepo {
    pub fn open(path: &Path) -> Result<GitRepo> {
        let repo = GitRepo { path: path.to_path_buf() };
        repo.git(&["rev-parse", "--git-dir"]).with_context(|| format!("{} is not a git repository", path.display()))?;
        Ok(repo)
    }

    pub fn git(&self, args: &[&str]) -> Result<String> {
        let out = crate::children::output(Command::new("git").arg("-C").arg(&self.path).args(args))
            .context("cannot run git (is it installed?)")?;
        if !out.status.success() {
            bail!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    }

    fn git_bytes(&self, args: &[&str]) -> Result<Vec<u8>> {
        let out = crate::children::output(Command::new("git").arg("-C").arg(&self.path).args(args))?;
        if !out.status.success() {
            bail!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(out.stdout)
    }

    /// The full commit id a tag, branch or (abbreviated) commit names.
    pub fn resolve(&self, rev: &str) -> Result<String> {
        self.git(&["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
            .map_err(|_| anyhow::anyhow!("{} has no commit or tag {rev}", self.path.display()))
    }

    /// The path prefix of liblmdb at `commit`.
    pub fn layout(&self, commit: &str) -> Result<&'static str> {
        for prefix in LAYOUTS {
            if self.git(&["cat-file", "-e", &format!("{commit}:{prefix}mdb.c")]).is_ok() {
                return Ok(prefix);
            }
        }
        bail!("commit {commit} has no libraries/liblmdb/mdb.c nor mdb.c")
    }

    pub fn info(&self, commit: &str) -> Result<CommitInfo> {
        let out = self.git(&["log", "-1", "--format=%H%x00%s%x00%aI", commit])?;
        let mut it = out.split('\0');
        Ok(CommitInfo {
            id: it.next().unwrap_or_default().to_string(),
            subject: it.next().unwrap_or_default().to_string(),
            author_date: it.next().unwrap_or_default().to_string(),
        })
    }

    /// Commits after `good` up to and including `bad` that touch liblmdb, oldest first,
    /// following first parents (the release branch's own history).
    pub fn commits_between(&self, good: &str, bad: &str) -> Result<Vec<String>> {
        let prefix = self.layout(bad)?;
        let mut args = vec!["rev-list", "--first-parent", "--reverse"];
        let range = format!("{good}..{bad}");
        args.push(&range);
        if !prefix.is_empty() {
            args.push("--");
            args.push(prefix.trim_end_matches('/'));
        }
        Ok(self.git(&args)?.lines().map(str::to_string).collect())
    }

    /// Whether commit `a` is an ancestor of commit `b` (or is `b`).
    pub fn is_ancestor(&self, a: &str, b: &str) -> Result<bool> {
        let args = ["merge-base", "--is-ancestor", a, b];
        let out = crate::children::output(Command::new("git").arg("-C").arg(&self.path).args(args))
            .context("cannot run git (is it installed?)")?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => bail!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()),
        }
    }

    /// Commits after `from` up to and including `to` on `to`'s first-parent line that touch
    /// liblmdb's library sources (as `to` lays them out), oldest first. `from` must be an
    /// ancestor of `to`: otherwise `from..to` would quietly be every commit of `to`'s line
    /// since the two parted, whatever `from` is.
    pub fn commits_touching_library(&self, from: &str, to: &str) -> Result<Vec<String>> {
        if !self.is_ancestor(from, to)? {
            let short = |c: &str| c[..c.len().min(10)].to_string();
            let (f, t) = (short(from), short(to));
            if self.is_ancestor(to, from)? {
                bail!("the range {f}..{t} runs backwards: {t} is an ancestor of {f}; give the older commit first");
            }
            let base = short(&self.git(&["merge-base", from, to])?);
            bail!(
                "{f} is not an ancestor of {t}: the two lines parted at {base}, and {f}..{t} would measure every \
                 commit of {t}'s line since then, not a range from {f}; give --range {base}..{t} for that, or a \
                 start on {t}'s line"
            );
        }
        let prefix = self.layout(to)?;
        let range = format!("{from}..{to}");
        let files: Vec<String> =
            SOURCE_FILES.iter().chain(OPTIONAL_FILES.iter()).map(|f| format!("{prefix}{f}")).collect();
        let mut args = vec!["rev-list", "--first-parent", "--reverse", range.as_str(), "--"];
        args.extend(files.iter().map(String::as_str));
        Ok(self.git(&args)?.lines().map(str::to_string).collect())
    }

    /// The files of `names` that liblmdb's folder holds at `commit`, with their bytes, in
    /// the order given: test programs, which are no library source and so no part of any
    /// pinned set (the commit vouches for them).
    pub fn library_folder_files(&self, commit: &str, names: &[&str]) -> Result<Vec<(String, Vec<u8>)>> {
        let prefix = self.layout(commit)?;
        let mut out = Vec::new();
        for name in names {
            let object = format!("{commit}:{prefix}{name}");
            if self.git(&["cat-file", "-e", &object]).is_ok() {
                out.push((name.to_string(), self.git_bytes(&["show", &object])?));
            }
        }
        Ok(out)
    }

    /// Writes the library sources of `want` into `dir`: the four every liblmdb has, and
    /// those of [`OPTIONAL_FILES`] the commit has.
    pub fn export(&self, want: &Want, dir: &Path) -> Result<Delivered> {
        let commit = match want {
            // The tag by name first; a repository without tags may still have the commit.
            Want::Tag(t) => self.resolve(&t.name).or_else(|_| self.resolve(&t.commit))?,
            Want::Commit(_) => self.resolve(want.rev())?,
            Want::Patched { .. } | Want::Local(_) => {
                bail!("{} is not exported from git: it is made from its base", want.label())
            }
        };
        let prefix = self.layout(&commit)?;
        let has = |f: &&&str| self.git(&["cat-file", "-e", &format!("{commit}:{prefix}{f}")]).is_ok();
        for f in SOURCE_FILES.iter().chain(OPTIONAL_FILES.iter().filter(has)) {
            let bytes = self.git_bytes(&["show", &format!("{commit}:{prefix}{f}")])?;
            std::fs::write(dir.join(f), bytes)?;
        }
        Ok(Delivered {
            dir: dir.to_path_buf(),
            // The commit alone: a local path says nothing to a report's reader.
            detail: format!("commit {commit}"),
            commit: Some(commit),
        })
    }
}
