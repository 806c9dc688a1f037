//! The paired worker: a hidden subcommand that loads several libraries into one process
//! (each from a private copy of its verified bytes, so two slots never share one loaded
//! object), opens each slot's environment, and runs the workloads side by side in chunks
//! (`workload::paired`), printing one [`WorkerLine`] per slot and workload.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rand::SeedableRng;

use super::protocol::WorkerLine;
use super::worker::{emit, line, WorkerSettings};
use crate::workload::concurrent::SharedBoard;
use crate::workload::lmdb::Api;
use crate::workload::paired::{self, Rotation, Slot};
use crate::workload::reader_procs::ReaderProcs;
use crate::workload::suite::Suite;
use crate::workload::{Dataset, Workload};

#[derive(clap::Args, Debug)]
pub struct PairedWorkerArgs {
    /// One slot per line, tab-separated: the library, its SHA-256, the text its
    /// mdb_version() must report, the read database's directory (or -), the workloads it
    /// runs (comma-separated, among --workloads); then readers beside a writer (or -) and
    /// the slot's place among its unit's layouts (from 0; the slots of a unit's layouts are
    /// consecutive), each when there is one.
    #[arg(long)]
    pub slots: PathBuf,
    /// Where write passes create their fresh environments.
    #[arg(long)]
    pub scratch: PathBuf,
    /// Run in this order.
    #[arg(long)]
    pub workloads: String,
    /// Operations per chunk.
    #[arg(long)]
    pub chunk: usize,
    /// Passes of each workload per slot.
    #[arg(long, default_value_t = 1)]
    pub iterations: u32,
    /// Seeds the order of the slots in each round of chunks.
    #[arg(long)]
    pub rotation_seed: u64,
    #[command(flatten)]
    pub settings: WorkerSettings,
}

/// One line of the slots file.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotSpec {
    pub library: PathBuf,
    pub sha256: String,
    pub version: String,
    pub dir: Option<PathBuf>,
    /// The workloads this slot runs: an adaptive round leaves a unit out of the workloads
    /// whose comparison is decided.
    pub workloads: Vec<Workload>,
    /// Readers beside a writer: the unit's reader threads, a sixth field (the Rust
    /// paired worker's only; the C twin's slots have five).
    pub readers: Option<u32>,
    /// The slot's place among its unit's layouts in the process (`--layouts-per-process`),
    /// from 0, a seventh field when not 0 (the Rust paired worker's only): a further
    /// layout, each timing its share of the chunks that stand alone.
    pub layout: u32,
}

impl SlotSpec {
    pub fn line(&self) -> Result<String> {
        let dir = self.dir.as_deref().map_or("-".into(), |d| d.display().to_string());
        let names: Vec<&str> = self.workloads.iter().map(|w| w.name()).collect();
        let mut fields =
            vec![self.library.display().to_string(), self.sha256.clone(), self.version.clone(), dir, names.join(",")];
        if fields.iter().any(|f| f.contains(['\t', '\n'])) {
            bail!("a slot's path holds a tab or a newline: {}", fields.join(" "));
        }
        if self.readers.is_some() || self.layout > 0 {
            fields.push(self.readers.map_or("-".into(), |n| n.to_string()));
        }
        if self.layout > 0 {
            fields.push(self.layout.to_string());
        }
        Ok(fields.join("\t") + "\n")
    }

    pub fn parse(line: &str) -> Result<SlotSpec> {
        let f: Vec<&str> = line.split('\t').collect();
        let (library, sha256, version, dir, workloads) = match f[..] {
            [library, sha256, version, dir, workloads, ..] if f.len() <= 7 => {
                (library, sha256, version, dir, workloads)
            }
            _ => bail!("a slot line has 5 tab-separated fields, 6 with readers, 7 with its layout: {line:?}"),
        };
        let readers = match f.get(5) {
            None | Some(&"-") => None,
            Some(n) => Some(n.parse().with_context(|| format!("readers {n:?}"))?),
        };
        let layout = f.get(6).map_or(Ok(0), |n| n.parse()).with_context(|| format!("layout {:?}", f[6]))?;
        let dir = (dir != "-").then(|| PathBuf::from(dir));
        let workloads = Workload::parse_list(workloads)?;
        let (library, sha256, version) = (library.into(), sha256.into(), version.into());
        Ok(SlotSpec { library, sha256, version, dir, workloads, readers, layout })
    }
}

