//! SPEC A3: the stdio proxy never leaves its server behind — killed a grace period
//! after a forwarded SIGTERM it ignores (`--kill-after`), and killed by the kernel when
//! the proxy itself dies (issue 20: a server that does not read its stdin used to run
//! on, orphaned, and one that ignores SIGTERM held the proxy forever).

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use backstop::server_process::ServerProcess;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// `backstop proxy OPTIONS -- sh -c SCRIPT`, its stdin kept open (a server that
/// never reads it).
fn proxy(options: &[&str], script: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_backstop"))
        .arg("proxy")
        .args(options)
        .args(["--", "sh", "-c", script])
        .env_remove("RUST_LOG") // the first line on stderr is the server's
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The first line the server wrote to stderr (which passes through the proxy).
fn first_stderr_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_owned()
}

/// The child's exit status, waited for at most `limit`; `None` when it still runs.
fn exit_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn has_ended(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[test]
fn a3_a_server_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let mut proxy = proxy(
        &["--kill-after", "0.5"],
        "trap '' TERM INT; echo ready >&2; exec sleep 60",
    );
    assert_eq!(first_stderr_line(&mut proxy), "ready");
    let started = Instant::now();
    kill(Pid::from_raw(proxy.id() as i32), Signal::SIGTERM).unwrap();
    let status = exit_within(&mut proxy, Duration::from_secs(10));
    let _ = proxy.kill();
    let status = status.expect("the proxy exits: its server was killed");
    assert_eq!(
        status.code(),
        Some(128 + 9),
        "the server's SIGKILL: {status:?}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "not before the grace period"
    );
}

#[test]
fn a3_the_server_dies_with_the_proxy() {
    let mut proxy = proxy(&[], "echo $$ >&2; exec sleep 60");
    let server: i32 = first_stderr_line(&mut proxy).parse().unwrap();
    assert!(!has_ended(server));
    proxy.kill().unwrap(); // SIGKILL: the proxy gets no chance to stop its server
    assert_eq!(proxy.wait().unwrap().signal(), Some(9));
    let started = Instant::now();
    while !has_ended(server) && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended = has_ended(server);
    if !ended {
        let _ = kill(Pid::from_raw(server), Signal::SIGKILL);
    }
    assert!(ended, "the server outlived the proxy");
}

#[test]
fn a3_a_stop_signal_before_forwarding_begins_is_forwarded_not_fatal() {
    // CI found the window: a SIGTERM right after the server started, before the proxy
    // hooked it, killed the proxy at once (no grace period for the server). Signals are
    // now hooked before the server starts; this process stands in for the proxy.
    let mut command = Command::new("sleep");
    command
        .arg("60")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let (server, _stdin, _stdout) = ServerProcess::spawn(&mut command).unwrap();
    kill(Pid::this(), Signal::SIGTERM).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    server.forward_stop_signals(Duration::from_secs(10));
    let status = server.wait().unwrap();
    assert_eq!(status.signal(), Some(15), "the server got the SIGTERM");
}
