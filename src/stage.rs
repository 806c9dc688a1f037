//! What a build compiles is exactly what was verified. The sources (and the C twin's files)
//! are read once, each checked against the hash it was verified with, and written into the
//! build's own staging folder; the compiler reads only those copies, which are hashed again
//! once it is done. A source changed in the shared cache after its check cannot reach a
//! build, and a copy changed while the compiler read it fails the build. The copies stay in
//! the finished build's folder (`src/`, `harness/`), where every later use checks them
//! against the record again. Shared with build.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::manifest::FileHashes;
use crate::source::SourceSet;

/// The folder of a build that holds the library's sources it was compiled from.
pub const SRC: &str = "src";
/// The folder of a C twin's build that holds the twin's files it was compiled from.
pub const HARNESS: &str = "harness";

/// The bytes of one build's inputs, by their path in the build's folder (`src/mdb.c`,
/// `harness/workloads.c`), the C twin's first (as they are linked).
pub struct Inputs {
    files: Vec<(String, Vec<u8>)>,
}

impl Inputs {
    /// `src`'s library sources, each of which must still hash as it was verified, and the
    /// C twin's `harness` files when given.
    pub fn read(src: &SourceSet, harness: &[PathBuf]) -> Result<Inputs> {
        let mut files = Vec::new();
        for p in harness {
            let name = p.file_name().with_context(|| format!("{} names no file", p.display()))?;
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            files.push((format!("{HARNESS}/{}", name.to_string_lossy()), bytes));
        }
        for (name, verified) in &src.files {
            let path = src.dir.join(name);
            let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            let found = sha256(&bytes);
            if found != *verified {
                bail!(
                    "{} changed after it was verified (SHA-256 {found}, verified as {verified}): nothing is \
                     compiled from it; delete {} and its sources are fetched and verified again",
                    path.display(),
                    src.dir.display()
                );
            }
            files.push((format!("{SRC}/{name}"), bytes));
        }
        Ok(Inputs { files })
    }

    /// Each input's path in the build's folder and its SHA-256: what the compiler must read.
    pub fn hashes(&self) -> FileHashes {
        self.files.iter().map(|(path, bytes)| (path.clone(), sha256(bytes))).collect()
    }

    /// Writes every input into `dir` (read-only), where the compiler reads it.
    pub fn stage(&self, dir: &Path) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        for (path, bytes) in &self.files {
            let dest = dir.join(path);
            let parent = dest.parent().expect("inputs live in a folder");
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
            std::fs::write(&dest, bytes).with_context(|| format!("cannot write {}", dest.display()))?;
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o444))
                .with_context(|| format!("cannot make {} read-only", dest.display()))?;
        }
        Ok(())
    }

    /// The C files among the inputs, relative to the staging folder, in link order (the C
    /// twin's, then liblmdb's); `harness` false leaves the twin's out.
    pub fn c_files(&self, harness: bool) -> Vec<PathBuf> {
        let wanted = |p: &&String| p.ends_with(".c") && (harness || p.starts_with(&format!("{SRC}/")));
        self.files.iter().map(|(p, _)| p).filter(wanted).map(PathBuf::from).collect()
    }
}

/// The library sources among a build's inputs, by file name (as a tag's pins name them).
pub fn library_files(inputs: &FileHashes) -> FileHashes {
    let prefix = format!("{SRC}/");
    inputs.iter().filter_map(|(p, h)| Some((p.strip_prefix(&prefix)?.to_string(), h.clone()))).collect()
}

/// That every input in `dir` still has the SHA-256 `expected` gives it: after compiling,
/// what the compiler read; later, what the build's folder keeps. The error names the file
/// and both hashes.
pub fn check(dir: &Path, expected: &FileHashes) -> Result<()> {
    for (path, want) in expected {
        let file = dir.join(path);
        let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let found = sha256(&bytes);
        if found != *want {
            bail!("{} has SHA-256 {found}, but the build compiles {want}: it is not the verified file", file.display());
        }
    }
    Ok(())
}

/// `compiler` run in `staging` on the inputs by their relative names (`src/mdb.c`), with
/// the staging folder named `.` in debug information: the same inputs then give the same
/// bytes, whatever the staging folder, the cache or the current folder, and a debugger
/// started in the build's folder finds the sources it keeps.
pub fn compiler_in(staging: &Path, compiler: &Path) -> Command {
    // A relative path with a folder (`./my-cc`) names a file from here, not from `staging`.
    let program = match compiler.is_relative() && compiler.components().count() > 1 {
        true => std::env::current_dir().map(|d| d.join(compiler)).unwrap_or_else(|_| compiler.to_path_buf()),
        false => compiler.to_path_buf(),
    };
    let mut c = Command::new(program);
    c.current_dir(staging).arg(format!("-ffile-prefix-map={}=.", staging.display()));
    c
}

