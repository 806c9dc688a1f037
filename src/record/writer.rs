//! A run file's one writer: the lock that keeps a second one out, the repair of a torn
//! last line, and the check that every unit it writes is one its header declares.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::label::Label;
use super::reader::{read_header, whole_record, RunData};
use super::schema::{Header, Record, DECLARES_UNITS};
use crate::files::{self, Existing};

impl RunData {
    /// The run as a run file's text, written in one piece (`merge`): header, failures,
    /// samples, checks, end.
    pub fn text(&self) -> Result<String> {
        let records = std::iter::once(Record::Header(Box::new(self.header.clone())))
            .chain(self.failures.iter().cloned().map(Record::Failure))
            .chain(self.samples.iter().cloned().map(Record::Sample))
            .chain(self.checks.iter().cloned().map(Record::Check))
            .chain(self.end.iter().cloned().map(Record::End))
            .chain(self.coverage.iter().cloned().map(Record::Coverage));
        records.map(|r| line(&r)).collect::<Result<String>>()
    }
}

/// A record as one line of a run file.
pub(super) fn line(r: &Record) -> Result<String> {
    let mut line = serde_json::to_string(r)?;
    line.push('\n');
    Ok(line)
}

/// A run file's one writer: it holds an exclusive lock (flock) on the file from opening to
/// the end, so a second writer fails at once, naming the first one's PID.
pub struct RunWriter {
    file: File,
    pub path: PathBuf,
    /// The labels the file's header declares (schema 4): a sample or failure of any other
    /// unit is refused before it is written. None for older files, whose labels are text.
    declared: Option<BTreeSet<Label>>,
}

