//! Programs as workloads (`run --program FILE.c`): each compiled once per build against
//! that build's lmdb.h and shared library, with its compiler and flags (cached by the
//! program's SHA-256, the build's id and the toolchain), then run whole, one process per
//! sample, in a fresh empty folder as its working directory. What is timed is the process
//! from its start to its exit, and nothing else.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use super::counter::{self, Counter};
use super::unit::CompiledProgram;
use super::{sanitize, RunSpec, Unit};
use crate::compile::BuildRecord;
use crate::record::metric::Counts;
use crate::record::{FailureStage, Figure, Label, ProgramRecord, Record, Sample};
use crate::workload::program::ProgramName;
use crate::workload::Workload;

/// How compiled programs are made, part of every cache key: a change here compiles anew.
const RECIPE: &str = "program 1: cc CFLAGS-without--shared -I build/src -o NAME NAME.c -L build -llmdb";

/// The default limit of one run of a program (`--program-timeout`).
pub const DEFAULT_TIMEOUT_S: f64 = 300.0;

/// The longest limit a run of a program may have: a week.
const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

/// The largest figure a program may print, in ns: 30 days, beyond any run of one.
const MAX_FIGURE_NS: f64 = 30.0 * 24.0 * 3600.0 * 1e9;

/// What is kept of each line a program prints (to match its figure, to quote it).
const LINE_BYTES: usize = 64 * 1024;

/// What a failure quotes of each of a program's last lines, in characters.
const QUOTED_CHARS: usize = 200;

/// The environment variable that marks every process of one sample, so that what a
/// program started and set apart (a daemon in a session of its own) is found and killed.
const MARKER: &str = "LMDB_REGRESS_SAMPLE";

/// A limit of `--program-timeout` as a duration: above 0 and at most a week; refused with
/// the value given, before anything is run.
pub fn timeout(seconds: f64) -> Result<Duration> {
    match Duration::try_from_secs_f64(seconds) {
        Ok(d) if !d.is_zero() && seconds <= MAX_TIMEOUT_S => Ok(d),
        _ => {
            bail!("--program-timeout {seconds} is not a number of seconds above 0 and at most {MAX_TIMEOUT_S} (a week)")
        }
    }
}

/// A program's record for a run: its workload's name from the file, its source's SHA-256;
/// `figure`, when the samples take a figure it prints, its pattern checked.
pub fn record(source: &Path, args: Vec<String>, timeout_s: f64, figure: Option<Figure>) -> Result<ProgramRecord> {
    timeout(timeout_s)?;
    if let Some(f) = &figure {
        let re = regex::Regex::new(&f.pattern)
            .with_context(|| format!("--program-figure {:?} is not a regular expression", f.pattern))?;
        if re.captures_len() < 2 {
            bail!("--program-figure {:?}: give the figure as a group, as in 'in ([0-9.]+) s'", f.pattern);
        }
    }
    let name = ProgramName::of_file(source)?;
    if Workload::built_in(&name).is_some() {
        bail!(
            "--program {}: its workload would be named {name}, which is a built-in workload's name: rename the file",
            source.display()
        );
    }
    let sha256 = source_sha256(source)?;
    let source = std::path::absolute(source).unwrap_or_else(|_| source.to_path_buf());
    Ok(ProgramRecord { name, source, sha256, args, timeout_s, figure, compiled: Default::default() })
}

/// The SHA-256 of a program's source as it is now.
pub fn source_sha256(source: &Path) -> Result<String> {
    let bytes = std::fs::read(source).with_context(|| format!("cannot read the program {}", source.display()))?;
    Ok(hex::encode(Sha256::digest(bytes)))
}

/// The label of the build a unit's programs are compiled against: its own, of no layout
/// and no control.
pub fn build_label(u: &Unit) -> Label {
    u.label.built()
}

