//! A real tmux behind the seed's own server, libtmux-mcp 0.1.0a22 (SPEC L18): a private
//! tmux server on its own socket, one pane filled with a long scrollback that ends in a
//! prompt, and how to run libtmux-mcp against it. The server is killed when the guard
//! drops, a failing test's included.

// Each test that uses this module uses a part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The python of `target/tmux-venv` (installed by `.ci/run` from
/// `tests/peers/requirements-tmux.txt`: libtmux-mcp on fastmcp 4.0), if it imports
/// `libtmux_mcp`.
pub fn libtmux_mcp_python() -> Option<PathBuf> {
    let path = crate::support::peers_dir().join("tmux-venv/bin/python");
    let works = Command::new(&path)
        .args(["-c", "import libtmux_mcp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    works.then_some(path)
}

/// The `tmux` on `PATH`, if there is one.
pub fn tmux_bin() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("tmux"))
        .find(|bin| bin.is_file())
}

/// A private tmux server (`tmux -S <dir>/sock`, no user config) with one pane; killed,
/// and its directory removed, when dropped.
pub struct Tmux {
    dir: PathBuf,
    bin: PathBuf,
    /// The server's socket.
    pub socket: PathBuf,
    /// The pane's id (`%0`).
    pub pane: String,
}

/// The pane's last line: what a shell prompt looks like, printed without a newline.
pub const PROMPT: &str = "PROMPT $";

impl Tmux {
    /// A tmux server whose one pane printed `seq 1 lines` then [`PROMPT`], with a
    /// `history-limit` that keeps all of it; returns once the prompt is the pane's last
    /// line. `None`: no tmux on `PATH`.
    pub fn with_scrollback(lines: u64) -> Option<Tmux> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let bin = tmux_bin()?;
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Short: a socket's path is at most 107 bytes.
        let dir = std::env::temp_dir().join(format!("backstop-tmux-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("tmux.conf");
        std::fs::write(
            &conf,
            format!(
                "set -g history-limit {}\nset -g default-shell /bin/sh\n",
                lines + 1_000
            ),
        )
        .unwrap();
        let mut tmux = Tmux {
            socket: dir.join("sock"),
            dir,
            bin,
            pane: String::new(),
        };
        let fill = format!("seq 1 {lines}; printf '%s' '{PROMPT}'; exec sleep 100000");
        let conf = conf.to_str().unwrap();
        let session = ["new-session", "-d", "-s", "seed", "-x", "80", "-y", "24"];
        let started = tmux.run(&[&["-f", conf][..], &session, &[&fill]].concat());
        assert!(started.status.success(), "tmux new-session: {started:?}");
        tmux.pane = tmux.query(&["display-message", "-p", "-t", "seed", "#{pane_id}"]);
        let start = Instant::now();
        loop {
            let screen = tmux.query(&["capture-pane", "-p", "-t", &tmux.pane]);
            if screen.lines().last() == Some(PROMPT) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the pane did not show the prompt within a minute: {screen:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(tmux)
    }

    /// What libtmux-mcp needs to reach this server (an MCP server config's `env`):
    /// `LIBTMUX_SOCKET_PATH` and `LIBTMUX_TMUX_BIN` (a client may give its servers no
    /// `PATH` of the test's).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "LIBTMUX_SOCKET_PATH",
                self.socket.to_str().unwrap().to_owned(),
            ),
            ("LIBTMUX_TMUX_BIN", self.bin.to_str().unwrap().to_owned()),
        ]
    }

    /// The pane's scrollback, in lines (`#{history_size}`), the screen's not counted.
    pub fn history_size(&self) -> u64 {
        self.query(&["display-message", "-p", "-t", &self.pane, "#{history_size}"])
            .parse()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.bin)
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("tmux runs")
    }

    fn query(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The case both agent clients run (SPEC L18): a pane of `lines` lines of scrollback
/// and a prompt, libtmux-mcp in front of it behind `backstop proxy` with no flags (its
/// command line), and the `capture_pane` arguments that ask for the whole scrollback.
/// `None` when tmux or libtmux-mcp is missing (said, or a failure with `CI=true`).
pub fn pane_behind_backstop(
    test: &str,
    lines: u64,
) -> Option<(Tmux, Vec<String>, serde_json::Value)> {
    let Some(python) = libtmux_mcp_python() else {
        crate::support::peer_missing(test, "libtmux-mcp (target/tmux-venv)");
        return None;
    };
    let Some(pane) = Tmux::with_scrollback(lines) else {
        crate::support::peer_missing(test, "tmux");
        return None;
    };
    assert!(pane.history_size() + 24 > lines, "all of it kept");
    let no_flags: &[&str] = &[];
    let server = crate::agents::proxied(
        &[python.to_str().unwrap(), "-m", "libtmux_mcp"],
        Some(no_flags),
    );
    let arguments =
        serde_json::json!({"pane_id": pane.pane, "start": -1_000_000, "max_lines": null});
    Some((pane, server, arguments))
}
