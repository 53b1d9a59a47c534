//! The structured cut (SPEC L15) on the shapes real servers send, pinned byte for byte:
//! fastmcp's pydantic result (the serialization as the one text block), an rmcp
//! `Json<T>` with a list of entries, a schema whose constraints forbid cutting, and a
//! result that no cut can fit (L15 c).

use backstop_core::{Limit, ToolResult, call::Content};
use serde_json::{Value, json};

fn with_serialization(value: Value) -> ToolResult {
    ToolResult {
        content: vec![Content::text(value.to_string())],
        structured_content: Some(value),
        ..ToolResult::default()
    }
}

fn wire(result: &ToolResult) -> String {
    serde_json::to_string(result).unwrap()
}

fn log_lines(n: usize) -> String {
    (1..=n)
        .map(|i| format!("step {i}: ok\n"))
        .collect::<String>()
        + "BUILD PASSED"
}

#[test]
fn a_long_log_field_keeps_its_tail_and_the_text_is_its_serialization() {
    let schema = json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "exit_code": {"type": "integer"},
            "log": {"type": "string"}
        },
        "required": ["summary", "exit_code", "log"]
    });
    let result = with_serialization(json!({
        "summary": "build of backstop", "exit_code": 0, "log": log_lines(200)
    }));
    let limited = Limit::new(600)
        .unwrap()
        .apply_with_schema("build", result, Some(&schema));
    let out = &limited.result;
    assert!(wire(out).len() <= 600, "L4");
    let value = out.structured_content.as_ref().unwrap();
    assert_eq!(value["summary"], "build of backstop");
    assert!(value["log"].as_str().unwrap().ends_with("BUILD PASSED"));
    // L17: the header block first, then the serialization of the cut value.
    let report = limited.truncation.as_ref().unwrap();
    assert_eq!(
        out.content[0].as_text().unwrap(),
        format!("[... truncated {} bytes ...]", report.dropped_bytes)
    );
    assert!(report.dropped_bytes > 0 && report.original_bytes > report.dropped_bytes);
    assert_eq!(out.content[1].as_text().unwrap(), value.to_string());
    insta::assert_snapshot!(wire(out));
}

#[test]
fn a_list_of_entries_loses_its_first_items() {
    let schema = json!({
        "$defs": {"Entry": {"type": "object", "properties": {
            "level": {"enum": ["info", "warn"]}, "message": {"type": "string"}},
            "required": ["level", "message"]}},
        "type": "object",
        "properties": {"entries": {"type": "array", "items": {"$ref": "#/$defs/Entry"}, "minItems": 1},
                       "total": {"type": "integer"}},
        "required": ["entries", "total"]
    });
    let entries: Vec<Value> = (1..=100)
        .map(|i| json!({"level": if i % 10 == 0 { "warn" } else { "info" }, "message": format!("event {i}")}))
        .collect();
    let result = with_serialization(json!({"entries": entries, "total": 100}));
    let limited = Limit::new(700)
        .unwrap()
        .apply_with_schema("events", result, Some(&schema));
    let out = &limited.result;
    assert!(wire(out).len() <= 700, "L4");
    let kept = out.structured_content.as_ref().unwrap()["entries"]
        .as_array()
        .unwrap();
    assert_eq!(kept.last().unwrap()["message"], "event 100");
    let report = &limited.truncation.as_ref().unwrap().structured;
    assert_eq!(report[0].pointer, "/entries");
    assert_eq!(report[0].dropped_items, Some(100 - kept.len()));
    insta::assert_snapshot!(wire(out));
}

#[test]
fn constrained_strings_stay_whole_and_other_text_is_cut_per_l3() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
            "state": {"enum": ["done", "failed"]},
            "notes": {"type": "string", "minLength": 12}
        },
        "required": ["id", "state", "notes"]
    });
    let value = json!({"id": "0123456789abcdef0123456789abcdef", "state": "done",
                       "notes": "n".repeat(400) + " — the end of the notes"});
    let result = ToolResult {
        content: vec![Content::text(log_lines(100))],
        structured_content: Some(value),
        ..ToolResult::default()
    };
    let limited = Limit::new(700)
        .unwrap()
        .apply_with_schema("job", result, Some(&schema));
    let out = &limited.result;
    assert!(wire(out).len() <= 700, "L4");
    let value = out.structured_content.as_ref().unwrap();
    assert_eq!(value["id"], "0123456789abcdef0123456789abcdef");
    assert!(value["notes"].as_str().unwrap().chars().count() >= 12);
    let text = out.content[0].as_text().unwrap();
    assert!(
        text.starts_with("[... truncated ") && text.ends_with("BUILD PASSED"),
        "L3"
    );
    insta::assert_snapshot!(wire(out));
}

#[test]
fn a_result_no_cut_can_fit_becomes_an_error_result() {
    let schema = json!({
        "type": "object",
        "properties": {"digest": {"type": "string", "format": "byte"}},
        "required": ["digest"]
    });
    let mut result = with_serialization(json!({"digest": "QUJD".repeat(500)}));
    result.meta = Some(serde_json::Map::from_iter([(
        "request".to_owned(),
        json!("r-1"),
    )]));
    let limited = Limit::new(600)
        .unwrap()
        .apply_with_schema("digest", result, Some(&schema));
    let out = &limited.result;
    assert!(wire(out).len() <= 600, "L4");
    assert!(out.is_error(), "L15 c");
    assert!(out.structured_content.is_none(), "E6");
    let meta = out.meta.as_ref().unwrap();
    assert_eq!(meta["error_type"], "ResultTooLarge");
    assert_eq!(meta["request"], "r-1", "L6");
    assert!(
        out.content[0]
            .as_text()
            .unwrap()
            .ends_with(backstop_core::limit::RESULT_TOO_LARGE_SUGGESTION)
    );
    insta::assert_snapshot!(wire(out));
}

#[test]
fn a_huge_field_is_cut_to_its_tail() {
    // L13's cost is measured by the benchmark (`structured_1MB_cap`); this is the path.
    let schema = json!({"type": "object", "properties": {"log": {"type": "string"}}});
    let result = with_serialization(json!({"log": "x".repeat(50_000_000) + "END"}));
    let limited = Limit::new(10_000)
        .unwrap()
        .apply_with_schema("t", result, Some(&schema));
    let value = limited.result.structured_content.unwrap();
    assert!(value["log"].as_str().unwrap().ends_with("xEND"));
    assert!(
        limited.result.content[0]
            .as_text()
            .unwrap()
            .starts_with("[... truncated ")
    );
    assert_eq!(
        limited.result.content[1].as_text().unwrap(),
        value.to_string()
    );
}