pub fn main(args: PairedWorkerArgs) -> Result<()> {
    let workloads = Workload::parse_list(&args.workloads)?;
    let suite = Suite::of(&workloads)?;
    if suite != Suite::LmdbJava && suite != Suite::Concurrency {
        bail!("{suite} is measured a process per unit (--pairing process): only LmdbJava's six run in chunks");
    }
    let cfg = args.settings.resolve(suite)?;
    // Before any library is loaded or any pass timed: the harness's settings, not a unit's.
    crate::workload::malloc::keep_freed()?;
    let text = std::fs::read_to_string(&args.slots).with_context(|| format!("cannot read {}", args.slots.display()))?;
    let specs: Vec<SlotSpec> = text.lines().map(SlotSpec::parse).collect::<Result<_>>()?;
    report_crashes();
    let mut seen = BTreeSet::new();
    let loaded: Vec<Result<(File, Api), String>> = specs
        .iter()
        .enumerate()
        .map(|(k, s)| paired::as_slot(k, || load(s, &mut seen)).map_err(|e| format!("{e:#}")))
        .collect();
    if suite == Suite::Concurrency {
        return crews(&args, &cfg, &workloads, &specs, &loaded);
    }
    let members = members(&specs)?;
    let further = |k: usize| members[k].index != 0;
    let data = Dataset::generate(&cfg);
    // A slot opens its read database only when it runs a read; a further layout for its
    // first pass, kept open until its last (opening and closing them for each pass cost
    // about 0.45 s a round of 17 tags; reports/README.md, "Sixteen layouts by default").
    let reads = |s: &SlotSpec| s.workloads.iter().any(|w| w.is_read());
    let mut slots: Vec<(Slot, &SlotSpec)> = loaded
        .iter()
        .zip(&specs)
        .enumerate()
        .filter_map(|(k, (l, s))| {
            let dir = s.dir.as_deref().filter(|_| reads(s) && !further(k));
            Some((Slot::new(k, &l.as_ref().ok()?.1, members[k], &cfg, dir), s))
        })
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.rotation_seed);
    let beat = SignOfLife::new(SIGN_OF_LIFE_EVERY);
    let after_round = || beat.between_chunks();
    for (n, &w) in workloads.iter().enumerate() {
        for (slot, spec) in slots.iter_mut().filter(|(s, spec)| further(s.id) && spec.workloads.contains(&w)) {
            if let Some(dir) = spec.dir.as_deref() {
                slot.further((&cfg, w), dir, (&data, args.chunk));
            }
        }
        let rotation = Rotation { chunk: args.chunk, passes: args.iterations, after_round: &after_round };
        for (k, l) in loaded.iter().enumerate().filter(|(k, _)| specs[*k].workloads.contains(&w)) {
            if let Err(e) = l {
                emit(&WorkerLine {
                    slot: Some(k as u32),
                    ..line(w, Err(format!("refusing to load the library: {e}")))
                });
            }
        }
        let running: Vec<&Slot> = slots.iter().filter(|(_, s)| s.workloads.contains(&w)).map(|(s, _)| s).collect();
        let outcomes = paired::run(&running, &cfg, &args.scratch, &data, w, rotation, &mut rng);
        for (slot, o) in running.iter().zip(outcomes) {
            emit(&WorkerLine { slot: Some(slot.id as u32), ..line(w, o) });
        }
        // A further layout's database stays open until the last workload it runs.
        let later = &workloads[n + 1..];
        let keeps = |spec: &SlotSpec| later.iter().any(|w| w.chunks_stand_alone() && spec.workloads.contains(w));
        slots.iter_mut().filter(|(s, spec)| further(s.id) && !keeps(spec)).for_each(|(s, _)| s.reads = None);
    }
    Ok(())
}

