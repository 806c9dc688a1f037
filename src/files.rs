//! Files written so that nothing is lost: a whole file goes to a temporary file in the same
//! folder and is renamed into place (the old file stays until then, and a failure leaves
//! nothing behind); an existing result is replaced only when asked; new names are taken
//! exclusively; a file's one writer holds a lock on it. Reads name the file they fail on.
//! Shared with build.rs (build records), so it refers to no other module of the crate.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// What to do when the file to write exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse, naming the file and `--force`.
    Refuse,
    /// Replace it (atomically: the old file stays until the new one is complete).
    Replace,
}

impl Existing {
    /// `--force` given or not.
    pub fn forced(force: bool) -> Existing {
        if force {
            Existing::Replace
        } else {
            Existing::Refuse
        }
    }
}

/// The error for a result that would be replaced without `--force`.
pub fn exists_error(path: &Path) -> anyhow::Error {
    anyhow::anyhow!("{} already exists: choose another name, or pass --force to replace it", path.display())
}

/// Said before any work is done: `path` exists and may not be replaced. A folder is never
/// replaced, `--force` or not: the name was meant for a file.
pub fn refuse_existing(path: &Path, existing: Existing) -> Result<()> {
    if path.is_dir() {
        bail!(
            "{} is a folder, and a file of that name is to be written: name a file (in that folder, \
             or elsewhere); --force replaces files, never folders",
            path.display()
        );
    }
    if existing == Existing::Refuse && path.symlink_metadata().is_ok() {
        return Err(exists_error(path));
    }
    Ok(())
}

