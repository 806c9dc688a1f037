//! The one progress bar on stderr, for building and for measuring alike: drawn only on a
//! terminal, and never wider than [`crate::terminal::width`] allows (the current item is
//! cut to what is left of the line). Where stderr is no terminal (a CI log, `nohup`, a
//! pipe to `tee`), [`Log`] prints a plain line instead, at most every 30 seconds.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

use crate::terminal::{self, Stream};

/// What every bar and progress line of this process is part of, when a command runs
/// several jobs of one kind (`run --suite all`: the suite).
static HEADING: Mutex<Option<String>> = Mutex::new(None);

/// Heads every bar and progress line from now on with `heading` (None: none).
pub fn set_heading(heading: Option<String>) {
    *HEADING.lock().unwrap_or_else(|e| e.into_inner()) = heading;
}

/// `what`, headed as [`set_heading`] says.
fn headed(what: &str) -> String {
    match &*HEADING.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(h) => format!("{h}: {what}"),
        None => what.to_string(),
    }
}

/// A bar of `len` steps headed `what`, with the current item as its message.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let target = if terminal::is_terminal(Stream::Stderr) {
        ProgressDrawTarget::term_like(Box::new(Stderr(console::Term::stderr())))
    } else {
        ProgressDrawTarget::hidden()
    };
    styled(ProgressBar::with_draw_target(Some(len), target), &headed(what))
}

/// `bar` drawn on any terminal-like target (tests draw on one of fixed width).
pub fn styled(bar: ProgressBar, what: &str) -> ProgressBar {
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{what} [{{bar:16}}] {{pos}}/{{len}} {{elapsed}}, ETA {{eta}} {{wide_msg}}"
        ))
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}

/// stderr as indicatif draws on it, as wide as the terminal module says.
#[derive(Debug)]
struct Stderr(console::Term);

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        u16::try_from(terminal::width(Stream::Stderr)).unwrap_or(u16::MAX)
    }
    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }
    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }
    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }
    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }
    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }
    fn write_str(&self, s: &str) -> io::Result<()> {
        self.0.write_str(s)
    }
    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }
    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Seconds between two progress lines in a log, unless `LMDB_REGRESS_PROGRESS_INTERVAL`
/// says otherwise.
pub const LOG_INTERVAL: Duration = Duration::from_secs(30);

/// A long job's progress as plain lines on stderr when it is no terminal: one line at each
/// whole interval since the start (none in a job shorter than one), from a thread of its
/// own, so that a step that takes minutes still shows. The job says what it is doing; the
/// line adds the clock. On a terminal it prints nothing: the bar is there.
pub struct Log {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<JobState>,
    wake: Condvar,
}

/// What a long job is doing, as its progress line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobPhase {
    /// Writing the read databases and verifying what the workloads read, untimed.
    #[default]
    Preparing,
    WarmUp,
    Measuring,
    /// The checks after the rounds (determinism, layouts).
    Checking,
    CountingInstructions,
}

impl std::fmt::Display for JobPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JobPhase::Preparing => "preparing read databases and verifying reads",
            JobPhase::WarmUp => "warm-up",
            JobPhase::Measuring => "measuring",
            JobPhase::Checking => "checking the run",
            JobPhase::CountingInstructions => "counting instructions",
        })
    }
}

/// What the job last said about itself.
#[derive(Debug, Clone, Default)]
struct JobState {
    /// What the job is part of ([`set_heading`]), said before its phase.
    heading: Option<String>,
    phase: JobPhase,
    /// Measured rounds done and planned, and when the first of them began (with the
    /// rounds done then, for a resumed run), which the estimate of the last is made from.
    rounds: Option<(u32, Option<u32>)>,
    rounds_began: Option<(Instant, u32)>,
    budget: Option<Duration>,
    /// The units (engine and label) that failed so far.
    failed: BTreeSet<String>,
    /// When the job ended.
    stopped: Option<Instant>,
}

