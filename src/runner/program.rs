//! Programs as workloads (`run --program FILE.c`): each compiled once per build against
//! that build's lmdb.h and shared library, with its compiler and flags (cached by the
//! program's SHA-256, the build's id and the toolchain), then run whole, one process per
//! sample, in a fresh empty folder as its working directory. What is timed is the process
//! from its start to its exit, and nothing else.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use super::counter::{self, Counter};
use super::metric::Counts;
use super::runfile::{Figure, ProgramRecord, Record, Sample};
use super::unit::CompiledProgram;
use super::{sanitize, RunSpec, Unit};
use crate::compile::BuildRecord;
use crate::workload::program::ProgramName;
use crate::workload::Workload;

/// How compiled programs are made, part of every cache key: a change here compiles anew.
const RECIPE: &str = "program 1: cc CFLAGS-without--shared -I build/src -o NAME NAME.c -L build -llmdb";

/// The default limit of one run of a program (`--program-timeout`).
pub const DEFAULT_TIMEOUT_S: f64 = 300.0;

/// A program's record for a run: its workload's name from the file, its source's SHA-256;
/// `figure`, when the samples take a figure it prints, its pattern checked.
pub fn record(source: &Path, args: Vec<String>, timeout_s: f64, figure: Option<Figure>) -> Result<ProgramRecord> {
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
    Ok(ProgramRecord { name, source, sha256, args, timeout_s, figure })
}

/// The SHA-256 of a program's source as it is now.
pub fn source_sha256(source: &Path) -> Result<String> {
    let bytes = std::fs::read(source).with_context(|| format!("cannot read the program {}", source.display()))?;
    Ok(hex::encode(Sha256::digest(bytes)))
}

/// The workload a program record measures.
pub fn workload_of(p: &ProgramRecord) -> Workload {
    Workload::Program(ProgramName::intern(&p.name))
}

/// `p` compiled against `build` (a shared library's), from the cache in `dir` when it was
/// compiled before from the same source, build and toolchain. Err holds the compiler's
/// message when the program does not compile against the build.
pub fn compile(p: &ProgramRecord, build: &BuildRecord, dir: &Path) -> Result<CompiledProgram> {
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
    let recorded = folder.join("sha256");
    if let Ok(sha) = std::fs::read_to_string(&recorded) {
        if crate::artifact::verify(&exe, sha.trim()).is_ok() {
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
enum Ended {
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
            Record::Failure(self.failure(u, Some(w), "run", error).in_round(round))
        };
        let ran = self.run_once(u, compiled, p, scratch);
        if super::interrupted() {
            return None;
        }
        match ran {
            Err(e) => Some(failure(format!("{e:#}"))),
            Ok((Ended::TimedOut, output)) => {
                Some(failure(format!("it ran beyond {} s and was killed{}", p.timeout_s, tail(&output))))
            }
            Ok((Ended::Exited(status, _), output)) if !status.success() => {
                Some(failure(format!("it {}{}", crate::mtest::how_it_ended(status), tail(&output))))
            }
            Ok((Ended::Exited(_, took), output)) => {
                let ns = match &p.figure {
                    Some(f) if output.counts.is_none() => match printed(f, &output) {
                        Ok(ns) => ns,
                        Err(e) => return Some(failure(e)),
                    },
                    _ => took.as_nanos() as u64,
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
            tag: u.label.to_string(),
            workload: w,
            ns,
            counts,
            checksum: None,
            counted,
            // A run is one operation: its counts are per run.
            figures: crate::workload::measure::Figures { ops: Some(1), ..Default::default() },
            layout: u.layout.as_ref().map(|l| l.seed),
            chunks_ns: Vec::new(),
            space: None,
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
    ) -> Result<(Ended, Output)> {
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
        let ended = timed(&mut cmd, Duration::from_secs_f64(p.timeout_s))
            .with_context(|| format!("cannot start {}", compiled.exe.display()))?;
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let counts = counter.map(|_| counter::callgrind_total(&profile).map_err(|e| format!("{e:#}")));
        Ok((ended, Output { stdout: read(&out_path), stderr: read(&err_path), counts }))
    }
}

/// Starts `cmd` and waits for it, timing exactly that; a watchdog thread (started before
/// the clock) kills it once it has run `limit`.
fn timed(cmd: &mut Command, limit: Duration) -> std::io::Result<Ended> {
    let (pid_tx, pid_rx) = mpsc::channel::<Option<i32>>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let Ok(Some(pid)) = pid_rx.recv() else { return false };
        match done_rx.recv_timeout(limit) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // SAFETY: signals our own child, not yet reaped (the waiter waits for it).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                true
            }
            _ => false,
        }
    });
    let start = Instant::now();
    let mut child = match crate::children::spawn(cmd) {
        Ok(c) => c,
        Err(e) => {
            let _ = pid_tx.send(None);
            let _ = watchdog.join();
            return Err(e);
        }
    };
    let _ = pid_tx.send(Some(child.id() as i32));
    let status = child.wait();
    let took = start.elapsed();
    let _ = done_tx.send(());
    let killed = watchdog.join().unwrap_or(false);
    let status = status?;
    Ok(if killed { Ended::TimedOut } else { Ended::Exited(status, took) })
}

