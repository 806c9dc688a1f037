//! Build artifacts (a tag's shared library, its C twin's executable, any library linked
//! for a run) are loaded only as verified: their build record holds each one's SHA-256,
//! and every load checks the file against it. A symbolic link is refused whatever it
//! points at. Shared with build.rs, so it refers to no other module of the crate.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// The SHA-256 of an open file's contents, in hex.
pub fn sha256_of(file: &mut File) -> std::io::Result<String> {
    let mut h = Sha256::new();
    std::io::copy(file, &mut h)?;
    Ok(hex::encode(h.finalize()))
}

/// An artifact whose contents were hashed and found to be what its build record says,
/// kept open: [`Verified::load_path`] names exactly the bytes that were hashed.
pub struct Verified {
    file: File,
    pub path: PathBuf,
}

impl Verified {
    /// This process's open file, for dlopen: replacing the file on disk after the check
    /// cannot change what is loaded.
    pub fn load_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
    }
}

/// Opens `path` (a regular file, not a symbolic link) and checks its SHA-256 against
/// `expected`. The error says what is wrong and names the file.
pub fn open_verified(path: &Path, expected: &str) -> Result<Verified> {
    let mut file = open_regular(path)?;
    let found = sha256_of(&mut file).with_context(|| format!("cannot read {}", path.display()))?;
    if found != expected {
        bail!(
            "{} has SHA-256 {found}, but its build record says {expected}: it is not the file that was built",
            path.display()
        );
    }
    Ok(Verified { file, path: path.to_path_buf() })
}

/// Checks `path` against `expected` (before running it).
pub fn verify(path: &Path, expected: &str) -> Result<()> {
    open_verified(path, expected).map(drop)
}

/// The SHA-256 of a regular file that is not a symbolic link (to record a new build).
pub fn sha256(path: &Path) -> Result<String> {
    let mut file = open_regular(path)?;
    sha256_of(&mut file).with_context(|| format!("cannot read {}", path.display()))
}

/// Opens `path` if it is a regular file and no symbolic link, and is the file that was
/// looked at (the same device and inode).
fn open_regular(path: &Path) -> Result<File> {
    let link = path.symlink_metadata().with_context(|| format!("cannot find {}", path.display()))?;
    if link.file_type().is_symlink() {
        let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_else(|e| e.to_string());
        bail!("{} is a symbolic link (to {target}), not the file that was built", path.display());
    }
    if !link.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let meta = file.metadata().with_context(|| format!("cannot read {}", path.display()))?;
    if (meta.dev(), meta.ino()) != (link.dev(), link.ino()) {
        bail!("{} was replaced while it was being checked", path.display());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_recorded_bytes_pass() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("liblmdb.so");
        std::fs::write(&lib, b"built").unwrap();
        let good = sha256(&lib).unwrap();
        assert_eq!(good, hex::encode(Sha256::digest(b"built")));
        let v = open_verified(&lib, &good).unwrap();
        assert_eq!(std::fs::read(v.load_path()).unwrap(), b"built");

        std::fs::write(&lib, b"tampered").unwrap();
        let e = verify(&lib, &good).unwrap_err().to_string();
        assert!(e.contains("liblmdb.so has SHA-256") && e.contains(&good) && e.contains("not the file"), "{e}");

        let outside = dir.path().join("elsewhere.so");
        std::fs::write(&outside, b"built").unwrap();
        std::fs::remove_file(&lib).unwrap();
        std::os::unix::fs::symlink(&outside, &lib).unwrap();
        let e = verify(&lib, &good).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link (to") && e.contains("elsewhere.so"), "{e}");
        assert!(verify(dir.path(), &good).unwrap_err().to_string().contains("not a regular file"));
        assert!(format!("{:#}", verify(&dir.path().join("gone"), &good).unwrap_err()).contains("cannot find"));
    }
}