impl RunWriter {
    /// A new run file at `path`, its header written. An existing file is refused unless
    /// `existing` says replace, and one another process is writing is never replaced.
    pub fn create(path: &Path, header: &Header, existing: Existing) -> Result<RunWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let opened = match existing {
            Existing::Refuse => files::create_new(path),
            Existing::Replace => OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path),
        };
        let file = match opened {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(files::exists_error(path)),
            other => other.with_context(|| format!("cannot create run file {}", path.display()))?,
        };
        files::lock_exclusive(&file, path)?;
        file.set_len(0).with_context(|| format!("cannot empty {}", path.display()))?;
        RunWriter::start(file, path.to_path_buf(), header)
    }

    /// A new run file `dir/stem.jsonl`, or `stem-2.jsonl`, `stem-3.jsonl`, …: never an
    /// existing one, so runs started in the same second keep their own files.
    pub fn create_numbered(dir: &Path, stem: &str, header: &Header) -> Result<RunWriter> {
        let (file, path) = files::create_numbered(dir, stem, "jsonl", files::create_new)?;
        files::lock_exclusive(&file, &path)?;
        RunWriter::start(file, path, header)
    }

    fn start(file: File, path: PathBuf, header: &Header) -> Result<RunWriter> {
        let mut w = RunWriter { file, path, declared: declared(header) };
        w.append(&Record::Header(Box::new(header.clone())))?;
        Ok(w)
    }

    /// The run file `path`, locked for this writer, to continue it in the shape its header
    /// says: a file of schema 3 or before goes on naming its units by their labels only
    /// (its reader reads them from their text), a later one only the units it declares.
    /// Nothing in it changes until [`RunWriter::cut_torn_line`] or an append.
    pub fn reopen(path: &Path) -> Result<RunWriter> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open run file {}", path.display()))?;
        files::lock_exclusive(&file, path)?;
        let text = files::read_text(path, "run file")?;
        let first = text.lines().next();
        let header = first.map(|first| read_header(path, first, !text.contains('\n'))).transpose()?.map(|(h, _)| h);
        Ok(RunWriter { file, path: path.to_path_buf(), declared: header.as_ref().and_then(declared) })
    }

    /// Writes the file's header again, changed by `change`, before anything is measured
    /// into it (it holds its header and failures only; anything more is refused): the new
    /// file is written whole beside it, locked, and renamed into its place, so the file at
    /// its path is at every moment a whole run file this writer holds. Its units stay as
    /// declared.
    pub fn restate(&mut self, change: impl FnOnce(&mut Header)) -> Result<()> {
        let mut data = super::reader::load(&self.path)?;
        if !(data.samples.is_empty() && data.checks.is_empty() && data.end.is_none() && data.coverage.is_none()) {
            bail!("{}: its header is not restated once anything is measured into it", self.path.display());
        }
        let units = data.header.units.clone();
        change(&mut data.header);
        if data.header.units != units {
            bail!("{}: a restated header declares the units it declared", self.path.display());
        }
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut staged = tempfile::Builder::new()
            .prefix(".lmdb-regress-")
            .suffix(".tmp")
            .permissions(<std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o666))
            .tempfile_in(dir)
            .with_context(|| {
                format!("cannot create a temporary file in {} for {}", dir.display(), self.path.display())
            })?;
        files::lock_exclusive(staged.as_file(), staged.path())?;
        staged
            .write_all(data.text()?.as_bytes())
            .and_then(|()| staged.as_file().sync_all())
            .with_context(|| format!("cannot restate {} (it is unchanged)", self.path.display()))?;
        self.file = staged.persist(&self.path).with_context(|| format!("cannot restate {}", self.path.display()))?;
        Ok(())
    }

    /// Mends a last line without its newline, and says so: one that is a whole record (the
    /// run stopped between writing it and its newline) is kept and given its newline; one
    /// that is not (the run was killed, or the disk filled, while it was written) is cut.
    /// What is appended then starts a line of its own.
    pub fn cut_torn_line(&mut self) -> Result<()> {
        let text = std::fs::read(&self.path).with_context(|| format!("cannot read {}", self.path.display()))?;
        if text.is_empty() || text.ends_with(b"\n") {
            return Ok(());
        }
        let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line_no = text[..keep].iter().filter(|&&b| b == b'\n').count() + 1;
        let at = format!("{}:{line_no}", self.path.display());
        if whole_record(&text[keep..]) {
            self.file.write_all(b"\n").with_context(|| format!("cannot write {}", self.path.display()))?;
            eprintln!("{at}: the last line is a whole record without its newline: kept, its newline added");
            return Ok(());
        }
        self.file.set_len(keep as u64).with_context(|| format!("cannot cut {}", self.path.display()))?;
        eprintln!(
            "{at}: cut a torn last line ({} bytes, written when the run was stopped) before continuing",
            text.len() - keep
        );
        Ok(())
    }

    /// One line, flushed at once: what is written survives a kill. A sample or failure of
    /// a unit the header does not declare is refused, the file unchanged.
    pub fn append(&mut self, r: &Record) -> Result<()> {
        if let (Some(declared), Some(unit)) = (&self.declared, r.unit()) {
            if !declared.contains(unit) {
                bail!(
                    "cannot write {}: unit {unit} is not among the units its header declares \
                     (a file its reader would refuse)",
                    self.path.display()
                );
            }
        }
        let line = line(r)?;
        self.file.write_all(line.as_bytes()).with_context(|| format!("cannot write {}", self.path.display()))?;
        self.file.flush()?;
        Ok(())
    }
}

