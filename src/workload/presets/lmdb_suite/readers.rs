//! READERS' untimed start: reader slots left behind. Processes that each open the
//! environment, begin a read transaction and exit without ending it leave stale slots, which
//! mdb_reader_check must clear; a thread that does the same has its slot freed by LMDB's
//! thread-exit destructor.

use std::path::Path;

use anyhow::{bail, Context as _, Result};

use super::Context;
use crate::ffi::bindings as sys;
use crate::workload::lmdb::{Api, Env, EnvOptions, MDB_env, MDB_txn};

/// Processes that die holding a reader slot.
pub const STALE: u32 = 8;

/// Leaves [`STALE`] stale reader slots in `env` (at `dir`), then a thread's freed one.
pub fn leave(ctx: &Context, env: &Env, dir: &Path, options: &EnvOptions) -> Result<()> {
    for _ in 0..STALE {
        stale_slot(ctx, dir, options)?;
    }
    let shared = Shared(env.api, env.env);
    let txn = std::thread::scope(|s| s.spawn(move || shared.begin_read()).join())
        .map_err(|_| anyhow::anyhow!("the reader thread panicked"))?;
    env.api.check("mdb_txn_begin(in a thread)", txn.1)?;
    // SAFETY: the thread's read transaction, whose slot LMDB freed as the thread ended; no
    // other thread uses it.
    unsafe { (env.api.mdb_txn_abort)(txn.0 as *mut MDB_txn) };
    if crate::workload::profile_part::under_valgrind() {
        // The ended thread's malloc arena, which glibc hands to the next new thread (the
        // next row's), is taken by one that waits: each row starts on a fresh one.
        crate::workload::profile_part::alone(|| drop(std::hint::black_box(Box::new(0u64))));
    }
    Ok(())
}

/// mdb_reader_check allocates its list of pids (one a reader slot, and one more) inside the
/// timed call, and malloc's path for it depends on the heap the process has made so far:
/// counts that did not repeat (1.2% apart on one unit). A block of that size freed just
/// before, untimed, gives that malloc the same path every time.
pub fn prime_pid_list(env: &Env) {
    // SAFETY: env is open; MDB_envinfo is a plain C struct for mdb_env_info to fill; the
    // block is freed as soon as it is had.
    unsafe {
        let mut info: sys::MDB_envinfo = std::mem::zeroed();
        if (env.api.mdb_env_info)(env.env, &mut info) != 0 {
            return;
        }
        let size = (info.me_numreaders as usize + 1) * std::mem::size_of::<libc::pid_t>();
        libc::free(std::hint::black_box(libc::malloc(size)));
    }
}

/// The library and an open environment, handed to the reader thread.
struct Shared<'a>(&'a Api, *mut MDB_env);

// SAFETY: LMDB's environment handle may be used from any thread, and a read transaction
// belongs to the thread that begins it.
unsafe impl Send for Shared<'_> {}

impl Shared<'_> {
    /// A read transaction begun here (its address), and mdb_txn_begin's code.
    fn begin_read(self) -> (usize, i32) {
        let mut txn = std::ptr::null_mut();
        // SAFETY: the environment is open for the whole scope.
        let rc = unsafe { (self.0.mdb_txn_begin)(self.1, std::ptr::null_mut(), sys::MDB_RDONLY, &mut txn) };
        (txn as usize, rc)
    }
}

/// A child process opens the environment, begins a read transaction and exits holding it.
fn stale_slot(ctx: &Context, dir: &Path, options: &EnvOptions) -> Result<()> {
    // SAFETY: the child only opens an environment and begins a transaction, then _exits
    // without running destructors or atexit handlers.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()).context("fork"),
        0 => {
            let held = Env::open(ctx.api, dir, options).map(|env| {
                let slot = env.begin(true).is_ok();
                std::mem::forget(env);
                slot
            });
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(if matches!(held, Ok(true)) { 0 } else { 1 }) }
        }
        child => {
            let mut status = 0;
            // SAFETY: waits for our own child.
            if unsafe { libc::waitpid(child, &mut status, 0) } != child {
                return Err(std::io::Error::last_os_error()).context("waitpid");
            }
            if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                bail!("the process meant to hold a reader slot could not (wait status {status})");
            }
            Ok(())
        }
    }
}