/// `programs` with the SHA-256 of each as compiled for `units`, by their builds' labels,
/// recorded beside what they held.
pub fn with_compiled(programs: &[ProgramRecord], units: &[Unit]) -> Vec<ProgramRecord> {
    let mut programs = programs.to_vec();
    for p in &mut programs {
        for u in units {
            if let Some(c) = u.programs.get(&workload_of(p)) {
                p.compiled.insert(build_label(u), c.sha256.clone());
            }
        }
    }
    programs
}

/// The workload a program record measures.
pub fn workload_of(p: &ProgramRecord) -> Workload {
    Workload::Program(ProgramName::intern(&p.name))
}

/// `p` compiled against `build` (a shared library's), from the cache in `dir` when it was
/// compiled before from the same source, build and toolchain (and, when the run records
/// it, to the same SHA-256: else it is compiled again). Err holds the compiler's message
/// when the program does not compile against the build, or says that the program compiled
/// is not the one the run records.
pub fn compile(p: &ProgramRecord, (label, build): (&Label, &BuildRecord), dir: &Path) -> Result<CompiledProgram> {
    let recorded = p.compiled.get(label).map(String::as_str);
    let compiled = cached_or_compiled(p, build, dir, recorded)?;
    match recorded {
        Some(recorded) if *recorded != compiled.sha256 => bail!(
            "{}.c compiled against {} is now {} (SHA-256 {}), but the run file records SHA-256 {recorded} for it: \
             not the program that was measured",
            p.name,
            label,
            compiled.exe.display(),
            compiled.sha256
        ),
        _ => Ok(compiled),
    }
}