impl Log {
    /// Starts the clock: `budget` is the time the job may take, counted from now.
    pub fn start(phase: JobPhase, budget: Option<Duration>) -> anyhow::Result<Log> {
        let interval = crate::envvars::seconds(crate::envvars::PROGRESS_INTERVAL)?.map(Duration::from_secs);
        let heading = HEADING.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let status = JobState { heading, phase, budget, ..JobState::default() };
        let shared = Arc::new(Shared { state: Mutex::new(status), wake: Condvar::new() });
        let started = Instant::now();
        let thread = (!terminal::is_terminal(Stream::Stderr)).then(|| {
            let shared = shared.clone();
            let interval = interval.unwrap_or(LOG_INTERVAL);
            std::thread::spawn(move || tick(&shared, started, interval, &mut io::stderr()))
        });
        Ok(Log { shared, thread })
    }

    fn status(&self) -> MutexGuard<'_, JobState> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn phase(&self, phase: JobPhase) {
        self.status().phase = phase;
    }

    /// `done` measured rounds of `planned` (None: no cap). The first call starts the clock
    /// the estimate of the last round is made from.
    pub fn rounds(&self, done: u32, planned: Option<u32>) {
        let mut s = self.status();
        s.rounds_began.get_or_insert((Instant::now(), done));
        s.rounds = Some((done, planned));
    }

    /// A unit (its engine and label, as the line counts them) failed.
    pub fn failed(&self, unit: String) {
        self.status().failed.insert(unit);
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        self.status().stopped = Some(Instant::now());
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Prints a line at every whole `interval` after `started` until the job stops; one that
/// fell due before the stop is printed even if the thread woke late, so a job that lasted
/// n intervals (by its own clock) shows exactly n lines, and a shorter one none.
fn tick(shared: &Shared, started: Instant, interval: Duration, out: &mut dyn Write) {
    let mut due = started + interval;
    let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        match s.stopped {
            Some(end) if due > end => return,
            None if now < due => {
                s = shared.wake.wait_timeout(s, due - now).unwrap_or_else(|e| e.into_inner()).0;
                continue;
            }
            _ => {}
        }
        let _ = writeln!(out, "{}", line(&s, now.duration_since(started), now));
        due += interval;
    }
}

/// "progress: measuring, round 13 of about 83, elapsed 2m30s, budget left 6m30s, 1 unit
/// failed".
fn line(s: &JobState, elapsed: Duration, now: Instant) -> String {
    let mut parts = vec![match &s.heading {
        Some(h) => format!("progress: {h}: {}", s.phase),
        None => format!("progress: {}", s.phase),
    }];
    let left = s.budget.map(|b| b.saturating_sub(elapsed));
    if let Some((done, planned)) = s.rounds {
        parts.push(match (estimate(s, done, planned, left, now), planned) {
            (Some(n), Some(p)) if n >= p => format!("round {} of {p}", (done + 1).min(p)),
            (Some(n), _) => format!("round {} of about {n}", (done + 1).min(n)),
            (None, Some(p)) => format!("round {} of {p}", (done + 1).min(p)),
            (None, None) => format!("round {}", done + 1),
        });
    }
    parts.push(format!("elapsed {}", clock(elapsed)));
    if let Some(left) = left {
        parts.push(format!("budget left {}", clock(left)));
    }
    parts.push(match s.failed.len() {
        1 => "1 unit failed".into(),
        n => format!("{n} units failed"),
    });
    parts.join(", ")
}

/// The round the job will likely end at: as many as the budget left allows at the pace
/// of the rounds so far, never more than planned; None before a round is done.
fn estimate(s: &JobState, done: u32, planned: Option<u32>, left: Option<Duration>, now: Instant) -> Option<u32> {
    let (began, first) = s.rounds_began?;
    let timed = done.checked_sub(first).filter(|n| *n > 0)?;
    let per_round = now.duration_since(began).as_secs_f64() / f64::from(timed);
    let more = left?.as_secs_f64() / per_round.max(1e-9);
    let likely = done.saturating_add(more.ceil() as u32);
    Some(planned.map_or(likely, |p| p.min(likely)))
}

