//! A unit (an engine on a tag) and the worker processes it starts: their command lines,
//! the check of its build against the run's record, and the check of the C twin before
//! it starts (each worker then runs under `watchdog.rs`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use super::protocol::WorkerLine;
use super::watchdog::{self, Killed, Watched};
use super::worker::WorkerAction;
use super::Label;
use crate::compile::{BuildKind, BuildRecord};
use crate::harness::HarnessOrder;
use crate::layout::{self, Layout};
use crate::record::{Engine, TagStatus};

/// One thing to measure: an engine on a build (a tag or commit, by a toolchain), its
/// identity a value ([`Label`]) that its samples' labels are rendered from.
#[derive(Debug, Clone)]
pub struct Unit {
    pub engine: Engine,
    pub label: Label,
    /// The Rust worker is this binary; the C twin is the tag's own executable, or (paired
    /// rounds) the C paired worker, which loads the tag's shared library as Rust does.
    pub program: PathBuf,
    /// What `program` must hash to before each start (the C twin's, the C paired worker's);
    /// None for this binary.
    pub program_sha256: Option<String>,
    /// The shared library, for the Rust worker and the C paired worker.
    pub library: Option<PathBuf>,
    /// The SHA-256 the build record (or the layout's record) gives the artifact this unit
    /// loads (the library) or runs (the C twin): checked before every load and every start.
    pub sha256: String,
    /// What `mdb_version()` reports for the build: the Rust worker checks it at every load.
    pub version: String,
    /// The layout `library` (Rust) or `program` (C twin) was linked with; None: the fixed build.
    pub layout: Option<Layout>,
    /// With random layouts: what every round links this unit's own layout from.
    pub relink: Option<Arc<layout::Source>>,
    /// The function orders of `program` (src/harness.rs) a timed process under random
    /// layouts may run: this binary's for the Rust worker, the C paired worker's for it, none
    /// for a tag's own C twin (its layouts place its code).
    pub orders: Arc<[HarnessOrder]>,
    /// The order the worker runs in this process; None: `program` as built.
    pub harness: Option<u32>,
    /// The run's programs (`--program`) as compiled against this unit's build; a program
    /// missing here did not compile against it (recorded as a failure) and is not run.
    pub programs: std::collections::BTreeMap<crate::workload::Workload, CompiledProgram>,
}

/// This binary's function orders that a timed process may run, found once.
fn this_binarys_orders() -> Arc<[HarnessOrder]> {
    static ORDERS: std::sync::OnceLock<Arc<[HarnessOrder]>> = std::sync::OnceLock::new();
    let found = || match std::env::current_exe() {
        Ok(exe) => crate::harness::orders_beside(&exe, crate::harness::built_shuffled()).into(),
        Err(_) => Arc::from([]),
    };
    ORDERS.get_or_init(found).clone()
}

/// `units` as one timed process runs them: where LMDB's layout is drawn at random, each
/// engine's units on one function order of their worker drawn for the process (they share
/// it), so that the tool's own placement is sampled as LMDB's is; otherwise as they are.
pub(super) fn with_drawn_harness(units: &[Unit], rng: &mut impl rand::Rng) -> Vec<Unit> {
    let rust = drawn_order(units, Engine::Rust, rng);
    let c = drawn_order(units, Engine::C, rng);
    let drawn = |u: &Unit| match u.engine {
        Engine::Rust => rust.as_ref(),
        Engine::C => c.as_ref(),
    };
    units.iter().map(|u| drawn(u).map_or_else(|| u.clone(), |order| u.with_harness(order))).collect()
}

/// One order of `engine`'s worker, drawn when its units run random layouts and it has orders.
fn drawn_order(units: &[Unit], engine: Engine, rng: &mut impl rand::Rng) -> Option<HarnessOrder> {
    let of = || units.iter().filter(|u| u.engine == engine);
    let orders = &of().find(|u| !u.orders.is_empty())?.orders;
    of().any(|u| u.layout.is_some()).then(|| orders[rng.gen_range(0..orders.len())].clone())
}

/// A program compiled against one build (`super::program`): the executable and its
/// SHA-256, checked before every start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledProgram {
    pub exe: PathBuf,
    pub sha256: String,
}

impl Unit {
    /// A unit of `build` as built, of one fixed layout (its compiler's): the Rust worker
    /// (this program) loading its library, or its C twin.
    pub fn of_build(engine: Engine, label: Label, build: &BuildRecord) -> Result<Unit> {
        let (program, program_sha256, library) = match engine {
            Engine::Rust => {
                let this = std::env::current_exe().context("cannot find this program's own path")?;
                (this, None, Some(build.artifact.clone()))
            }
            Engine::C => (build.artifact.clone(), Some(build.sha256.clone()), None),
        };
        Ok(Unit {
            engine,
            label,
            program,
            program_sha256,
            library,
            sha256: build.sha256.clone(),
            version: build.lmdb_version.clone(),
            layout: None,
            relink: None,
            // A tag's own C twin is placed by its layouts.
            orders: match engine {
                Engine::Rust => this_binarys_orders(),
                Engine::C => Arc::from([]),
            },
            harness: None,
            programs: Default::default(),
        })
    }

