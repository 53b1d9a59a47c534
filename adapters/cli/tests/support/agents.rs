//! What the agent-client tests share (SPEC L18, E12): where the pinned clients and the
//! fastmcp server are, a scratch directory per run, and running a client to its end.

// Each test that uses this module uses a part of it.
#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// An executable of the pinned agent clients (`target/agent-peers/node_modules/.bin`,
/// installed by `.ci/run` from `tests/peers/agents/`), if it is there.
pub fn agent_client(bin: &str) -> Option<PathBuf> {
    let path = crate::support::peers_dir()
        .join("agent-peers/node_modules/.bin")
        .join(bin);
    path.exists().then_some(path)
}

/// The pinned package directory of an agent client (`@google/gemini-cli`, …).
pub fn agent_package(name: &str) -> PathBuf {
    crate::support::peers_dir()
        .join("agent-peers/node_modules")
        .join(name)
}

/// The fastmcp server the clients call (`tests/peers/servers/agent_tools_server.py`).
pub fn tools_server() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/servers/agent_tools_server.py")
}

/// The command that runs the tools server: directly, or behind `backstop proxy` with
/// `options`.
pub fn server_command(python: &Path, behind_backstop: Option<&[&str]>) -> Vec<String> {
    let script = tools_server();
    proxied(
        &[python.to_str().unwrap(), script.to_str().unwrap()],
        behind_backstop,
    )
}

/// The command that runs `server` (program and arguments): directly, or behind
/// `backstop proxy` with `options`.
pub fn proxied(server: &[&str], behind_backstop: Option<&[&str]>) -> Vec<String> {
    let mut command: Vec<String> = Vec::new();
    if let Some(options) = behind_backstop {
        command.push(crate::support::backstop().to_str().unwrap().to_owned());
        command.push("proxy".into());
        command.extend(options.iter().map(|o| (*o).to_owned()));
        command.push("--".into());
    }
    command.extend(server.iter().map(|s| (*s).to_owned()));
    command
}

/// A fresh directory for one run of a client (its home, its working directory),
/// removed when dropped unless the test is failing: a client leaves megabytes there
/// (Codex its session log, Gemini CLI the spilled result), and a failed run's output
/// (`stdout`, `stderr`) is kept to read.
pub fn scratch(name: &str) -> Scratch {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("backstop-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("work")).unwrap();
    Scratch(dir)
}

/// A client run's directory; see [`scratch`].
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// What a client run left: its exit status and what it wrote.
pub struct Ran {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Run `command` with stdin closed to its end, its output to files in `dir` (a client
/// may write megabytes), killed after `limit`.
pub fn run(mut command: Command, dir: &Path, limit: Duration) -> Ran {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .expect("the client starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |path: &Path| {
        String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
    };
    Ran {
        status,
        stdout: read(&out),
        stderr: read(&err),
    }
}