/// Said before any work is done: none of `outputs` is one of `inputs` (the same file, by
/// any name or link to it). A command never writes over what it reads, `--force` or not.
pub fn refuse_inputs<'a>(outputs: impl IntoIterator<Item = &'a Path>, inputs: &[&Path]) -> Result<()> {
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let read: Vec<(&Path, (u64, u64))> = inputs.iter().filter_map(|p| Some((*p, id(p)?))).collect();
    for out in outputs {
        let Some(same) = id(out) else { continue };
        if let Some((input, _)) = read.iter().find(|(_, i)| *i == same) {
            bail!(
                "{} would be written over {}, which this command reads: an input is never replaced, \
                 --force or not; write to another folder or name",
                out.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// The folder a file goes in ("." for a bare name), created if needed.
fn parent_dir(path: &Path) -> Result<&Path> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Writes `bytes` to `path` through a temporary file in the same folder, renamed into place
/// once complete and on disk. On any failure the old file (if any) is untouched and the
/// temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8], existing: Existing) -> Result<()> {
    stage(&[(path.to_path_buf(), bytes.to_vec())], existing)?.commit()
}

/// Writes several files as one set: when one may not be replaced or cannot be written,
/// none is (see [`stage`]).
pub fn write_each(files: &[(PathBuf, Vec<u8>)], existing: Existing) -> Result<()> {
    stage(files, existing)?.commit()
}

/// A set of files written in full to temporary files beside their places, and not yet
/// moved into them: [`Staged::commit`] does that; dropped, it leaves nothing behind.
pub struct Staged {
    files: Vec<(PathBuf, tempfile::NamedTempFile)>,
    existing: Existing,
}

/// The first half of writing a set of files: every file refused that may not be replaced
/// (before anything is written), then each written whole to a temporary file in its folder
/// and put on disk. A failure (a full disk) removes every temporary file and places none,
/// so no partial set is left to stand in the way of the next try.
pub fn stage(files: &[(PathBuf, Vec<u8>)], existing: Existing) -> Result<Staged> {
    for (path, _) in files {
        refuse_existing(path, existing)?;
    }
    let mut staged = Staged { files: Vec::new(), existing };
    for (path, bytes) in files {
        let dir = parent_dir(path)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".lmdb-regress-")
            .suffix(".tmp")
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .with_context(|| format!("cannot create a temporary file in {} for {}", dir.display(), path.display()))?;
        tmp.write_all(bytes)
            .and_then(|()| tmp.as_file().sync_all())
            .with_context(|| format!("cannot write {} (nothing was replaced)", path.display()))?;
        staged.files.push((path.clone(), tmp));
    }
    Ok(staged)
}

impl Staged {
    /// Moves every file into its place, in the order given (so a file that names the others,
    /// such as a history's history.json, goes last and never names one not yet placed).
    /// Should one not go, those already moved are taken back: a file that replaced nothing
    /// is removed, one that replaced an old file gives its place back to the old one (kept
    /// beside it, as a hard link or a copy, until the whole set is placed), and every other
    /// file of the set is as it was.
    pub fn commit(self) -> Result<()> {
        self.commit_with(|_| Ok(()))
    }

    /// [`Staged::commit`], with `fault` asked before each move (tests make one fail).
    fn commit_with(self, mut fault: impl FnMut(&Path) -> std::io::Result<()>) -> Result<()> {
        // Each placed file, with the old file it replaced (kept under a temporary name).
        let mut placed: Vec<(PathBuf, Option<tempfile::TempPath>)> = Vec::new();
        for (path, tmp) in self.files {
            let old = match self.existing {
                Existing::Replace => keep_old(&path),
                Existing::Refuse => None,
            };
            let persisted = match fault(&path) {
                Err(error) => Err(tempfile::PersistError { error, file: tmp }),
                Ok(()) if self.existing == Existing::Refuse => tmp.persist_noclobber(&path),
                Ok(()) => tmp.persist(&path),
            };
            let error = match persisted {
                Ok(_) => {
                    placed.push((path, old));
                    continue;
                }
                Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => exists_error(&path),
                Err(e) => {
                    anyhow::Error::new(e.error).context(format!("cannot move the new {} into place", path.display()))
                }
            };
            let mut lost = Vec::new();
            for (p, old) in placed.into_iter().rev() {
                let back = match old {
                    Some(old) => old.persist(&p).map_err(|e| e.error),
                    None => std::fs::remove_file(&p),
                };
                if back.is_err() {
                    lost.push(p.display().to_string());
                }
            }
            if !lost.is_empty() {
                return Err(error.context(format!("and the new {} could not be taken back", lost.join(", "))));
            }
            return Err(error);
        }
        Ok(())
    }
}

/// The file at `path` kept under a temporary name beside it (a hard link, or a copy where
/// links are not to be had), to be put back should the set it is replaced in not be placed
/// whole; None when there is none, or it cannot be kept (then it is replaced as before,
/// with nothing to put back). Dropped, the temporary name goes.
fn keep_old(path: &Path) -> Option<tempfile::TempPath> {
    if !path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        return None;
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let keep = |p: &Path| std::fs::hard_link(path, p).or_else(|_| std::fs::copy(path, p).map(drop));
    let kept = tempfile::Builder::new().prefix(".lmdb-regress-").suffix(".old").make_in(dir, keep).ok()?;
    Some(kept.into_temp_path())
}

/// `dir/stem.ext`, or the first of `stem-2.ext`, `stem-3.ext`, … that `create` makes anew
/// (it must fail with AlreadyExists when the name is taken, as `create_new` does). Two
/// processes started in the same second thus never share a name.
pub fn create_numbered<T>(
    dir: &Path,
    stem: &str,
    ext: &str,
    create: impl Fn(&Path) -> std::io::Result<T>,
) -> Result<(T, PathBuf)> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for n in 1..10_000 {
        let name = if n == 1 { stem.to_string() } else { format!("{stem}-{n}") };
        let path = dir.join(if ext.is_empty() { name } else { format!("{name}.{ext}") });
        match create(&path) {
            Ok(t) => return Ok((t, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    bail!("{}: every name from {stem} to {stem}-9999 is taken", dir.display())
}

/// A new file, created exclusively (never an existing one).
pub fn create_new(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path)
}

/// Takes an exclusive lock (flock) on `file`, held until it is closed (or the process
/// dies). When another process holds it, the error names that process's PID, read from
/// /proc/locks.
pub fn lock_exclusive(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = lock_holder(file).map_or_else(
                || "another process (its PID is not in /proc/locks)".to_string(),
                |pid| format!("process {pid}"),
            );
            bail!(
                "{} is being written by {holder}: one writer per file; wait for it to end, or stop it",
                path.display()
            )
        }
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// The PID holding a flock on `file`: /proc/locks lists each lock with its owner's PID and
/// the file's device and inode (`1: FLOCK ADVISORY WRITE 4242 fe:00:1234 0 EOF`).
pub fn lock_holder(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let dev = meta.dev();
    // glibc's encoding of dev_t (gnu_dev_major, gnu_dev_minor).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&id.as_str())).then(|| f.get(4)?.parse().ok())?
    })
}

/// `path` opened for reading if it is a regular file (or a link to one); a directory, FIFO,
/// socket or device is refused before anything is read from it, so that a read can never
/// block on a pipe. `what` names it in errors ("run file").
pub fn open_regular(path: &Path, what: &str) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |meta: &std::fs::Metadata| -> Result<()> {
        let kind = meta.file_type();
        match () {
            _ if kind.is_file() => Ok(()),
            _ if kind.is_dir() => bail!("{} is a directory, not a {what}", path.display()),
            _ => bail!("{} is not a regular file (a pipe, socket or device), not a {what}", path.display()),
        }
    };
    refuse(&std::fs::metadata(path).with_context(|| format!("cannot open {what} {}", path.display()))?)?;
    // Non-blocking: should the name become a FIFO after the check, opening it does not wait
    // for a writer, and the check of what was opened refuses it.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot open {what} {}", path.display()))?;
    refuse(&file.metadata().with_context(|| format!("cannot read {what} {}", path.display()))?)?;
    Ok(file)
}

/// The text of `path`, which must be a regular UTF-8 file; `what` names it in errors ("run file").
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_regular(path, what)?, &mut bytes)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        anyhow::anyhow!("{}:{line}: not UTF-8 (byte {at}): not a {what}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_refuse_or_replace_and_leave_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/report.md");
        write_atomic(&p, b"one", Existing::Refuse).unwrap();
        let e = write_atomic(&p, b"two", Existing::Refuse).unwrap_err().to_string();
        assert!(e.contains("already exists") && e.contains("--force"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_atomic(&p, b"two", Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["report.md"]);
        // Readable as any file the user writes (the umask decides), not only by its owner.
        assert_ne!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o077, 0);
    }

    #[test]
    fn a_set_is_placed_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.md"), dir.path().join("b.json"));
        std::fs::write(&b, "the user's").unwrap();
        // One file of the set may not be replaced: nothing is written, not even a.md.
        let set = [(a.clone(), b"new a".to_vec()), (b.clone(), b"new b".to_vec())];
        let e = write_each(&set, Existing::Refuse).unwrap_err().to_string();
        assert!(e.contains("b.json already exists"), "{e}");
        // Staged and dropped (as after Ctrl-C): nothing placed, no temporary file left.
        drop(stage(&set, Existing::Replace).unwrap());
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(), ["b.json"]);
        assert_eq!(std::fs::read(&b).unwrap(), b"the user's");
        stage(&set, Existing::Replace).unwrap().commit().unwrap();
        assert_eq!((std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()), (b"new a".to_vec(), b"new b".to_vec()));
        assert_eq!(names(), ["a.md", "b.json"]);
    }

    #[test]
    fn a_set_whose_last_move_fails_is_taken_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (run, txt, json) = (dir.path().join("new-run.jsonl"), dir.path().join("h.txt"), dir.path().join("h.json"));
        std::fs::write(&txt, "old text").unwrap();
        std::fs::write(&json, "old json").unwrap();
        let set =
            [(run.clone(), b"run".to_vec()), (txt.clone(), b"new text".to_vec()), (json.clone(), b"new".to_vec())];
        let mut order = Vec::new();
        let e = stage(&set, Existing::Replace)
            .unwrap()
            .commit_with(|p| {
                order.push(p.file_name().unwrap().to_string_lossy().into_owned());
                match p == json {
                    true => Err(std::io::Error::other("planted fault")),
                    false => Ok(()),
                }
            })
            .unwrap_err();
        assert_eq!(order, ["new-run.jsonl", "h.txt", "h.json"], "placed in the order given");
        assert!(
            format!("{e:#}").contains("cannot move the new") && format!("{e:#}").contains("planted fault"),
            "{e:#}"
        );
        // The new run file is gone, the old files are back, no temporary file is left.
        assert!(!run.exists());
        assert_eq!(std::fs::read(&txt).unwrap(), b"old text");
        assert_eq!(std::fs::read(&json).unwrap(), b"old json");
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["h.json", "h.txt"]);
        // Without a fault the same set goes whole, and leaves no kept old file behind.
        stage(&set, Existing::Replace).unwrap().commit().unwrap();
        assert_eq!(std::fs::read(&json).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn inputs_and_folders_are_never_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("run.jsonl");
        std::fs::write(&input, "a run").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        for out in [input.clone(), dir.path().join(".").join("run.jsonl"), link] {
            let e = refuse_inputs([out.as_path()], &[&input]).unwrap_err().to_string();
            assert!(e.contains("which this command reads") && e.contains("--force or not"), "{e}");
        }
        refuse_inputs([dir.path().join("new.json").as_path()], &[&input]).unwrap();
        for existing in [Existing::Refuse, Existing::Replace] {
            let e = refuse_existing(dir.path(), existing).unwrap_err().to_string();
            assert!(e.contains("is a folder") && e.contains("never folders"), "{e}");
        }
    }

    #[test]
    fn numbered_names_skip_taken_ones() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..3)
            .map(|_| create_numbered(dir.path(), "run-1", "jsonl", create_new).unwrap().1)
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["run-1.jsonl", "run-1-2.jsonl", "run-1-3.jsonl"]);
        let (_, d) = create_numbered(dir.path(), "bisect", "", |p| std::fs::create_dir(p)).unwrap();
        assert!(d.is_dir());
    }

    #[test]
    fn a_second_lock_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.jsonl");
        let a = create_new(&p).unwrap();
        lock_exclusive(&a, &p).unwrap();
        // A second open file description conflicts with the first, even in one process.
        let b = File::open(&p).unwrap();
        let e = lock_exclusive(&b, &p).unwrap_err().to_string();
        assert!(e.contains(&format!("process {}", std::process::id())), "{e}");
        drop(a);
        // A child another test forks holds a copy of `a` until it execs (the descriptor is
        // close-on-exec), so the lock may outlive the drop by that long.
        let freed = (0..500).any(|_| {
            lock_exclusive(&b, &p).is_ok() || {
                std::thread::sleep(std::time::Duration::from_millis(10));
                false
            }
        });
        assert!(freed, "the lock outlived its file by 5 s");
    }

    #[test]
    fn reads_name_the_file_and_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_text(dir.path(), "run file").unwrap_err().to_string();
        assert!(e.contains("is a directory, not a run file") && e.contains(&dir.path().display().to_string()), "{e}");
        let p = dir.path().join("x.jsonl");
        std::fs::write(&p, b"{}\n\xff\xfe").unwrap();
        let e = read_text(&p, "run file").unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:2: not UTF-8", p.display())), "{e}");
        let e = read_text(&dir.path().join("missing"), "run file").unwrap_err();
        assert!(format!("{e:#}").contains("missing"), "{e:#}");
    }
}