/// Each slot's place among its unit's layouts: a unit's layouts are consecutive slots
/// numbered from 0, every one past the first a further layout that takes only workloads
/// whose chunks stand alone (it times some of them, its first the rest and every chunk of
/// the others).
fn members(specs: &[SlotSpec]) -> Result<Vec<paired::Member>> {
    let mut members: Vec<paired::Member> = Vec::with_capacity(specs.len());
    let walks = |s: &SlotSpec| s.workloads.iter().any(|w| !w.chunks_stand_alone());
    for (k, s) in specs.iter().enumerate() {
        let follows = k > 0 && specs[k - 1].layout + 1 == s.layout;
        if s.layout > 0 && !follows {
            bail!(
                "slot {k} is layout {} of its unit, but the slot before it is not its layout {}",
                s.layout,
                s.layout - 1
            );
        }
        if s.layout > 0 && walks(s) {
            let names: Vec<&str> = s.workloads.iter().map(|w| w.name()).collect();
            bail!(
                "slot {k} is a further layout of its unit and takes only the chunks that stand alone \
                 (readKey, readSeq, readRev), not {}",
                names.join(",")
            );
        }
        members.push(paired::Member { index: s.layout as usize, of: 1 });
    }
    // Each group's size, from its last member back to its first.
    for k in (0..members.len()).rev() {
        let of = members.get(k + 1).filter(|next| next.index > 0).map_or(members[k].index + 1, |next| next.of);
        members[k].of = of;
    }
    Ok(members)
}

/// How often a chunked pass tells the watchdog it is alive: far inside its least limit
/// (`--watchdog`'s floor, 60 s unless set), and rare enough to cost nothing. Each line wakes
/// two of the coordinator's threads; once per round of chunks (every 10–40 ms with 17
/// units), that was work on the other core beside the next timed chunk, and on a loaded
/// machine a hand-over of this worker's core to another task between chunks
/// (reports/README.md, "Where a round's time goes").
const SIGN_OF_LIFE_EVERY: Duration = Duration::from_secs(1);

/// The worker's sign of life between chunks, at most once every `every`.
struct SignOfLife {
    every: Duration,
    last: Cell<Instant>,
}

impl SignOfLife {
    fn new(every: Duration) -> SignOfLife {
        SignOfLife { every, last: Cell::new(Instant::now()) }
    }

    /// Speaks if its last line is `every` old.
    fn between_chunks(&self) {
        if self.due() {
            emit(&WorkerLine { progress: true, ..Default::default() });
        }
    }

    /// Whether the last line is `every` old; if so, the next is due `every` from now.
    fn due(&self) -> bool {
        let due = self.last.get().elapsed() >= self.every;
        if due {
            self.last.set(Instant::now());
        }
        due
    }
}

/// Readers beside a writer: each workload's passes, every slot's crew taking its interval
/// in turn (`presets::concurrency`), one line per slot and workload.
fn crews(
    args: &PairedWorkerArgs,
    cfg: &crate::workload::WorkloadConfig,
    workloads: &[Workload],
    specs: &[SlotSpec],
    loaded: &[Result<(File, Api), String>],
) -> Result<()> {
    use crate::workload::presets::concurrency::{side_by_side, Member};
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.rotation_seed);
    let live: Vec<usize> = (0..loaded.len()).filter(|k| loaded[*k].is_ok()).collect();
    let members: Vec<Member> = live
        .iter()
        .map(|&k| Member { api: &loaded[k].as_ref().expect("live").1, slot: k, readers: specs[k].readers.unwrap_or(1) })
        .collect();
    let mut procs = match cfg.preset.reader_procs {
        true => Some(reader_procs(args, members.iter().map(|m| m.readers).max().unwrap_or(0))?),
        false => None,
    };
    for &w in workloads {
        let Workload::Preset(p) = w else { bail!("{w} is not a workload of readers beside a writer") };
        for (k, l) in loaded.iter().enumerate() {
            if let Err(e) = l {
                emit(&WorkerLine {
                    slot: Some(k as u32),
                    ..line(w, Err(format!("refusing to load the library: {e}")))
                });
            }
        }
        let progress = || emit(&WorkerLine { progress: true, ..Default::default() });
        let place = (args.scratch.as_path(), procs.as_mut());
        let outcomes = side_by_side(&members, cfg, place, (p, args.iterations), &mut rng, progress);
        for (k, o) in live.iter().zip(outcomes) {
            emit(&WorkerLine { slot: Some(*k as u32), ..line(w, o) });
        }
    }
    Ok(())
}

