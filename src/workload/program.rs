//! A program as a workload (`run --program FILE.c`): a C program of the user's, compiled
//! against each unit's lmdb.h and library and run whole, one process per sample. Here is
//! its name only, which is what a workload is; the runner compiles and times it
//! (`crate::runner` `program`).
//!
//! A workload is a small `Copy` value named by its text, so a program's name is interned:
//! one `&'static str` per distinct name for the life of the process (a run names a few).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Mutex;

use anyhow::{bail, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A program workload's name: its source file's stem (`append1000` for `append1000.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProgramName(&'static str);

fn names() -> &'static Mutex<BTreeSet<&'static str>> {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    &NAMES
}

impl ProgramName {
    /// The program named `name`, made known to this process (a run file's header, or a
    /// `--program` flag, names it).
    pub fn intern(name: &str) -> ProgramName {
        let mut set = names().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = set.get(name) {
            return ProgramName(known);
        }
        let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
        set.insert(leaked);
        ProgramName(leaked)
    }

    /// The program named `name` if this process knows one by that name (case-insensitive,
    /// as workloads are parsed).
    pub fn known(name: &str) -> Option<ProgramName> {
        let set = names().lock().unwrap_or_else(|e| e.into_inner());
        set.iter().find(|n| n.eq_ignore_ascii_case(name)).map(|n| ProgramName(n))
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The name a program's source file gives its workload: its stem, which must be a C
    /// identifier's letters (letters, digits, `_`, `-`), so that it reads as one word in
    /// every report and in `--workloads`.
    pub fn of_file(path: &std::path::Path) -> Result<String> {
        if path.extension().and_then(|e| e.to_str()) != Some("c") {
            bail!("--program {}: a program is a C source file named NAME.c", path.display());
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if stem.is_empty() || !stem.chars().all(ok) {
            bail!(
                "--program {}: its workload is named after the file, and {stem:?} is not a name of letters, digits, \
                 '_' and '-': rename the file",
                path.display()
            );
        }
        Ok(stem.to_string())
    }
}

impl fmt::Display for ProgramName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for ProgramName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for ProgramName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProgramName, D::Error> {
        let name = String::deserialize(d)?;
        Ok(ProgramName::intern(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_interned_once_and_known_after() {
        let a = ProgramName::intern("interned_once_test");
        let b = ProgramName::intern("interned_once_test");
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
        assert_eq!(ProgramName::known("INTERNED_once_test"), Some(a));
        assert_eq!(ProgramName::known("never_named_test"), None);
    }

    #[test]
    fn a_program_is_named_after_its_file() {
        let name = |p: &str| ProgramName::of_file(std::path::Path::new(p));
        assert_eq!(name("programs/append1000.c").unwrap(), "append1000");
        assert_eq!(name("x/mtest-append.c").unwrap(), "mtest-append");
        assert!(name("append.cc").unwrap_err().to_string().contains("NAME.c"));
        assert!(name("a b.c").unwrap_err().to_string().contains("rename the file"));
    }
}