/// What a program printed.
struct Output {
    stdout: String,
    stderr: String,
    /// Under callgrind: the whole process's counts, or why there are none.
    counts: Option<Result<Counts, String>>,
}

/// The figure `f` takes from a program's standard output, in nanoseconds: its pattern's
/// first group in the last line that matches.
fn printed(f: &Figure, output: &Output) -> Result<u64, String> {
    let re = regex::Regex::new(&f.pattern).map_err(|e| format!("{e}"))?;
    let what = format!("--program-figure {:?}", f.pattern);
    let Some(caps) = output.stdout.lines().rev().find_map(|l| re.captures(l)) else {
        return Err(format!("no line of its output matches {what}{}", tail(output)));
    };
    let text = caps.get(1).map_or("", |m| m.as_str());
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok((v * f.unit.ns()).round() as u64),
        _ => Err(format!("{what} took {text:?} from its output, which is no number of {}", f.unit.name())),
    }
}

/// The last lines a program printed (its standard error's, else its output's), as a
/// failure quotes them.
fn tail(output: &Output) -> String {
    let text = if output.stderr.trim().is_empty() { &output.stdout } else { &output.stderr };
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    match lines.is_empty() {
        true => String::new(),
        false => format!(": {}", lines.into_iter().rev().collect::<Vec<_>>().join(" | ")),
    }
}

/// Where a cache's compiled programs are kept: `programs/` beside its `builds/` (whose every
/// folder is a build or a build's objects).
pub fn cache_dir(cache_root: &Path) -> PathBuf {
    cache_root.join("programs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::runfile::FigureUnit;

    #[test]
    fn a_printed_figure_is_the_last_match_in_its_unit() {
        let f = Figure { pattern: r"in ([0-9.]+) ?sec".into(), unit: FigureUnit::Ms };
        let out = |s: &str| Output { stdout: s.into(), stderr: String::new(), counts: None };
        assert_eq!(printed(&f, &out("warm-up in 9 sec\nput 10 in 1.5 sec\n")), Ok(1_500_000));
        assert!(printed(&f, &out("done\n")).unwrap_err().contains("no line of its output matches"));
        let dots = Figure { pattern: r"in ([0-9.]+)".into(), unit: FigureUnit::S };
        assert!(printed(&dots, &out("in 1.2.3\n")).unwrap_err().contains("no number of s"));
    }

    #[test]
    fn a_hang_is_killed_at_its_limit_and_an_exit_is_timed() {
        let ended = timed(Command::new("sleep").arg("5"), Duration::from_millis(200)).unwrap();
        assert!(matches!(ended, Ended::TimedOut));
        let Ended::Exited(status, took) = timed(&mut Command::new("true"), Duration::from_secs(5)).unwrap() else {
            panic!("true ran to its end")
        };
        assert!(status.success() && took < Duration::from_secs(5));
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