fn cached_or_compiled(
    p: &ProgramRecord,
    build: &BuildRecord,
    dir: &Path,
    recorded: Option<&str>,
) -> Result<CompiledProgram> {
    let source = std::fs::read(&p.source).with_context(|| format!("cannot read the program {}", p.source.display()))?;
    let now = hex::encode(Sha256::digest(&source));
    if now != p.sha256 {
        bail!("{} has SHA-256 {now} now, but the run records {} for it", p.source.display(), p.sha256);
    }
    let tc = &build.toolchain;
    let mut key = Sha256::new();
    key.update(format!("{RECIPE}\n{}\n{}\n{}\n{}\n", p.sha256, build.build_id, tc.compiler.display(), tc.version));
    tc.cflags.iter().for_each(|f| key.update(format!("{f}\0")));
    let key = &hex::encode(key.finalize())[..16];
    let folder = dir.join(format!("{}-{key}", sanitize(&p.name)));
    let exe = folder.join(&p.name);
    if let Ok(sha) = std::fs::read_to_string(folder.join("sha256")) {
        if recorded.is_none_or(|r| r == sha.trim()) && crate::artifact::verify(&exe, sha.trim()).is_ok() {
            return Ok(CompiledProgram { exe, sha256: sha.trim().to_string() });
        }
    }
    let library_dir = build.artifact.parent().context("a build's library has no folder")?;
    let include = library_dir.join(crate::stage::SRC);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let staging = tempfile::tempdir_in(dir).with_context(|| format!("cannot write in {}", dir.display()))?;
    let c_file = staging.path().join(format!("{}.c", p.name));
    std::fs::write(&c_file, &source)?;
    let mut cmd = Command::new(&tc.compiler);
    cmd.current_dir(staging.path())
        .args(tc.cflags.iter().filter(|f| f.as_str() != "-shared"))
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&p.name)
        .arg(&c_file)
        .arg("-L")
        .arg(library_dir)
        .arg("-llmdb");
    let out = crate::children::output(&mut cmd).with_context(|| format!("cannot run {}", tc.compiler.display()))?;
    if !out.status.success() {
        bail!(
            "{}.c does not compile against {} ({}):\n{}",
            p.name,
            build.label,
            tc.name(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    // What the compiler read must be the program the run records.
    if hex::encode(Sha256::digest(std::fs::read(&c_file)?)) != p.sha256 {
        bail!("{} changed while it was compiled", c_file.display());
    }
    let sha256 = crate::artifact::sha256(&staging.path().join(&p.name))?;
    std::fs::write(staging.path().join("sha256"), format!("{sha256}\n"))?;
    let _ = std::fs::remove_dir_all(&folder);
    let staged = staging.keep();
    std::fs::rename(&staged, &folder).with_context(|| format!("cannot install {}", folder.display()))?;
    Ok(CompiledProgram { exe, sha256 })
}

/// How one run of a program ended.
enum ProgramEnd {
    Exited(ExitStatus, Duration),
    TimedOut,
}

impl RunSpec {
    /// The record of a program workload `w`.
    fn program_record(&self, w: Workload) -> Option<&ProgramRecord> {
        self.plan.programs.iter().find(|p| p.name == w.name())
    }

    /// One sample of the program `w` on `u` in `round`: its sample, or its failure naming
    /// the unit and the sample. None for a program that did not compile against `u` (its
    /// failure is recorded already) or after Ctrl-C.
    pub(super) fn run_program(
        &self,
        u: &Unit,
        w: Workload,
        (round, counted): (u32, bool),
        scratch: &Path,
    ) -> Option<Record> {
        let (compiled, p) = (u.programs.get(&w)?, self.program_record(w)?);
        let sample = format!("the sample of round {}", round + 1);
        let failure = |error: String| {
            let error = format!("{w} on {} failed in {sample}: {error}", u.label);
            Record::Failure(self.failure(u, Some(w), FailureStage::Run, error).in_round(round))
        };
        let ran = self.run_once(u, compiled, p, scratch);
        if super::interrupted() {
            return None;
        }
        match ran {
            Err(e) => Some(failure(format!("{e:#}"))),
            Ok((ProgramEnd::TimedOut, output)) => {
                Some(failure(format!("it ran beyond {} s and was killed{}", p.timeout_s, tail(&output))))
            }
            Ok((ProgramEnd::Exited(status, _), output)) if !status.success() => {
                Some(failure(format!("it {}{}", crate::mtest::how_it_ended(status), tail(&output))))
            }
            Ok((ProgramEnd::Exited(_, took), output)) => {
                let ns = match &p.figure {
                    Some(f) if output.counts.is_none() => printed(f, &output),
                    _ => whole_ns(took.as_nanos() as f64, "its run's time"),
                };
                let ns = match ns {
                    Ok(ns) => ns,
                    Err(e) => return Some(failure(e)),
                };
                let counts = match output.counts {
                    None => Default::default(),
                    Some(Ok(c)) => c,
                    Some(Err(e)) => return Some(failure(e)),
                };
                Some(self.program_sample(u, w, (round, counted), ns, counts))
            }
        }
    }

    /// The counts of one more run of the program `w` on `u` (the determinism check).
    pub(super) fn count_program(&self, u: &Unit, w: Workload, scratch: &Path) -> Result<Counts, String> {
        match self.run_program(u, w, (0, true), scratch) {
            Some(Record::Sample(s)) => Ok(s.counts),
            Some(Record::Failure(f)) => Err(f.error),
            _ => Err(format!("{w} on {} was not counted", u.label)),
        }
    }

    fn program_sample(&self, u: &Unit, w: Workload, (round, counted): (u32, bool), ns: u64, counts: Counts) -> Record {
        Record::Sample(Sample {
            round,
            engine: u.engine,
            unit: u.label.clone(),
            workload: w,
            ns,
            counts,
            checksum: None,
            counted,
            // A run is one operation: its counts are per run.
            figures: crate::workload::measure::Figures { ops: Some(1), ..Default::default() },
            layout: u.layout.as_ref().map(|l| l.seed),
            harness: None,
            chunks_ns: Vec::new(),
            space: None,
            io: None,
            major_faults: None,
        })
    }

    /// Runs the program once in a fresh folder of its own, loading `u`'s library (its
    /// layout's, with random layouts) through a folder that holds it alone as liblmdb.so;
    /// times it from its start to its exit. Returns how it ended and its output.
    fn run_once(
        &self,
        u: &Unit,
        compiled: &CompiledProgram,
        p: &ProgramRecord,
        scratch: &Path,
    ) -> Result<(ProgramEnd, ProgramOutput)> {
        let library = u.library.as_deref().context("a program needs a unit that loads a shared library")?;
        let sample = tempfile::Builder::new()
            .prefix(&format!("program-{}-", sanitize(&p.name)))
            .tempdir_in(scratch)
            .context("cannot make the sample's folder")?;
        let (lib, work) = (sample.path().join("lib"), sample.path().join("work"));
        std::fs::create_dir(&lib)?;
        std::fs::create_dir(&work)?;
        std::os::unix::fs::symlink(library, lib.join("liblmdb.so"))?;
        let (out_path, err_path) = (sample.path().join("stdout"), sample.path().join("stderr"));
        let (out, err) = (std::fs::File::create(&out_path)?, std::fs::File::create(&err_path)?);
        // What runs and what it loads are what the run records.
        crate::artifact::verify(&compiled.exe, &compiled.sha256).context("refusing to start the program")?;
        crate::artifact::verify(library, &u.sha256).context("refusing to load the library")?;
        // Counted: under callgrind, the whole process (perf counts only inside the Rust worker).
        let counter = self.counter.as_ref().map(|c| c.for_c());
        let profile = sample.path().join("callgrind.out");
        let mut cmd = match &counter {
            Some(Counter::Callgrind { caches, .. }) => {
                counter::whole_process_command(&compiled.exe, &p.args, &profile, caches.as_ref())
            }
            _ => Command::new(&compiled.exe),
        };
        if counter.is_none() {
            cmd.args(&p.args);
        }
        cmd.current_dir(&work).env("LD_LIBRARY_PATH", &lib).stdin(Stdio::null()).stdout(out).stderr(err);
        let ended = timed(&mut cmd, timeout(p.timeout_s)?, super::interrupted)
            .with_context(|| format!("cannot start {}", compiled.exe.display()))?;
        let pattern = match &p.figure {
            Some(f) => Some(regex::Regex::new(&f.pattern)?),
            None => None,
        };
        let read = |path: &Path, re| std::fs::File::open(path).map(|f| Printed::read(f, re)).unwrap_or_default();
        let (stdout, stderr) = (read(&out_path, pattern.as_ref()), read(&err_path, None));
        let counts = counter.map(|_| counter::callgrind_total(&profile).map_err(|e| format!("{e:#}")));
        Ok((ended, ProgramOutput { stdout, stderr, counts }))
    }
}

/// Starts `cmd` as the leader of a process group of its own and waits for it, timing
/// exactly that; a watchdog thread (started before the clock) kills the whole group once
/// it has run `limit`, or at once when `stop` (Ctrl-C) holds. Once the program has ended,
/// whatever it started is killed too: its group, and every process carrying the sample's
/// mark in its environment (one that left the group for a session of its own).
fn timed(cmd: &mut Command, limit: Duration, stop: fn() -> bool) -> std::io::Result<ProgramEnd> {
    static SAMPLES: AtomicU64 = AtomicU64::new(0);
    // Of one length for every sample: what the program's environment holds does not vary.
    let mark = format!("{:010}-{:020}", std::process::id(), SAMPLES.fetch_add(1, Ordering::Relaxed));
    cmd.env(MARKER, &mark);
    let (pid_tx, pid_rx) = mpsc::channel::<Option<i32>>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let Ok(Some(pid)) = pid_rx.recv() else { return false };
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Err(mpsc::RecvTimeoutError::Timeout) if left.is_zero() || stop() => {
                    // SAFETY: signals our own child's group; the child is not reaped yet (it
                    // is reaped only once this thread has ended), so the group is still ours.
                    unsafe { libc::killpg(pid, libc::SIGKILL) };
                    return true;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => return false,
            }
        }
    });
    let start = Instant::now();
    let mut child = match crate::children::spawn_group_leader(cmd) {
        Ok(c) => c,
        Err(e) => {
            let _ = pid_tx.send(None);
            let _ = watchdog.join();
            return Err(e);
        }
    };
    let pid = child.id() as i32;
    let _ = pid_tx.send(Some(pid));
    let exited = wait_unreaped(pid);
    let took = start.elapsed();
    let _ = done_tx.send(());
    let killed = watchdog.join().unwrap_or(false);
    // SAFETY: the group's leader is our child, still unreaped: the group is ours to kill.
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    kill_marked(&format!("{MARKER}={mark}"));
    let status = child.wait();
    exited?;
    let status = status?;
    Ok(if killed { ProgramEnd::TimedOut } else { ProgramEnd::Exited(status, took) })
}

