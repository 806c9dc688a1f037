//! The pinned tag list (`lmdb-tags`): what each release tag's source files hash to,
//! and which registry packages carry copies of them.
//!
//! Shared with build.rs: this module only refers to `crate::manifest`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The four files every liblmdb has, in the order reports list them.
pub const SOURCE_FILES: [&str; 4] = ["lmdb.h", "mdb.c", "midl.c", "midl.h"];
/// Library sources a later line adds: 1.0's `module.c` (loadable modules, dlopen), and the
/// `module.h` it included until b3fc03bae6 folded it away (the 1.0 line of 2024 has it; no
/// tag does). A tag pins them when it has them (its `files`); a commit has them or not.
pub const OPTIONAL_FILES: [&str; 2] = ["module.c", "module.h"];

/// Whether a file name is one of liblmdb's library sources, required or optional.
pub fn is_library_file(name: &str) -> bool {
    SOURCE_FILES.contains(&name) || OPTIONAL_FILES.contains(&name)
}

/// File name → lowercase hex SHA-256.
pub type FileHashes = BTreeMap<String, String>;

/// The manifest compiled into the binary; `LMDB_REGRESS_TAGS` (a file) replaces it.
pub const BUILTIN: &str = include_str!("../lmdb-tags");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The range used when a command is given no `--tags`.
    pub default: String,
    #[serde(rename = "tag")]
    pub tags: Vec<TagEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagEntry {
    pub name: String,
    pub commit: String,
    pub files: FileHashes,
    #[serde(default, rename = "copy")]
    pub copies: Vec<RegistryCopy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Registry {
    Crate,
    Pypi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Match {
    /// Every file hashes as the tag's.
    Identical,
    /// A copy pinned in lmdb-tags whose differences do not matter on Linux.
    Equivalent,
    /// A commit that is not a pinned tag: its hashes are recorded, not checked.
    Unpinned,
    /// A tag's or commit's verified sources with a patch applied: the build record keeps
    /// the patch's SHA-256, the base's hashes and the patched files'.
    Patched,
    /// A local directory's sources, hashed as found.
    Local,
}

impl fmt::Display for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Match::Identical => "identical",
            Match::Equivalent => "equivalent",
            Match::Unpinned => "unpinned",
            Match::Patched => "patched",
            Match::Local => "local",
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryCopy {
    pub registry: Registry,
    pub package: String,
    pub version: String,
    /// Where the library sources sit inside the unpacked package.
    pub subdir: String,
    #[serde(rename = "match")]
    pub matches: Match,
    /// Own pinned hashes; required for, and only for, equivalent copies.
    pub files: Option<FileHashes>,
    pub note: Option<String>,
}

impl RegistryCopy {
    pub fn describe(&self) -> String {
        match self.registry {
            Registry::Crate => format!("crate {} {}", self.package, self.version),
            Registry::Pypi => format!("PyPI sdist {} {}", self.package, self.version),
        }
    }
}

impl TagEntry {
    /// (major, minor, patch) from `LMDB_0.9.17`.
    pub fn version(&self) -> Option<(i32, i32, i32)> {
        parse_version(&self.name)
    }

    /// Every set of hashes this tag may be verified against, with its match.
    pub fn accepted_hashes(&self) -> Vec<(&FileHashes, Match)> {
        let mut out = vec![(&self.files, Match::Identical)];
        for copy in &self.copies {
            if let (Some(files), Match::Equivalent) = (&copy.files, copy.matches) {
                out.push((files, Match::Equivalent));
            }
        }
        out
    }
}

/// (major, minor, patch) from what `mdb_version()` reports: `LMDB 0.9.33: (May 21, 2024)`.
pub fn reported_version(text: &str) -> Option<(i32, i32, i32)> {
    parse_version(&format!("LMDB_{}", text.strip_prefix("LMDB ")?.split(':').next()?))
}

pub fn parse_version(tag: &str) -> Option<(i32, i32, i32)> {
    let v = tag.strip_prefix("LMDB_")?;
    let mut it = v.split('.').map(|p| p.parse::<i32>().ok());
    let out = (it.next()??, it.next()??, it.next()??);
    it.next().is_none().then_some(out)
}

/// The label of a build by a toolchain other than the default: `LMDB_0.9.33 (clang -O2)`.
/// The default toolchain's builds (None) keep the plain tag.
pub fn toolchain_label(tag: &str, toolchain: Option<&str>) -> String {
    match toolchain {
        Some(name) => format!("{tag} ({name})"),
        None => tag.to_string(),
    }
}

impl Manifest {
    pub fn builtin() -> Manifest {
        Manifest::parse(BUILTIN).expect("the built-in lmdb-tags is valid (checked by tests)")
    }

    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read tag list {}", path.display()))?;
        Manifest::parse(&text).with_context(|| format!("in tag list {}", path.display()))
    }

    /// `LMDB_REGRESS_TAGS` names a tag list to use instead of the built-in one.
    pub fn from_env_or_builtin() -> Result<Manifest> {
        match crate::envvars::file("LMDB_REGRESS_TAGS")? {
            Some(p) => Manifest::load(&p).context("LMDB_REGRESS_TAGS"),
            None => Ok(Manifest::builtin()),
        }
    }

    pub fn parse(text: &str) -> Result<Manifest> {
        let mut m: Manifest = toml::from_str(text)?;
        m.validate()?;
        // Version order across series (0.9.36 before 1.0.0): ranges and "newest" follow it.
        m.tags.sort_by_key(|t| t.version());
        Ok(m)
    }

    fn validate(&self) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for t in &self.tags {
            if !seen.insert(t.name.as_str()) {
                bail!("tag {} is listed twice", t.name);
            }
            if t.version().is_none() {
                bail!("tag name {:?} is not of the form LMDB_X.Y.Z", t.name);
            }
            if t.commit.len() != 40 || !t.commit.chars().all(|c| c.is_ascii_hexdigit()) {
                bail!("tag {}: commit {:?} is not a 40-digit hex id", t.name, t.commit);
            }
            check_hashes(&t.name, &t.files)?;
            for c in &t.copies {
                match (c.matches, &c.files) {
                    (Match::Equivalent, Some(f)) => check_hashes(&format!("{} ({})", t.name, c.describe()), f)?,
                    (Match::Equivalent, None) => {
                        bail!("tag {}: equivalent copy {} needs its own `files`", t.name, c.describe())
                    }
                    (Match::Identical, Some(_)) => {
                        bail!("tag {}: identical copy {} must not pin other files", t.name, c.describe())
                    }
                    (Match::Identical, None) => {}
                    (m @ (Match::Unpinned | Match::Patched | Match::Local), _) => {
                        bail!("tag {}: a copy cannot be {m}", t.name)
                    }
                }
            }
        }
        Ok(())
    }

    /// Finds a tag by `LMDB_0.9.17` or `0.9.17`.
    pub fn find(&self, name: &str) -> Option<&TagEntry> {
        let full = normalize_tag(name);
        self.tags.iter().find(|t| t.name == full)
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        let full = normalize_tag(name);
        self.tags.iter().position(|t| t.name == full)
    }

    pub fn known_names(&self) -> String {
        self.tags.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
    }
}