/// The labels `h` declares, when its schema declares units.
fn declared(h: &Header) -> Option<BTreeSet<Label>> {
    (h.schema >= DECLARES_UNITS).then(|| h.units.iter().map(|d| d.value.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::*;
    use crate::record::label::Label;
    use crate::record::metric::Metric;
    use crate::record::plan::Plan;
    use crate::record::reader::load;
    use crate::record::schema::{Failure, FailureStage};

    #[test]
    fn a_writer_writes_no_unit_its_file_does_not_declare() {
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), &every_form()[..2]);
        let before = std::fs::read(&path).unwrap();
        for mut w in [
            RunWriter::create(&dir.path().join("new.jsonl"), &header_of(&[]), Existing::Refuse).unwrap(),
            RunWriter::reopen(&path).unwrap(),
        ] {
            let e = w.append(&sample("LMDB_0.9.18")).unwrap_err().to_string();
            assert!(e.contains("unit LMDB_0.9.18 is not among the units its header declares"), "{e}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert!(load(&path).is_ok());
    }

    #[test]
    fn a_whole_last_line_is_mended_and_a_torn_one_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_of(dir.path(), Plan::new(2, 0, Metric::Time), &[sample("LMDB_0.9.33")]);
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, whole.trim_end()).unwrap();
        RunWriter::reopen(&path).unwrap().cut_torn_line().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        std::fs::write(&path, &whole[..whole.len() - 10]).unwrap();
        RunWriter::reopen(&path).unwrap().cut_torn_line().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1, "the header alone");
        // A header cut off is torn, whatever the reader.
        let header = whole.lines().next().unwrap();
        for cut in [5, 300] {
            std::fs::write(&path, &header[..cut]).unwrap();
            let e = format!("{:#}", load(&path).unwrap_err());
            assert!(e.contains(":1: the header is torn"), "{e}");
        }
        std::fs::write(&path, "{\"no\": 1\n").unwrap();
        assert!(format!("{:#}", load(&path).unwrap_err()).contains("is not a lmdb-regress run file"));
    }

    #[test]
    fn an_older_file_is_continued_in_its_own_shape_and_read_from_its_labels() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        let mut h = committed().header;
        assert!(h.schema < DECLARES_UNITS && h.units.is_empty());
        h.schema = 3;
        let control = Label::build("LMDB_0.9.33", None).control();
        RunWriter::create(&old, &h, Existing::Refuse).unwrap();
        // As `run --resume` continues it: no declarations appended, the labels as text.
        let mut w = RunWriter::reopen(&old).unwrap();
        w.append(&sample("LMDB_0.9.33")).unwrap();
        w.append(&Record::Sample(unit_sample(&control))).unwrap();
        let text = std::fs::read_to_string(&old).unwrap();
        assert!(!text.contains("\"units\"") && text.contains("\"schema\":3"), "{text}");
        let data = load(&old).unwrap();
        assert!(data.units.contains(&control));
        assert_eq!(data.samples.len(), 2);
    }

    /// A header restated before anything is measured keeps the file's failures and its
    /// writer's lock, and leaves no temporary file; once a sample is in, it is refused and
    /// the file unchanged.
    #[test]
    fn a_header_is_restated_only_before_anything_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let unit = Label::build("LMDB_0.9.33", None);
        let mut w = RunWriter::create(&path, &header_of(std::slice::from_ref(&unit)), Existing::Refuse).unwrap();
        let failure = Failure {
            round: None,
            engine: crate::record::Engine::Rust,
            unit,
            workload: None,
            stage: FailureStage::Build,
            error: "no C twin".into(),
            died: false,
            cause: None,
        };
        w.append(&Record::Failure(failure.clone())).unwrap();
        w.restate(|h| h.plan.time_budget_s = Some(90.0)).unwrap();
        let e = RunWriter::reopen(&path).err().unwrap().to_string();
        assert!(e.contains("is being written by process"), "{e}");
        w.append(&sample("LMDB_0.9.33")).unwrap();
        let data = load(&path).unwrap();
        assert_eq!((data.header.plan.time_budget_s, &data.failures[..]), (Some(90.0), &[failure][..]));
        assert_eq!(data.samples.len(), 1);
        let before = std::fs::read(&path).unwrap();
        let e = w.restate(|h| h.plan.time_budget_s = None).unwrap_err().to_string();
        assert!(e.contains("its header is not restated once anything is measured into it"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }
}