    /// A C unit of paired rounds: the C paired worker `twin` loading `library`'s shared
    /// library, as the Rust unit of the tag loads it.
    pub fn paired_twin(label: Label, library: &BuildRecord, twin: &crate::paired_twin::PairedTwin) -> Unit {
        Unit {
            engine: Engine::C,
            label,
            program: twin.program.clone(),
            program_sha256: Some(twin.sha256.clone()),
            library: Some(library.artifact.clone()),
            sha256: library.sha256.clone(),
            version: library.lmdb_version.clone(),
            layout: None,
            relink: None,
            orders: twin.harness_orders().into(),
            harness: None,
            programs: Default::default(),
        }
    }

    /// The kind of build this unit measures: the shared library it loads, or the C twin.
    pub fn kind(&self) -> BuildKind {
        match self.library {
            Some(_) => BuildKind::SharedLibrary,
            None => BuildKind::CHarness,
        }
    }

    /// That this unit's build is the one `tags` (a run file's header) records for it: the
    /// same SHA-256 and version. A run measures one build per unit, however many sessions
    /// it takes; the error names the unit and both hashes.
    pub fn check_recorded(&self, tags: &[TagStatus]) -> Result<()> {
        let built = self.label.built();
        let kind = self.kind();
        let artifact = self.library.as_ref().unwrap_or(&self.program);
        let Some(rec) = tags.iter().filter(|t| t.label == built).flat_map(|t| &t.builds).find(|b| b.kind == kind)
        else {
            bail!("{} on the {} engine: the run file's header records no build of it", self.label, self.engine);
        };
        if rec.sha256 != self.sha256 || rec.lmdb_version != self.version {
            bail!(
                "{} on the {} engine would now run {} (SHA-256 {}, {}), but the run file's header records the \
                 build it measured as SHA-256 {} ({}): not the same build; restore that build in the cache, or \
                 start a new run",
                self.label,
                self.engine,
                artifact.display(),
                self.sha256,
                self.version,
                if rec.sha256.is_empty() { "none" } else { &rec.sha256 },
                rec.lmdb_version
            );
        }
        Ok(())
    }

    /// The same unit running `layout` instead: its library, or its C twin.
    pub fn with_layout(&self, layout: Layout) -> Unit {
        let mut u = self.clone();
        match u.library {
            Some(_) => u.library = Some(layout.path.clone()),
            None => {
                u.program = layout.path.clone();
                u.program_sha256 = Some(layout.sha256.clone());
            }
        }
        u.sha256 = layout.sha256.clone();
        u.layout = Some(layout);
        u
    }

    /// The same unit run by `order` of its worker, checked before each start as it records.
    pub fn with_harness(&self, order: &HarnessOrder) -> Unit {
        let mut u = self.clone();
        u.program = order.program.clone();
        u.program_sha256 = order.sha256.clone();
        u.harness = Some(order.n);
        u
    }

    /// The program and the arguments that start its worker for `action`: the library to
    /// load, for the Rust worker and the C paired worker.
    pub(super) fn argv(&self, action: WorkerAction) -> (PathBuf, Vec<OsString>) {
        let mut args: Vec<OsString> = match self.engine {
            Engine::Rust => vec!["worker".into(), action.name().into()],
            Engine::C => vec![action.name().into()],
        };
        if let Some(library) = &self.library {
            args.extend(["--library".into(), library.into(), "--library-sha256".into(), self.sha256.clone().into()]);
            args.extend(["--library-version".into(), self.version.clone().into()]);
        }
        if let Some(n) = self.label.readers {
            args.extend(["--crew-readers".into(), n.to_string().into()]);
        }
        if let Some(mode) = self.label.sync {
            args.push(format!("--sync={mode}").into());
        }
        if let Some(limit) = self.label.memory_limit {
            args.push(format!("--memory-limit={limit}").into());
        }
        if let Some(r) = self.label.readahead {
            args.push(format!("--readahead={r}").into());
        }
        (self.program.clone(), args)
    }

    pub(super) fn command(&self, action: WorkerAction) -> Command {
        let (program, args) = self.argv(action);
        let mut c = Command::new(program);
        c.args(args);
        c
    }

    /// Runs one of this unit's workers under the watchdog: one that stalls is killed, and
    /// the unit left out of later processes. The Rust worker checks its library itself
    /// before loading it; the C programs are checked here, before they are started.
    pub(super) fn run(&self, cmd: Command) -> (Vec<WorkerLine>, Option<String>) {
        if let Err(e) = self.check_c() {
            return (Vec::new(), Some(format!("the C worker was not started: {e:#}")));
        }
        let key = Watched::Unit(self.engine, self.label.clone(), PathBuf::from(cmd.get_program()));
        let ran = watchdog::run(cmd, key);
        if matches!(ran.killed, Some(Killed::Stalled(_))) {
            watchdog::mark_hung(self.engine, &self.label);
        }
        (ran.lines, ran.death)
    }

