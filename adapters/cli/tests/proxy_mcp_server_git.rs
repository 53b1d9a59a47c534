//! `backstop proxy` in front of the official `mcp-server-git` (PyPI, pinned in
//! `tests/peers/requirements.txt`, installed by `.ci/run` into `target/fastmcp-venv`):
//! its `git_log` lists the newest commit first, so a cap must keep the *head* of that
//! text for the agent to see HEAD (SPEC L16: `--keep git_log=head`), while the default
//! policy keeps the tail (L3) — both under the hard cap (L4).
//!
//! The repository is made by the test (`git fast-import`, 2,000 commits). Locally,
//! without the venv, the test is skipped with a message; with `CI=true` a missing venv
//! fails.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::Session;

const CAP: usize = 20_000;
const COMMITS: usize = 2_000;

/// A repository of `COMMITS` commits, `commit number 1` the oldest; its HEAD's id.
fn repository(dir: &Path) -> String {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q", "-b", "main"]);
    let mut import = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    let mut stream = String::new();
    for n in 1..=COMMITS {
        let when = 1_700_000_000 + n;
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter t <t@example.com> {when} +0000\ndata <<EOF\ncommit number {n}\nEOF\n\n"
        ));
    }
    import
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(import.wait().unwrap().success());
    git(&["checkout", "-q", "main"]);
    git(&["rev-parse", "HEAD"]).trim().to_owned()
}

/// The text of `git_log` over the whole history, through the proxy with `keep`.
fn git_log_through_proxy(python: &str, repo: &str, keep: &[&str]) -> Value {
    let backstop = support::backstop();
    let cap = CAP.to_string();
    let mut command = vec![backstop.to_str().unwrap(), "proxy", "--max-bytes", &cap];
    command.extend_from_slice(keep);
    command.extend_from_slice(&["--", python, "-m", "mcp_server_git", "--repository", repo]);
    Session::call_once(
        &command,
        "git_log",
        json!({"repo_path": repo, "max_count": COMMITS}),
    )
}

#[test]
fn l16_git_log_keeps_head_with_keep_head_and_the_oldest_commits_by_default() {
    let Some(python) = support::venv_python("mcp_server_git") else {
        support::peer_missing(
            "l16_git_log_keeps_head_with_keep_head_and_the_oldest_commits_by_default",
            "mcp-server-git (PyPI, in target/fastmcp-venv)",
        );
        return;
    };
    let python = python.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let head = repository(dir.path());
    let repo = dir.path().to_str().unwrap();

    let kept_head = git_log_through_proxy(python, repo, &["--keep", "git_log=head"]);
    assert!(serde_json::to_vec(&kept_head).unwrap().len() <= CAP, "L4");
    assert_eq!(kept_head["isError"], false, "L5");
    let text = kept_head["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("Commit history:\nCommit: {head}\n")),
        "the newest commit and the listing's first line stay: {:.200}",
        text
    );
    let header = text.rsplit_once('\n').unwrap().1;
    assert!(
        header.starts_with("[... truncated ") && header.ends_with(" bytes ...]"),
        "L16: under head the header line ends the text: {header}"
    );
    assert!(!text.contains("commit number 1\n"), "the oldest go");

    // The default keeps the tail: the oldest commits, not HEAD — what the issue met.
    let kept_tail = git_log_through_proxy(python, repo, &[]);
    assert!(serde_json::to_vec(&kept_tail).unwrap().len() <= CAP, "L4");
    let text = kept_tail["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated "), "L3: {:.100}", text);
    assert!(text.contains("commit number 1\n") && !text.contains(&head));
}
