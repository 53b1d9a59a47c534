//! The server process `backstop proxy` runs (SPEC A3): started in a process group of
//! its own, killed with the proxy if the proxy dies, and stopped for sure when the
//! proxy is told to stop.
//!
//! - **The proxy dies** (SIGKILL, a crash): the server gets SIGKILL from the kernel
//!   (Linux `PR_SET_PDEATHSIG`, set between fork and exec), so no server is left
//!   behind — one that never reads its stdin would otherwise run on, orphaned.
//! - **The proxy is told to stop** (SIGINT, SIGTERM): the signal is forwarded to the
//!   server, and if the server has not exited a grace period later
//!   ([`DEFAULT_KILL_AFTER`], `--kill-after`), it is killed (SIGKILL).
//! - A server is signalled only until it is reaped: its pid is never signalled once
//!   the system may have given it to another process.
//!
//! ```no_run
//! use std::process::{Command, Stdio};
//! use std::time::Duration;
//! use backstop::server_process::ServerProcess;
//! let mut command = Command::new("my-mcp-server");
//! command.stdin(Stdio::piped()).stdout(Stdio::piped());
//! let (server, stdin, stdout) = ServerProcess::spawn(&mut command).unwrap();
//! server.forward_stop_signals(Duration::from_secs(5));
//! drop((stdin, stdout));
//! let status = server.wait().unwrap();
//! ```

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// How long a server told to stop (SIGINT or SIGTERM, forwarded) has to exit before it
/// is killed.
///
/// ```
/// assert_eq!(backstop::server_process::DEFAULT_KILL_AFTER.as_secs(), 5);
/// ```
pub const DEFAULT_KILL_AFTER: Duration = Duration::from_secs(5);

/// How often [`ServerProcess::wait`] looks whether the server has exited.
const REAP_POLL: Duration = Duration::from_millis(10);

/// A running server, signalled safely until it is reaped.
#[derive(Debug)]
pub struct ServerProcess {
    pid: Pid,
    /// The child until it is reaped (`None` after). Held while the server is
    /// signalled, so that it cannot be reaped — and its pid reused — meanwhile.
    child: Mutex<Option<Child>>,
    /// SIGINT and SIGTERM, hooked before the server started and held here until
    /// [`forward_stop_signals`](Self::forward_stop_signals) forwards them: one that
    /// comes in between waits for it, never killing the proxy without a grace period.
    stop_signals: Mutex<Option<Signals>>,
}