/// `count` reader processes (`--reader-procs`), started before any pass: this executable
/// as `reader-proc`, each loading the slots this worker loaded.
fn reader_procs(args: &PairedWorkerArgs, count: u32) -> Result<ReaderProcs> {
    let exe = std::env::current_exe().context("cannot find this executable to start reader processes")?;
    ReaderProcs::start(count, &args.scratch, |k, board| {
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("reader-proc").arg("--slots").arg(&args.slots).arg("--board").arg(board);
        cmd.args(["--index", &k.to_string()]);
        cmd
    })
}

/// A reader process of a paired worker (`--reader-procs`, `workload::reader_procs`).
#[derive(clap::Args, Debug)]
pub struct ReaderProcArgs {
    /// The paired worker's slots file: the libraries to load, each as the worker did.
    #[arg(long)]
    pub slots: PathBuf,
    /// The file holding the board it shares with the worker's writer.
    #[arg(long)]
    pub board: PathBuf,
    /// Which reader thread of each crew it stands for (0 the first).
    #[arg(long)]
    pub index: usize,
}

/// A reader process: loads every slot's library as the paired worker did, then obeys the
/// worker's orders on stdin until they end. A library that does not load is a slot the
/// worker does not run either.
pub fn reader_main(args: ReaderProcArgs) -> Result<()> {
    crate::workload::malloc::keep_freed()?;
    let text = std::fs::read_to_string(&args.slots).with_context(|| format!("cannot read {}", args.slots.display()))?;
    let specs: Vec<SlotSpec> = text.lines().map(SlotSpec::parse).collect::<Result<_>>()?;
    let mut seen = BTreeSet::new();
    let loaded: Vec<Option<(File, Api)>> = specs.iter().map(|s| load(s, &mut seen).ok()).collect();
    let apis: Vec<Option<&Api>> = loaded.iter().map(|l| l.as_ref().map(|(_, api)| api)).collect();
    let board = File::options().read(true).write(true).open(&args.board)?;
    let board = std::sync::Arc::new(SharedBoard::of(&board)?);
    let stdin = std::io::stdin().lock();
    crate::workload::reader_procs::serve(&apis, board, args.index, stdin, std::io::stdout().lock())
}

/// Loads the library's verified bytes: the open file that was hashed, or, for a second
/// slot of a file already loaded (the dynamic loader shares one object per file), a private
/// copy of its bytes, hashed as they are copied, so every slot has an object of its own.
fn load(s: &SlotSpec, seen: &mut BTreeSet<(u64, u64)>) -> Result<(File, Api)> {
    use std::os::unix::fs::MetadataExt;
    let verified = crate::artifact::open_verified(&s.library, &s.sha256)?;
    let file = File::open(verified.load_path())?;
    let meta = file.metadata()?;
    let file = match seen.insert((meta.dev(), meta.ino())) {
        true => file,
        false => private_copy(file, s)?,
    };
    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let api = Api::load(&path).with_context(|| format!("cannot load {}", s.library.display()))?;
    let (.., reported) = api.version();
    if reported != s.version {
        bail!("{}: it reports {reported:?}, but the run records {:?} for it", s.library.display(), s.version);
    }
    Ok((file, api))
}

fn private_copy(mut file: File, s: &SlotSpec) -> Result<File> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let found = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    if found != s.sha256 {
        bail!("{} changed while it was copied (SHA-256 {found}, recorded {})", s.library.display(), s.sha256);
    }
    let mut copy = memfd(&s.library)?;
    copy.write_all(&bytes).with_context(|| format!("cannot copy {}", s.library.display()))?;
    Ok(copy)
}