/// Waits for the child `pid` to end without reaping it, so that its process group (which
/// it leads) cannot pass to another process before it is killed.
fn wait_unreaped(pid: i32) -> std::io::Result<()> {
    loop {
        // SAFETY: a zeroed siginfo_t is valid for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child; WNOWAIT leaves it to be reaped by Child::wait.
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        match rc {
            0 => return Ok(()),
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => continue,
            _ => return Err(std::io::Error::last_os_error()),
        }
    }
}

/// Kills every process whose environment holds `marker`, again until none is left (a few
/// times at most: each may have forked once more meanwhile).
fn kill_marked(marker: &str) {
    for _ in 0..5 {
        let marked: Vec<i32> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                environ.split(|&b| b == 0).any(|v| v == marker.as_bytes())
            })
            .collect();
        if marked.is_empty() {
            return;
        }
        for pid in marked {
            // SAFETY: signals a process that carries this sample's mark: the program's own.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a program printed.
struct ProgramOutput {
    stdout: Printed,
    stderr: Printed,
    /// Under callgrind: the whole process's counts, or why there are none.
    counts: Option<Result<Counts, String>>,
}

/// What is kept of one of a program's outputs, read as a stream: its size, its last lines
/// (for a failure to quote; bytes that are not UTF-8 shown as U+FFFD), and the figure's
/// group in the last line that matches the figure's pattern. Every line is cut at
/// LINE_BYTES, so that no output, however large, is held whole.
#[derive(Default)]
struct Printed {
    bytes: u64,
    last: VecDeque<String>,
    /// Whether a line kept was cut.
    cut: bool,
    /// Whether a line it printed was not UTF-8 (its quote is then lossy).
    not_utf8: bool,
    figure: Option<String>,
}

impl Printed {
    /// The lines kept for a failure to quote.
    const LAST: usize = 3;

    fn read(r: impl Read, pattern: Option<&regex::Regex>) -> Printed {
        let mut printed = Printed::default();
        let mut r = BufReader::with_capacity(LINE_BYTES, r);
        let mut line: Vec<u8> = Vec::new();
        let mut cut = false;
        while let Some(buf) = r.fill_buf().ok().filter(|b| !b.is_empty()) {
            let newline = buf.iter().position(|&b| b == b'\n');
            let chunk = &buf[..newline.unwrap_or(buf.len())];
            let room = LINE_BYTES.saturating_sub(line.len());
            cut |= chunk.len() > room;
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = newline.map_or(buf.len(), |n| n + 1);
            r.consume(used);
            printed.bytes += used as u64;
            if newline.is_some() {
                printed.take(&line, std::mem::take(&mut cut), pattern);
                line.clear();
            }
        }
        if !line.is_empty() {
            printed.take(&line, cut, pattern);
        }
        printed
    }

    fn take(&mut self, line: &[u8], cut: bool, pattern: Option<&regex::Regex>) {
        let text = String::from_utf8_lossy(line);
        self.not_utf8 |= matches!(text, std::borrow::Cow::Owned(_));
        if let Some(caps) = pattern.and_then(|re| re.captures(&text)) {
            self.figure = Some(caps.get(1).map_or("", |m| m.as_str()).to_string());
        }
        if text.trim().is_empty() {
            return;
        }
        if self.last.len() == Self::LAST {
            self.last.pop_front();
        }
        let quoted: String = text.chars().take(QUOTED_CHARS).collect();
        self.cut |= cut || quoted.len() < text.len();
        self.last.push_back(quoted);
    }

    fn is_empty(&self) -> bool {
        self.last.is_empty()
    }
}

/// The figure `f` takes from a program's standard output, in nanoseconds: its pattern's
/// first group in the last line that matches.
fn printed(f: &Figure, output: &ProgramOutput) -> Result<u64, String> {
    let what = format!("--program-figure {:?}", f.pattern);
    let Some(text) = &output.stdout.figure else {
        let bytes = match output.stdout.not_utf8 {
            true => " (its output is not UTF-8: the pattern is matched, and the output quoted, with U+FFFD for each byte that is not)",
            false => "",
        };
        return Err(format!("no line of its output matches {what}{bytes}{}", tail(output)));
    };
    match text.trim().parse::<f64>() {
        Ok(v) => whole_ns(v * f.unit.ns(), &format!("{what} took {text:?} from its output, which")),
        _ => Err(format!("{what} took {text:?} from its output, which is no number of {}", f.unit.name())),
    }
}

/// A sample's time in whole nanoseconds, checked as it arrives: above 0 once rounded,
/// finite, and below MAX_FIGURE_NS; else why not, after `what` ("its run took").
fn whole_ns(ns: f64, what: &str) -> Result<u64, String> {
    match ns.round() {
        n if (1.0..=MAX_FIGURE_NS).contains(&n) => Ok(n as u64),
        n if n.is_finite() && n > MAX_FIGURE_NS => {
            Err(format!("{what} is {ns} ns, more than 30 days: no time a sample can take"))
        }
        _ => Err(format!("{what} is {ns} ns: a sample takes some time, above 0 ns")),
    }
}

/// The last lines a program printed (its standard error's, else its output's), as a
/// failure quotes them, saying when they are cut from a larger output.
fn tail(output: &ProgramOutput) -> String {
    let printed = if output.stderr.is_empty() { &output.stdout } else { &output.stderr };
    if printed.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = printed.last.iter().map(String::as_str).collect();
    let quoted: u64 = lines.iter().map(|l| l.len() as u64 + 1).sum();
    let cut = match printed.cut || printed.bytes > quoted.max(LINE_BYTES as u64) {
        true => format!(" (the end of {} bytes it printed, cut)", printed.bytes),
        false => String::new(),
    };
    let lossy = if printed.not_utf8 { " (not UTF-8, quoted lossily)" } else { "" };
    format!(": {}{cut}{lossy}", lines.join(" | "))
}

/// Where a cache's compiled programs are kept: `programs/` beside its `builds/` (whose every
/// folder is a build or a build's objects).
pub fn cache_dir(cache_root: &Path) -> PathBuf {
    cache_root.join("programs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::FigureUnit;

    fn out(s: &str, pattern: &str) -> ProgramOutput {
        let re = regex::Regex::new(pattern).unwrap();
        ProgramOutput { stdout: Printed::read(s.as_bytes(), Some(&re)), stderr: Printed::default(), counts: None }
    }

    #[test]
    fn a_printed_figure_is_the_last_match_in_its_unit() {
        let f = Figure { pattern: r"in ([0-9.]+) ?sec".into(), unit: FigureUnit::Ms };
        assert_eq!(printed(&f, &out("warm-up in 9 sec\nput 10 in 1.5 sec\n", &f.pattern)), Ok(1_500_000));
        assert!(printed(&f, &out("done\n", &f.pattern)).unwrap_err().contains("no line of its output matches"));
        let dots = Figure { pattern: r"in ([0-9.]+)".into(), unit: FigureUnit::S };
        assert!(printed(&dots, &out("in 1.2.3\n", &dots.pattern)).unwrap_err().contains("no number of s"));
    }

    #[test]
    fn a_figure_of_no_time_or_beyond_any_is_refused_as_it_arrives() {
        let f = Figure { pattern: r"took (\S+) s".into(), unit: FigureUnit::S };
        for (text, says) in [
            ("took 0 s", "above 0 ns"),
            ("took 0.0000000001 s", "above 0 ns"),
            ("took -3 s", "above 0 ns"),
            ("took NaN s", "above 0 ns"),
            ("took inf s", "above 0 ns"),
            ("took 1e20 s", "more than 30 days"),
        ] {
            let e = printed(&f, &out(text, &f.pattern)).unwrap_err();
            assert!(e.contains(says) && e.contains("--program-figure"), "{text}: {e}");
        }
        assert_eq!(printed(&f, &out("took 2 s", &f.pattern)), Ok(2_000_000_000));
    }

    #[test]
    fn output_is_read_as_a_stream_and_quoted_lossily_and_cut() {
        // A line far longer than what is kept, then lines that are not UTF-8.
        let mut text = vec![b'x'; 3 * LINE_BYTES];
        text.extend_from_slice(b"\nin 7 s\n\xff\xfe broken\nlast\n");
        let re = regex::Regex::new(r"in ([0-9]+) s").unwrap();
        let p = Printed::read(&text[..], Some(&re));
        assert_eq!(p.bytes, text.len() as u64);
        assert_eq!(p.figure.as_deref(), Some("7"));
        assert_eq!(p.last, ["in 7 s", "\u{fffd}\u{fffd} broken", "last"]);
        let output = ProgramOutput { stdout: Printed::default(), stderr: p, counts: None };
        let quoted = tail(&output);
        assert!(quoted.contains("\u{fffd}\u{fffd} broken | last") && quoted.contains("cut"), "{quoted}");
        assert!(quoted.ends_with("(not UTF-8, quoted lossily)"), "{quoted}");
        let long = Printed::read(&vec![b'y'; 2 * LINE_BYTES][..], None);
        assert!(long.cut && long.last[0].len() == QUOTED_CHARS, "one line, cut");
    }

    #[test]
    fn a_timeout_is_a_duration_of_at_most_a_week() {
        assert_eq!(timeout(2.5).unwrap(), Duration::from_millis(2500));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e20, MAX_TIMEOUT_S + 1.0] {
            let e = timeout(bad).unwrap_err().to_string();
            assert!(e.contains("--program-timeout") && e.contains("at most"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_hang_is_killed_at_its_limit_and_an_exit_is_timed() {
        let ended = timed(Command::new("sleep").arg("5"), Duration::from_millis(200), || false).unwrap();
        assert!(matches!(ended, ProgramEnd::TimedOut));
        let ProgramEnd::Exited(status, took) =
            timed(&mut Command::new("true"), Duration::from_secs(5), || false).unwrap()
        else {
            panic!("true ran to its end")
        };
        assert!(status.success() && took < Duration::from_secs(5));
    }

    #[test]
    fn what_a_program_started_is_killed_with_it_and_a_daemon_too() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // A child left in the group, and a daemon in a session of its own; then it exits.
        let script = format!(
            "sleep 60 & echo $! >> {p}; setsid sh -c 'echo $$ >> {p}; exec sleep 60' & sleep 0.3; exit 0",
            p = pids.display()
        );
        let ended = timed(Command::new("sh").args(["-c", &script]), Duration::from_secs(30), || false).unwrap();
        assert!(matches!(ended, ProgramEnd::Exited(s, _) if s.success()));
        let started: Vec<i32> =
            std::fs::read_to_string(&pids).unwrap().lines().map(|l| l.trim().parse().unwrap()).collect();
        assert_eq!(started.len(), 2);
        for pid in started {
            // Gone, or a zombie its new parent has yet to reap.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next();
            assert!(matches!(state, None | Some("Z") | Some("X")), "{pid} still runs: {stat}");
        }
    }

    #[test]
    fn a_built_in_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("write.c");
        std::fs::write(&file, "int main(void){return 0;}\n").unwrap();
        let err = record(&file, Vec::new(), 1.0, None).unwrap_err().to_string();
        assert!(err.contains("built-in workload"), "{err}");
    }
}
