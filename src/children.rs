//! Every process this one starts dies with it: workers, valgrind, compilers and what
//! they start in turn (cc1, as, ld), git, the registries' clients. A killed run leaves
//! nothing behind to run beside the next one.
//!
//! Each child joins one process group that a guardian leads: a small process forked the
//! first time a child is started, which waits until this process has gone (its pipe
//! closes, however this process ends, SIGKILL included) and then kills the whole group.
//! Each child also gets `PR_SET_PDEATHSIG`, in case the guardian could not be had. Being
//! out of the terminal's foreground group, children no longer see Ctrl-C themselves:
//! [`interrupt`] passes it on. Shared with build.rs, so it refers to no other module.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output};
use std::sync::OnceLock;

/// The guardian's process group, once started (None: it could not be).
static GROUP: OnceLock<Option<libc::pid_t>> = OnceLock::new();

/// `cmd`, set up to die with this process.
pub fn dies_with_us(cmd: &mut Command) -> &mut Command {
    let group = *GROUP.get_or_init(start_guardian);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls (setpgid, prctl, getppid).
    unsafe {
        cmd.pre_exec(move || {
            if let Some(g) = group {
                // Fails only if the guardian is gone: PR_SET_PDEATHSIG below still holds.
                libc::setpgid(0, g);
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // This process died before the line above: nothing would signal the child.
            if libc::getppid() != parent {
                return Err(io::Error::other("the process that started it has ended"));
            }
            Ok(())
        })
    }
}

/// [`Command::output`] of a child that dies with this process.
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    dies_with_us(cmd).output()
}

/// [`Command::spawn`] of a child that dies with this process.
pub fn spawn(cmd: &mut Command) -> io::Result<Child> {
    dies_with_us(cmd).spawn()
}

/// [`Command::spawn`] of a child that leads a process group of its own, so that it and
/// what it starts can be killed together by its id (`killpg`). It still dies with this
/// process (PR_SET_PDEATHSIG), but what it starts does not when this process is killed
/// outright, and Ctrl-C does not reach it: whoever starts it kills its group.
pub fn spawn_group_leader(cmd: &mut Command) -> io::Result<Child> {
    dies_with_us(cmd);
    // SAFETY: between fork and exec only setpgid, async-signal-safe; it runs after the
    // guardian's setpgid above, and takes the child out of that group into its own.
    unsafe {
        cmd.pre_exec(|| match libc::setpgid(0, 0) {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        })
    };
    cmd.spawn()
}

/// Passes Ctrl-C on to every child (the guardian ignores it), as the terminal would have
/// if they were in its foreground group.
pub fn interrupt() {
    if let Some(Some(g)) = GROUP.get() {
        // SAFETY: signals a process group of our own children.
        unsafe { libc::killpg(*g, libc::SIGINT) };
    }
}

/// Forks the guardian: the leader of the children's process group, which holds the read
/// end of a pipe whose write end only this process has; when it reads end-of-file, this
/// process has ended, and it kills its group (itself last).
fn start_guardian() -> Option<libc::pid_t> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: plain system calls; after fork the child makes only async-signal-safe ones.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return None;
        }
        let (read, write) = (fds[0], fds[1]);
        match libc::fork() {
            -1 => {
                libc::close(read);
                libc::close(write);
                None
            }
            0 => guard(read),
            pid => {
                libc::close(read);
                // Either of the two calls makes it a leader: whichever runs first.
                libc::setpgid(pid, pid);
                // The write end stays open for this process's life (exec closes it in children).
                Some(pid)
            }
        }
    }
}

/// The guardian's life: alone in its own group, deaf to Ctrl-C and holding no other file,
/// it waits for the pipe to close, then kills the group.
unsafe fn guard(read: libc::c_int) -> ! {
    libc::setpgid(0, 0);
    libc::signal(libc::SIGINT, libc::SIG_IGN);
    libc::signal(libc::SIGHUP, libc::SIG_IGN);
    // Copies of this process's files (pipes to other children among them) must not stay open here.
    for fd in 0..read {
        libc::close(fd);
    }
    if libc::syscall(libc::SYS_close_range, (read + 1) as libc::c_uint, libc::c_uint::MAX, 0 as libc::c_uint) != 0 {
        for fd in read + 1..4096 {
            libc::close(fd);
        }
    }
    let mut byte = 0u8;
    loop {
        match libc::read(read, (&mut byte as *mut u8).cast(), 1) {
            0 => break,
            n if n < 0 && *libc::__errno_location() == libc::EINTR => continue,
            n if n < 0 => break,
            _ => continue,
        }
    }
    libc::kill(0, libc::SIGKILL);
    libc::_exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_join_the_guardians_group_and_get_their_exit_status() {
        let script = "read -r _ _ _ _ group _ < /proc/$$/stat; echo $group; exit 3";
        let out = output(Command::new("sh").args(["-c", script])).unwrap();
        assert_eq!(out.status.code(), Some(3));
        let group: libc::pid_t = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(Some(Some(group)), GROUP.get().copied(), "the child is in the guardian's group");
        // SAFETY: reads this process's own group.
        assert_ne!(group, unsafe { libc::getpgrp() });
    }
}