pub fn normalize_tag(name: &str) -> String {
    if name.starts_with("LMDB_") {
        name.to_string()
    } else {
        format!("LMDB_{name}")
    }
}

fn check_hashes(what: &str, files: &FileHashes) -> Result<()> {
    for f in SOURCE_FILES {
        files.get(f).with_context(|| format!("{what}: no hash for {f}"))?;
    }
    for (f, h) in files {
        if !is_library_file(f) {
            bail!(
                "{what}: {f} is not a library source: files names {} and, where the tag has them, {}",
                SOURCE_FILES.join(", "),
                OPTIONAL_FILES.join(", ")
            );
        }
        if h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) {
            bail!("{what}: hash of {f} is not 64 lowercase hex digits");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_tag_list_is_complete() {
        let m = Manifest::builtin();
        assert_eq!(m.tags.len(), 22);
        // Each tag lists its own files: 1.0 adds module.c.
        let five: Vec<&str> =
            m.tags.iter().filter(|t| t.files.contains_key("module.c")).map(|t| t.name.as_str()).collect();
        assert_eq!(five, ["LMDB_1.0.0", "LMDB_1.0.1"]);
        assert!(m.tags.iter().all(|t| SOURCE_FILES.iter().all(|f| t.files.contains_key(*f))));
        let reachable: Vec<&str> = m.tags.iter().filter(|t| !t.copies.is_empty()).map(|t| t.name.as_str()).collect();
        assert_eq!(
            reachable,
            [
                "LMDB_0.9.17",
                "LMDB_0.9.18",
                "LMDB_0.9.21",
                "LMDB_0.9.22",
                "LMDB_0.9.23",
                "LMDB_0.9.24",
                "LMDB_0.9.26",
                "LMDB_0.9.27",
                "LMDB_0.9.29",
                "LMDB_0.9.31",
                "LMDB_0.9.33",
                "LMDB_0.9.35",
                "LMDB_0.9.36"
            ]
        );
        let eq: Vec<&str> = m
            .tags
            .iter()
            .filter(|t| t.copies.iter().any(|c| c.matches == Match::Equivalent))
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(eq, ["LMDB_0.9.17", "LMDB_0.9.29"]);
    }

    #[test]
    fn builds_by_other_toolchains_carry_the_name() {
        assert_eq!(toolchain_label("LMDB_0.9.33", Some("clang -O2")), "LMDB_0.9.33 (clang -O2)");
        assert_eq!(toolchain_label("LMDB_0.9.33", None), "LMDB_0.9.33");
    }

    #[test]
    fn malformed_lists_are_refused() {
        let good = "default = \"LMDB_0.9.17\"\n[[tag]]\nname = \"LMDB_0.9.17\"\ncommit = \"2011eb37c1a3d390df2336cb2c55843771723a0c\"\n\
                    files = { \"lmdb.h\" = \"{h}\", \"mdb.c\" = \"{h}\", \"midl.c\" = \"{h}\", \"midl.h\" = \"{h}\" }\n";
        let h = "a".repeat(64);
        assert!(Manifest::parse(&good.replace("{h}", &h)).is_ok());
        assert!(Manifest::parse(&good.replace("{h}", "abc")).unwrap_err().to_string().contains("64 lowercase hex"));
        assert!(
            Manifest::parse(&good.replace("{h}", &h).replace("LMDB_0.9.17\"\ncommit", "lmdb-17\"\ncommit")).is_err()
        );
        let five = good.replace("{h}", &h).replace(" }\n", ", \"module.c\" = \"{h}\" }\n").replace("{h}", &h);
        assert_eq!(Manifest::parse(&five).unwrap().tags[0].files.len(), 5);
        let stray = five.replace("module.c", "mtest.c");
        let e = format!("{:#}", Manifest::parse(&stray).unwrap_err());
        assert!(e.contains("mtest.c is not a library source"), "{e}");
        let four = good.replace(", \"midl.h\" = \"{h}\"", "").replace("{h}", &h);
        assert!(Manifest::parse(&four).unwrap_err().to_string().contains("no hash for midl.h"));
        let twice = format!("{0}{1}", good.replace("{h}", &h), good.replace("{h}", &h).split_once('\n').unwrap().1);
        assert!(Manifest::parse(&twice).unwrap_err().to_string().contains("twice"));
    }
}