/// The version a verified `lmdb.h` declares: its numbers, and the text `mdb_version()`
/// returns for it (`MDB_VERSION_STRING`: "LMDB 0.9.33: (May 21, 2024)").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderVersion {
    pub numbers: (i32, i32, i32),
    pub text: String,
}

impl HeaderVersion {
    /// Reads the `MDB_VERSION_*` definitions of the `lmdb.h` in `dir`.
    pub fn of(dir: &Path) -> Result<HeaderVersion> {
        let path = dir.join("lmdb.h");
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let define = |name: &str| {
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("#define"))
                .find_map(|rest| rest.trim_start().strip_prefix(name)?.strip_prefix(char::is_whitespace))
                .map(str::trim)
                .with_context(|| format!("{} defines no {name}", path.display()))
        };
        let number = |name: &str| -> Result<i32> {
            let v = define(name)?;
            v.parse().with_context(|| format!("{}: {name} is {v:?}, not a number", path.display()))
        };
        let numbers = (number("MDB_VERSION_MAJOR")?, number("MDB_VERSION_MINOR")?, number("MDB_VERSION_PATCH")?);
        let date = define("MDB_VERSION_DATE")?;
        let date = date.strip_prefix('"').and_then(|d| d.strip_suffix('"')).unwrap_or(date);
        let (a, b, c) = numbers;
        Ok(HeaderVersion { numbers, text: format!("LMDB {a}.{b}.{c}: ({date})") })
    }

    /// Whether the artifact's bytes hold this version's text as a C string: a library (or
    /// C twin) built from these sources does, another version's does not. Read, not loaded,
    /// so nothing of an untrusted file runs.
    pub fn is_in(&self, artifact: &Path) -> Result<bool> {
        let bytes = std::fs::read(artifact).with_context(|| format!("cannot read {}", artifact.display()))?;
        let needle: Vec<u8> = self.text.bytes().chain([0]).collect();
        Ok(bytes.windows(needle.len()).any(|w| w == needle))
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_version_is_read_from_lmdb_h() {
        let dir = tempfile::tempdir().unwrap();
        let header = "#define MDB_VERSION_MAJOR\t0\n/** minor */\n#define MDB_VERSION_MINOR\t9\n\
                      #define MDB_VERSION_PATCH\t33\n#define MDB_VERSION_PATCHED 1\n\
                      #define MDB_VERSION_DATE\t\"May 21, 2024\"\n";
        std::fs::write(dir.path().join("lmdb.h"), header).unwrap();
        let d = HeaderVersion::of(dir.path()).unwrap();
        assert_eq!(d, HeaderVersion { numbers: (0, 9, 33), text: "LMDB 0.9.33: (May 21, 2024)".into() });
        let lib = dir.path().join("liblmdb.so");
        std::fs::write(&lib, b"\x7fELF..LMDB 0.9.33: (May 21, 2024)\0..").unwrap();
        assert!(d.is_in(&lib).unwrap());
        std::fs::write(&lib, b"\x7fELF..LMDB 0.9.18: (February 5, 2016)\0..").unwrap();
        assert!(!d.is_in(&lib).unwrap());
        std::fs::write(dir.path().join("lmdb.h"), "#define MDB_VERSION_MAJOR x\n").unwrap();
        let e = format!("{:#}", HeaderVersion::of(dir.path()).unwrap_err());
        assert!(e.contains("MDB_VERSION_MAJOR is \"x\", not a number"), "{e}");
    }

    #[test]
    fn a_copy_changed_after_staging_is_named_with_both_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = Inputs { files: vec![("src/midl.c".into(), b"int x;\n".to_vec())] };
        inputs.stage(dir.path()).unwrap();
        let expected = inputs.hashes();
        check(dir.path(), &expected).unwrap();
        let copy = dir.path().join("src/midl.c");
        std::fs::remove_file(&copy).unwrap();
        std::fs::write(&copy, b"int x; __attribute__((constructor)) static void y(void) {}\n").unwrap();
        let e = check(dir.path(), &expected).unwrap_err().to_string();
        assert!(e.contains("src/midl.c has SHA-256") && e.contains(&expected["src/midl.c"]), "{e}");
        assert_eq!(library_files(&expected).keys().collect::<Vec<_>>(), ["midl.c"]);
    }
}
