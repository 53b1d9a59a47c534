//! The official MCP clients — the Python SDK `mcp` (PyPI) and the TypeScript SDK
//! `@modelcontextprotocol/sdk` (npm), pinned in `tests/peers/` and installed by
//! `.ci/run` — driven against a server on stdio by the scripts next to this file, and
//! what a test of SPEC L15 checks in what they received.
//!
//! Included with `#[path]` by the end-to-end tests of backstop-rmcp and
//! backstop (both two directories below the checkout's root). Locally a client
//! that is not installed is skipped with a message; with `CI=true` it fails the test.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The checkout's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One official client, ready to run: the interpreter and its driver script.
#[derive(Debug)]
pub struct OfficialClient {
    /// `python` or `typescript`.
    pub name: &'static str,
    program: PathBuf,
    script: PathBuf,
}

/// Whether `program args…` runs and exits 0.
fn runs(program: &PathBuf, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|output| output.status.success())
}

/// The python of `BACKSTOP_FASTMCP_PYTHON` or `target/fastmcp-venv`, if it can
/// import `module`.
pub fn venv_python(module: &str) -> Option<PathBuf> {
    let program = std::env::var_os("BACKSTOP_FASTMCP_PYTHON").map_or_else(
        || root().join("target/fastmcp-venv/bin/python"),
        PathBuf::from,
    );
    runs(&program, &["-c", &format!("import {module}")]).then_some(program)
}

/// The Python client, from the venv.
fn python_client() -> Option<OfficialClient> {
    venv_python("mcp.client.stdio").map(|program| OfficialClient {
        name: "python",
        program,
        script: root().join("tests/peers/clients/python_client.py"),
    })
}

/// The TypeScript client: `node` (or `BACKSTOP_NODE`) and the SDK in
/// `BACKSTOP_NODE_PEERS` or `target/node-peers`.
fn typescript_client() -> Option<OfficialClient> {
    let program = std::env::var_os("BACKSTOP_NODE").map_or_else(|| "node".into(), PathBuf::from);
    let peers = std::env::var_os("BACKSTOP_NODE_PEERS")
        .map_or_else(|| root().join("target/node-peers"), PathBuf::from);
    let sdk = peers.join("node_modules/@modelcontextprotocol/sdk/package.json");
    (sdk.is_file() && runs(&program, &["--version"])).then(|| OfficialClient {
        name: "typescript",
        program,
        script: root().join("tests/peers/clients/typescript_client.mjs"),
    })
}

/// Every official client that is installed. One that is missing is skipped with a
/// message naming `test`; with `CI=true` it fails instead.
pub fn official_clients(test: &str) -> Vec<OfficialClient> {
    let candidates = [
        (
            "python",
            python_client(),
            "target/fastmcp-venv with mcp (tests/peers/requirements.txt)",
        ),
        (
            "typescript",
            typescript_client(),
            "node and target/node-peers (tests/peers/package.json)",
        ),
    ];
    let mut found = Vec::new();
    for (name, client, needs) in candidates {
        match client {
            Some(client) => found.push(client),
            None => {
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "CI=true but the official {name} client is missing: .ci/run must install {needs}"
                );
                println!("SKIPPED {test} with the official {name} client: it needs {needs}");
            }
        }
    }
    found
}

impl OfficialClient {
    /// Start `server` (a command line) under this client with `env` added to this
    /// process's environment, list its tools, make `calls` (a JSON array of
    /// `{"name", "arguments"}`), and return what the driver printed:
    /// `{"client", "tools", "calls": [{"result"} | {"error"}]}`.
    pub fn drive(&self, calls: &Value, server: &[String], env: &[(&str, &str)]) -> Value {
        let output = Command::new(&self.program)
            .arg(&self.script)
            .arg(calls.to_string())
            .arg("--")
            .args(server)
            .envs(env.iter().copied())
            .output()
            .unwrap_or_else(|e| panic!("the {} client starts: {e}", self.name));
        assert!(
            output.status.success(),
            "the {} client failed ({}): {}",
            self.name,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "the {} client printed no JSON ({e}): {}",
                self.name,
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }
}

/// The wire size of a result as the client received it (L4 measures the result
/// object, serialized compactly).
pub fn wire_size(result: &Value) -> usize {
    serde_json::to_vec(result).map_or(usize::MAX, |bytes| bytes.len())
}

/// The tool named `name` in a driver's listing.
pub fn listed<'a>(session: &'a Value, name: &str) -> &'a Value {
    session["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
        .unwrap_or_else(|| panic!("{name} is listed: {}", session["tools"]))
}