impl ServerProcess {
    /// Start `command` (its stdin and stdout piped) in a process group of its own,
    /// with SIGKILL as its parent-death signal; the server, its stdin and its stdout.
    /// SIGINT and SIGTERM are hooked first and held for
    /// [`forward_stop_signals`](Self::forward_stop_signals), which the caller then
    /// calls: until it does, they stop nothing.
    pub fn spawn(command: &mut Command) -> io::Result<(Arc<Self>, ChildStdin, ChildStdout)> {
        command.process_group(0);
        kill_with_parent(command);
        let stop_signals = Signals::new([SIGINT, SIGTERM]).ok();
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| piped("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| piped("stdout"))?;
        let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        // The program only: its arguments may hold a credential.
        tracing::info!(program = ?command.get_program(), pid = child.id(), "the server started");
        let server = Self {
            pid,
            child: Mutex::new(Some(child)),
            stop_signals: Mutex::new(stop_signals),
        };
        Ok((Arc::new(server), stdin, stdout))
    }

    /// Send `signal` to the server, unless it was reaped; whether it was sent.
    pub fn signal(&self, signal: Signal) -> bool {
        let child = lock(&self.child);
        child.is_some() && kill(self.pid, signal).is_ok()
    }

    /// Forward SIGINT and SIGTERM to the server, from a thread of their own — those
    /// that came since [`spawn`](Self::spawn) first; after each, the server is killed
    /// if it has not exited `kill_after` later. If signals could not be hooked, they
    /// keep their default action: the proxy dies, and its parent-death signal kills
    /// the server.
    pub fn forward_stop_signals(self: &Arc<Self>, kill_after: Duration) {
        let Some(mut signals) = lock(&self.stop_signals).take() else {
            return;
        };
        let server = Arc::clone(self);
        thread::spawn(move || {
            for signal in signals.forever() {
                if let Ok(signal) = Signal::try_from(signal) {
                    server.stop(signal, kill_after);
                }
            }
        });
    }

    /// Send `signal` to the server, and SIGKILL `kill_after` later if it has not
    /// exited by then (from a thread of its own).
    pub fn stop(self: &Arc<Self>, signal: Signal, kill_after: Duration) {
        if self.signal(signal) {
            tracing::info!(%signal, "forwarded to the server");
            let server = Arc::clone(self);
            thread::spawn(move || {
                thread::sleep(kill_after);
                if server.signal(Signal::SIGKILL) {
                    tracing::warn!(
                        after_s = kill_after.as_secs_f64(),
                        "the server had not exited after {signal}: killed"
                    );
                }
            });
        }
    }

    /// Wait for the server to exit, and reap it: its exit status.
    pub fn wait(&self) -> io::Result<ExitStatus> {
        loop {
            {
                let mut child = lock(&self.child);
                let Some(running) = child.as_mut() else {
                    return Err(io::Error::other("the server was reaped already"));
                };
                if let Some(status) = running.try_wait()? {
                    tracing::info!(%status, "the server exited");
                    *child = None;
                    return Ok(status);
                }
            }
            thread::sleep(REAP_POLL);
        }
    }
}

/// Have the kernel kill the child started by `command` when this process dies (Linux:
/// `PR_SET_PDEATHSIG`; it fires when the thread that spawned the child ends, and the
/// proxy spawns it from its main thread). A parent that died before the child set it
/// is seen at once: the child is not started.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn kill_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: prctl(2) and getppid(2) are plain system
    // calls, and nothing is allocated or locked.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if nix::unistd::getppid() != parent {
                return Err(io::Error::other("the proxy died while the server started"));
            }
            Ok(())
        });
    }
}

/// Elsewhere the server sees its stdin close when the proxy dies.
#[cfg(not(target_os = "linux"))]
fn kill_with_parent(_command: &mut Command) {}

fn piped(stream: &str) -> io::Error {
    io::Error::other(format!("the server's {stream} is not piped"))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;
    use std::time::Instant;

    use super::*;

    fn sleeper(script: &str) -> (Arc<ServerProcess>, ChildStdin, ChildStdout) {
        let mut command = Command::new("sh");
        command
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        ServerProcess::spawn(&mut command).unwrap()
    }

    #[test]
    fn a3_a_reaped_server_is_never_signalled() {
        let (server, _stdin, _stdout) = sleeper("exit 3");
        assert_eq!(server.wait().unwrap().code(), Some(3));
        assert!(
            !server.signal(Signal::SIGTERM),
            "reaped: its pid may be another's"
        );
        assert!(server.wait().is_err());
    }

    #[test]
    fn a3_a_server_that_ignores_sigterm_is_killed_after_the_grace_period() {
        use std::os::unix::process::ExitStatusExt;
        let (server, _stdin, mut stdout) = sleeper("trap '' TERM; echo ready; exec sleep 60");
        let mut ready = [0; 6];
        std::io::Read::read_exact(&mut stdout, &mut ready).unwrap();
        let started = Instant::now();
        server.stop(Signal::SIGTERM, Duration::from_millis(300));
        let status = server.wait().unwrap();
        assert_eq!(status.signal(), Some(9), "SIGTERM was ignored: killed");
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "not before the grace period"
        );
    }

    #[test]
    fn a3_a_server_that_stops_when_told_is_not_killed() {
        use std::os::unix::process::ExitStatusExt;
        let (server, _stdin, _stdout) = sleeper("exec sleep 60");
        server.stop(Signal::SIGTERM, Duration::from_millis(100));
        assert_eq!(server.wait().unwrap().signal(), Some(15));
    }
}