/// "45s", "2m30s", "1h05m".
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Records every line drawn at a fixed width.
    #[derive(Debug, Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl TermLike for Recorder {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.0.lock().unwrap().extend(s.lines().map(String::from));
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_bar_fits_80_columns_however_long_the_item() {
        let rec = Recorder::default();
        let target = ProgressDrawTarget::term_like(Box::new(rec.clone()));
        let bar = styled(ProgressBar::with_draw_target(Some(340), target), "preparing read databases");
        bar.set_message("LMDB_0.9.33 (clang -O2 -fno-omit-frame-pointer) readXxh64 round 17 of 20, warm-up done");
        bar.inc(17);
        bar.tick();
        let lines = rec.0.lock().unwrap().clone();
        assert!(!lines.is_empty());
        for l in &lines {
            let shown = console::strip_ansi_codes(l);
            assert!(console::measure_text_width(&shown) <= 80, "{} columns: {shown}", shown.chars().count());
        }
        assert!(lines.iter().any(|l| l.contains("17/340") && l.contains("LMDB_0.9.33")), "{lines:?}");
    }

    #[test]
    fn a_line_says_the_phase_the_round_the_clock_the_budget_and_the_failures() {
        let now = Instant::now();
        let mut s =
            JobState { phase: JobPhase::Measuring, budget: Some(Duration::from_secs(540)), ..JobState::default() };
        s.failed.insert("rust LMDB_0.9.18".into());
        assert_eq!(
            line(&s, Duration::from_secs(30), now),
            "progress: measuring, elapsed 30s, budget left 8m30s, 1 unit failed"
        );
        // 10 rounds in 60 s, 480 s left: about 80 more, of 1000 planned.
        s.rounds_began = Some((now - Duration::from_secs(60), 0));
        s.rounds = Some((10, Some(1000)));
        s.failed.insert("c LMDB_0.9.18".into());
        assert_eq!(
            line(&s, Duration::from_secs(60), now),
            "progress: measuring, round 11 of about 90, elapsed 1m00s, budget left 8m00s, 2 units failed"
        );
        // Without a cap on the rounds the budget is the end.
        s.rounds = Some((10, None));
        assert!(line(&s, Duration::from_secs(60), now).contains("round 11 of about 90,"));
        // Without a budget the plan is the end.
        s.rounds = Some((10, Some(1000)));
        s.budget = None;
        assert_eq!(
            line(&s, Duration::from_secs(3725), now),
            "progress: measuring, round 11 of 1000, elapsed 1h02m, 2 units failed"
        );
    }

    #[test]
    fn a_job_of_n_intervals_prints_n_lines_and_a_shorter_one_none() {
        // Jobs that ended a while ago, by their own clock: the lines that fell due come
        // out at once, however late the thread, and none after the end.
        let lines = |lasted_ms: u64| {
            let started = Instant::now() - Duration::from_secs(1);
            let status = JobState {
                phase: JobPhase::Measuring,
                stopped: Some(started + Duration::from_millis(lasted_ms)),
                ..JobState::default()
            };
            let shared = Shared { state: Mutex::new(status), wake: Condvar::new() };
            let mut out = Vec::new();
            tick(&shared, started, Duration::from_millis(100), &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(lines(99), "");
        let out = lines(350);
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(out.lines().all(|l| l.starts_with("progress: measuring, elapsed 1s, 0 units failed")), "{out}");
    }

    #[test]
    fn a_running_job_gets_its_lines_from_the_thread() {
        let started = Instant::now();
        let status = JobState { phase: JobPhase::Measuring, ..JobState::default() };
        let shared = Shared { state: Mutex::new(status), wake: Condvar::new() };
        let mut out = Vec::new();
        std::thread::scope(|scope| {
            let ticker = scope.spawn(|| tick(&shared, started, Duration::from_millis(20), &mut out));
            std::thread::sleep(Duration::from_millis(100));
            shared.state.lock().unwrap().stopped = Some(Instant::now());
            shared.wake.notify_all();
            ticker.join().unwrap();
        });
        // Exactly the whole intervals the job lasted, by the clock the stop was read from.
        let lasted = shared.state.lock().unwrap().stopped.unwrap().duration_since(started);
        let want = (lasted.as_millis() / 20) as usize;
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), want);
    }
}