/// An anonymous in-memory file named after `library`.
fn memfd(library: &Path) -> Result<File> {
    let name = std::ffi::CString::new("lmdb-regress-slot").expect("no NUL");
    // SAFETY: memfd_create with a valid name; the descriptor is owned by the File.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()).with_context(|| format!("cannot copy {}", library.display()));
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// On a fatal signal (or the watchdog's SIGTERM) inside a chunk, prints which slot was
/// running, as a line the runner reads, then lets the signal take its default course.
fn report_crashes() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(SigHandler::Handler(on_fatal), SaFlags::SA_RESETHAND, SigSet::empty());
    // SIGTERM is the watchdog's: a stalled slot is named as a crashed one is.
    for sig in [Signal::SIGSEGV, Signal::SIGBUS, Signal::SIGILL, Signal::SIGFPE, Signal::SIGABRT, Signal::SIGTERM] {
        // SAFETY: the handler only reads an atomic and calls write(2).
        let _ = unsafe { sigaction(sig, &action) };
    }
}

extern "C" fn on_fatal(sig: libc::c_int) {
    let k = paired::RUNNING.load(std::sync::atomic::Ordering::Relaxed);
    if k != usize::MAX {
        name_slot(k);
    }
    // The handler is reset: raised again, the signal kills the process once this returns
    // (SIGTERM would otherwise return into the stalled chunk).
    // SAFETY: raise(3) is async-signal-safe.
    unsafe { libc::raise(sig) };
}

/// Prints `{"crashed":k}` without allocating.
fn name_slot(k: usize) {
    // No allocation in a signal handler: the digits are written into a stack buffer.
    let mut digits = [0u8; 20];
    let (mut n, mut at) = (k, digits.len());
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for part in [&b"\n{\"crashed\":"[..], &digits[at..], &b"}\n"[..]] {
        // SAFETY: write(2) is async-signal-safe; the bytes live on this stack or are static.
        unsafe { libc::write(1, part.as_ptr().cast(), part.len()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sign_of_life_is_due_once_its_interval_has_passed() {
        let hourly = SignOfLife::new(Duration::from_secs(3600));
        assert!((0..1000).all(|_| !hourly.due()), "never between chunks within its interval");
        let always = SignOfLife::new(Duration::ZERO);
        assert!(always.due() && always.due(), "every time when the interval is zero");
    }

    fn slot(workloads: &str, layout: u32) -> SlotSpec {
        let line = format!("lib.so\t0\tLMDB\tdb\t{workloads}\t-\t{layout}");
        SlotSpec::parse(&line).unwrap()
    }

    /// Units of three, one and two layouts: each further layout takes the workloads whose
    /// chunks stand alone; a checksum's walk there, or a layout whose slot does not follow
    /// its unit's layout before, is refused.
    #[test]
    fn a_further_layout_takes_only_the_chunks_that_stand_alone() {
        let good = [slot("readKey,write", 0), slot("readKey", 1), slot("readKey", 2), slot("write", 0)];
        let good = [&good[..], &[slot("readSeq,readCrc", 0), slot("readSeq,readRev", 1)]].concat();
        let got: Vec<(usize, usize)> = members(&good).unwrap().iter().map(|m| (m.index, m.of)).collect();
        assert_eq!(got, [(0, 3), (1, 3), (2, 3), (0, 1), (0, 2), (1, 2)]);
        let walk = [slot("readKey,readCrc", 0), slot("readKey,readCrc", 1)];
        let e = members(&walk).unwrap_err().to_string();
        assert!(e.contains("slot 1") && e.contains("readCrc"), "{e}");
        let gap = [slot("readKey", 0), slot("readKey", 2)];
        assert!(members(&gap).unwrap_err().to_string().contains("slot 1"));
        assert!(members(&walk[..1]).is_ok(), "one layout a unit takes anything");
    }

    #[test]
    fn a_slot_line_carries_readers_and_its_layout_when_it_has_them() {
        for (readers, layout) in [(None, 0), (Some(4), 0), (None, 3), (Some(2), 1)] {
            let s = SlotSpec { readers, layout, ..slot("readKey", 0) };
            let line = s.line().unwrap();
            assert_eq!(
                line.matches('\t').count(),
                4 + usize::from(readers.is_some() || layout > 0) + usize::from(layout > 0)
            );
            assert_eq!(SlotSpec::parse(line.trim_end()).unwrap(), s);
        }
    }
}