    /// A C unit's program, and the library the C paired worker will load, as recorded (the
    /// C programs cannot hash what they run; the Rust worker hashes its library itself).
    pub(super) fn check_c(&self) -> Result<()> {
        if self.engine != Engine::C {
            return Ok(());
        }
        if let Some(sha) = &self.program_sha256 {
            crate::artifact::verify(&self.program, sha)?;
        }
        match &self.library {
            Some(library) => crate::artifact::verify(library, &self.sha256),
            None => Ok(()),
        }
    }
}

/// The variable [`pad_stack`] sets.
pub const STACK_PAD: &str = "LMDB_REGRESS_STACK_PAD";
/// Up to one page of padding: every initial stack alignment is as likely.
const STACK_PAD_MAX: usize = 4096;

/// Gives a timed worker process an environment variable of random length, 0 to 4 KiB.
/// Environment strings sit at the top of a process's stack, so their size sets where its
/// stack starts: without this, each unit's own argument lengths (its label is in its
/// library's path) fixed a stack alignment per unit, a bias between units of one source
/// (an A/A of the lmdb suite, one process per unit, read +0.5 to +2.4% by label length).
/// Drawn per process, the alignment is sampled like code layout, the same for every unit.
pub(super) fn pad_stack(c: &mut Command) {
    use rand::Rng;
    let n = rand::thread_rng().gen_range(0..STACK_PAD_MAX);
    c.env(STACK_PAD, "x".repeat(n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Three orders of `engine`'s worker, the C paired worker's with their SHA-256.
    fn orders(engine: Engine) -> Arc<[HarnessOrder]> {
        let order = |n| match engine {
            Engine::Rust => HarnessOrder { n, program: format!("lmdb-regress-harness-{n}").into(), sha256: None },
            Engine::C => HarnessOrder::checked(n, format!("lmdb-paired-c-{n}").into(), format!("{n}")),
        };
        (1..=3).map(order).collect()
    }

    fn unit(engine: Engine, tag: &str, layout: Option<u32>) -> Unit {
        let layout = layout.map(|seed| Layout { seed, path: format!("{tag}-{seed}.so").into(), sha256: "0".into() });
        Unit {
            engine,
            label: Label::build(tag, None),
            program: "worker".into(),
            program_sha256: (engine == Engine::C).then(|| "built".into()),
            library: Some("lib".into()),
            sha256: "0".into(),
            version: "LMDB".into(),
            layout,
            relink: None,
            orders: orders(engine),
            harness: None,
            programs: Default::default(),
        }
    }

    /// The order every unit of `engine` in `drawn` runs, the same for all of them.
    fn one_order(drawn: &[Unit], engine: Engine) -> u32 {
        let of: Vec<&Unit> = drawn.iter().filter(|u| u.engine == engine).collect();
        let n = of[0].harness.expect("drawn");
        let order = &orders(engine)[n as usize - 1];
        assert!(of.iter().all(|u| u.harness == Some(n) && u.program == order.program), "{of:?}");
        assert!(of.iter().all(|u| u.program_sha256 == order.sha256), "checked as its order records: {of:?}");
        n
    }

    #[test]
    fn a_process_of_random_layouts_runs_one_drawn_order_of_each_worker_and_a_fixed_one_each_as_built() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let (rust, c) = (Engine::Rust, Engine::C);
        let random = [unit(rust, "a", Some(1)), unit(rust, "b", Some(2)), unit(c, "a", Some(3)), unit(c, "b", Some(4))];
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..40 {
            let drawn = with_drawn_harness(&random, &mut rng);
            seen.insert((one_order(&drawn, rust), one_order(&drawn, c)));
        }
        let each = |pick: fn(&(u32, u32)) -> u32| seen.iter().map(pick).collect::<std::collections::BTreeSet<_>>();
        assert_eq!((each(|s| s.0).len(), each(|s| s.1).len()), (3, 3), "every order of either drawn: {seen:?}");
        assert!(seen.iter().any(|(r, c)| r != c), "each worker's order is its own draw: {seen:?}");
        let fixed = [unit(rust, "a", None), unit(c, "a", None)];
        let as_run =
            |us: &[Unit]| us.iter().map(|u| (u.program.clone(), u.program_sha256.clone(), u.harness)).collect();
        let fixed_run: Vec<_> = as_run(&with_drawn_harness(&fixed, &mut rng));
        assert_eq!(fixed_run, as_run(&fixed), "fixed layouts: each worker as built");
        let c_twin = Unit { orders: Arc::from([]), library: None, ..unit(c, "a", Some(1)) };
        assert_eq!(with_drawn_harness(&[c_twin.clone()], &mut rng)[0].harness, None, "a C twin has no orders");
    }
}
