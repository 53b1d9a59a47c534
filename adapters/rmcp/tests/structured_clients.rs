//! SPEC L15 (and L7) end to end: the `structured_server` example — a `Json<Report>`
//! tool behind backstop-rmcp — driven by the official Python client (`mcp`) and the
//! official TypeScript client (`@modelcontextprotocol/sdk`), both of which validate a
//! result against the tool's advertised `outputSchema` and reject one that lacks
//! `structuredContent`.
//!
//! Each client runs two sessions: one under the default cap (the report as the tool
//! made it) and one under a small cap. Locally a client that is not installed is
//! skipped with a message; with `CI=true` it fails.

mod support;

#[path = "../../../tests/peers/clients/official_clients.rs"]
#[allow(dead_code)]
mod official_clients;
#[path = "../examples/support/structured_tools.rs"]
#[allow(dead_code)]
mod structured_tools;

use official_clients::{
    accepted, accepted_sessions, assert_structured_cut, listed, official_clients, wire_size,
};
use serde_json::{Value, json};
use structured_tools::SUMMARY;

const CAP: usize = 4000;

/// A small report, then one of about 240 kB: both under the default cap, the second
/// far over `CAP`.
fn calls() -> Value {
    json!([
        {"name": "report", "arguments": {"lines": 3, "entries": 2}},
        {"name": "report", "arguments": {"lines": 10_000, "entries": 3}},
    ])
}

fn server() -> Vec<String> {
    let binary = support::example_binary("structured_server");
    vec![binary.to_str().expect("a UTF-8 path").to_owned()]
}

#[test]
fn l15_official_clients_accept_a_capped_json_result_of_backstop_rmcp() {
    let clients =
        official_clients("l15_official_clients_accept_a_capped_json_result_of_backstop_rmcp");
    let cap = CAP.to_string();
    let sessions = accepted_sessions(&clients, |client| {
        // The reader's limits off (L18: a client without a profile gets the smallest):
        // the default byte cap lets the whole report through, `CAP` cuts it.
        let uncapped = [
            ("BACKSTOP_MAX_BYTES", "1000000"),
            ("BACKSTOP_MAX_CHARS", "none"),
            ("BACKSTOP_MAX_TOKENS", "none"),
        ];
        let capped = [
            ("BACKSTOP_MAX_BYTES", cap.as_str()),
            ("BACKSTOP_MAX_CHARS", "none"),
            ("BACKSTOP_MAX_TOKENS", "none"),
        ];
        (
            client.drive(&calls(), &server(), &uncapped),
            client.drive(&calls(), &server(), &capped),
        )
    });
    for (uncapped, capped) in &sessions {
        let who = &capped["client"];

        // rmcp advertises the schema of Json<Report>; backstop keeps it (L15, not
        // fastmcp's way of deleting it).
        let schema = &listed(uncapped, "report")["outputSchema"];
        assert_eq!(schema["type"], "object", "{who}: {schema}");
        assert_eq!(&listed(capped, "report")["outputSchema"], schema, "{who}");

        // Under the cap: untouched (L2), as the tool made it.
        let small = accepted(capped, 0);
        assert_eq!(
            small,
            accepted(uncapped, 0),
            "{who}: a small result is untouched"
        );
        let report = serde_json::to_value(structured_tools::report(3, 2)).unwrap();
        assert_eq!(small["structuredContent"], report, "{who}");
        assert!(wire_size(small) <= CAP);

        // Over the cap: accepted by the client, its structure kept and cut inside.
        let original = accepted(uncapped, 1);
        assert_eq!(
            original["structuredContent"],
            serde_json::to_value(structured_tools::report(10_000, 3)).unwrap(),
            "{who}: the default cap lets the whole report through"
        );
        let big = accepted(capped, 1);
        assert_structured_cut(who, original, big, CAP, &["summary", "lines"]);
        assert_eq!(big["structuredContent"]["summary"], SUMMARY, "{who}");
        let log = big["structuredContent"]["log"].as_str().unwrap();
        assert!(
            log.ends_with("log line 10000 of the build\nBUILD DONE"),
            "{who}: {log:?}"
        );
    }
}
