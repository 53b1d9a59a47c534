//! SPEC L15 (and L7) end to end through `backstop proxy`: a fastmcp tool with a
//! pydantic return type (`structured_log` in `tests/fastmcp/probe_server.py`, so
//! `tools/list` advertises its `outputSchema`), behind `backstop proxy --max-bytes
//! 4000`, driven by the official Python client (`mcp`) and the official TypeScript
//! client (`@modelcontextprotocol/sdk`). Both validate a result against the schema and
//! reject one that lacks `structuredContent`.
//!
//! Each client runs two sessions: straight to the server (the report as the tool made
//! it) and through the proxy. Locally a peer that is not installed is skipped with a
//! message; with `CI=true` it fails.

#[path = "../../../tests/peers/clients/official_clients.rs"]
mod official_clients;

use std::path::{Path, PathBuf};

use official_clients::{
    accepted, accepted_sessions, assert_structured_cut, listed, official_clients, venv_python,
    wire_size,
};
use serde_json::{Value, json};

const CAP: usize = 4000;

const TEST: &str = "l15_official_clients_accept_a_capped_pydantic_result_through_the_proxy";

/// A small report, then one of about 250 kB.
fn calls() -> Value {
    json!([
        {"name": "structured_log", "arguments": {"lines": 3}},
        {"name": "structured_log", "arguments": {"lines": 10_000}},
    ])
}

fn path(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// The fastmcp server's command line, straight or behind the proxy.
fn server(python: &Path, through_proxy: bool) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fastmcp/probe_server.py");
    let server = [path(python), path(&script)];
    if !through_proxy {
        return server.to_vec();
    }
    let proxy = [
        env!("CARGO_BIN_EXE_backstop").to_owned(),
        "proxy".into(),
        "--max-bytes".into(),
        CAP.to_string(),
        "--".into(),
    ];
    proxy.into_iter().chain(server).collect()
}

#[test]
fn l15_official_clients_accept_a_capped_pydantic_result_through_the_proxy() {
    let Some(python) = venv_python("fastmcp") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but target/fastmcp-venv is missing: .ci/run must create it"
        );
        println!("SKIPPED {TEST}: no fastmcp venv at target/fastmcp-venv (see .ci/run)");
        return;
    };
    let sessions = accepted_sessions(&official_clients(TEST), |client| {
        (
            client.drive(&calls(), &server(&python, false), &[]),
            client.drive(&calls(), &server(&python, true), &[]),
        )
    });
    for (direct, proxied) in &sessions {
        let who = &proxied["client"];

        // The listing passes as fastmcp made it, the schema kept (L15, A2).
        let schema = &listed(direct, "structured_log")["outputSchema"];
        assert_eq!(
            schema["required"],
            json!(["summary", "lines", "log"]),
            "{who}"
        );
        assert_eq!(
            listed(proxied, "structured_log"),
            listed(direct, "structured_log")
        );

        // Under the cap: untouched (L2).
        let small = accepted(proxied, 0);
        assert_eq!(
            small,
            accepted(direct, 0),
            "{who}: a small result is untouched"
        );
        assert_eq!(small["structuredContent"]["lines"], 3, "{who}");
        assert!(wire_size(small) <= CAP);

        // Over the cap: accepted by the client, its structure kept and cut inside.
        let original = accepted(direct, 1);
        let big = accepted(proxied, 1);
        assert_structured_cut(who, original, big, CAP, &["summary", "lines"]);
        let log = big["structuredContent"]["log"].as_str().unwrap();
        assert!(
            log.ends_with("log line 10000 of the build\nBUILD DONE"),
            "{who}: {log:?}"
        );
    }
}