/// The two sessions `run` makes with each client (the uncut one, then the capped
/// one), once every call of every session is known to have been accepted: a call a
/// client raised on fails the test with every client's message, so that one client's
/// failure does not hide another's.
pub fn accepted_sessions(
    clients: &[OfficialClient],
    run: impl Fn(&OfficialClient) -> (Value, Value),
) -> Vec<(Value, Value)> {
    let sessions: Vec<(Value, Value)> = clients.iter().map(run).collect();
    let rejected: Vec<String> = sessions
        .iter()
        .flat_map(|(uncut, capped)| [uncut, capped])
        .flat_map(|session| {
            let calls = session["calls"].as_array().cloned().unwrap_or_default();
            calls.into_iter().enumerate().filter_map(move |(n, call)| {
                let error = call.get("error")?;
                Some(format!("{} rejected call {n}: {error}", session["client"]))
            })
        })
        .collect();
    assert!(rejected.is_empty(), "{rejected:#?}");
    sessions
}

/// The result of call `n`; a client's exception fails the test with its message.
pub fn accepted(session: &Value, n: usize) -> &Value {
    let call = &session["calls"][n];
    assert!(
        call.get("error").is_none(),
        "{} rejected call {n}: {}",
        session["client"],
        call["error"]
    );
    &call["result"]
}

/// SPEC L15(a) as a client sees it: `capped` is the result of a call whose uncut
/// result `original` is over `cap`; the client accepted it (no exception — checked by
/// [`accepted`]), and it keeps its `structuredContent`, cut inside: under the cap, every
/// member the cut may not touch as it was (`intact`), the string member `log` a
/// proper suffix of the original's, each array a suffix of the original's, the text
/// block the serialization of the cut value, the cut reported in
/// `_meta["backstop/truncation"]`.
pub fn assert_structured_cut(
    client: &Value,
    original: &Value,
    capped: &Value,
    cap: usize,
    intact: &[&str],
) {
    let whole = &original["structuredContent"];
    assert!(
        wire_size(original) > cap,
        "{client}: the original is over the cap"
    );
    assert!(
        whole.is_object(),
        "{client}: the original is structured: {original}"
    );

    let cut = capped
        .get("structuredContent")
        .unwrap_or_else(|| panic!("{client}: structuredContent is kept (L7, L15): {capped}"));
    assert!(
        wire_size(capped) <= cap,
        "{client}: {} bytes > cap {cap} (L4)",
        wire_size(capped)
    );
    assert_ne!(
        capped["isError"], true,
        "{client}: a cut that fits is no error (L5)"
    );
    for member in intact {
        assert_eq!(
            cut[member], whole[member],
            "{client}: {member} is kept as it was"
        );
    }

    let log = cut["log"]
        .as_str()
        .unwrap_or_else(|| panic!("{client}: log is a string: {cut}"));
    let whole_log = whole["log"].as_str().unwrap();
    assert!(
        whole_log.ends_with(log) && log.len() < whole_log.len(),
        "{client}: log is a proper suffix of the original's: {log:?}"
    );
    for (member, value) in cut.as_object().unwrap() {
        if let (Some(kept), Some(all)) = (value.as_array(), whole[member].as_array()) {
            assert!(
                all.ends_with(kept),
                "{client}: {member} keeps the last items: {value}"
            );
        }
    }

    let text: Vec<&Value> = capped["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block.get("text"))
                .collect()
        })
        .unwrap_or_default();
    let serialized = text
        .iter()
        .find_map(|text| serde_json::from_str::<Value>(text.as_str()?).ok());
    assert_eq!(
        serialized.as_ref(),
        Some(cut),
        "{client}: the text block is the serialization of the cut value: {text:?}"
    );
    assert!(
        capped["_meta"]["backstop/truncation"].is_object(),
        "{client}: the cut is reported (L12, L15): {}",
        capped["_meta"]
    );
    // L17: the cut is visible where the model reads — the text blocks held only the
    // serialization, so a block with the header line comes first — and the report's
    // numbers say what was dropped, at the top and for each cut value.
    let first = text
        .first()
        .and_then(|text| text.as_str())
        .unwrap_or_default();
    assert!(
        first.starts_with("[... truncated ") && first.ends_with(" bytes ...]"),
        "{client}: L17: a header block first: {text:?}"
    );
    let report = &capped["_meta"]["backstop/truncation"];
    assert!(
        report["dropped_bytes"].as_u64() > Some(0) && report["original_bytes"].as_u64() > Some(0),
        "{client}: L17: the report's numbers: {report}"
    );
    for cut_value in report["structured"].as_array().into_iter().flatten() {
        assert!(
            cut_value["dropped_bytes"].as_u64() > Some(0)
                || cut_value["dropped_items"].as_u64() > Some(0),
            "{client}: L17: each cut value's numbers: {cut_value}"
        );
    }
}
