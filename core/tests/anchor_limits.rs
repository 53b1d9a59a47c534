//! The reference's limiter cases (`data/anchor-limits.jsonl`, copied from the reference
//! wire capture), run through our limiter at the same cap of 1,000 bytes.
//!
//! Each input is rebuilt exactly from the reference's own output (its header count
//! plus its kept text give the input's length). Where the reference is right (the
//! header shape, `isError` and `_meta` kept, the tail kept) we match it; where
//! ANCHOR.md lists a defect (the cap overshot, a cut inside an emoji or escape
//! sequence or mid-line) the snapshot pins the fixed behaviour.

use backstop_core::{Limit, ToolResult, call::Content};
use serde_json::{Value, json};

const CAP: usize = 1000;
const SUGGESTION: &str = "Call list_panes to discover valid pane ids.";

/// The reference's response line for a tool, and the tool result in it.
fn reference(tool: &str) -> ToolResult {
    let data = include_str!("data/anchor-limits.jsonl");
    let line = data
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| {
            l["call"]["params"]["name"] == tool && l["raw"].as_str().unwrap().contains("truncated")
        })
        .or_else(|| {
            data.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|l| l["call"]["params"]["name"] == tool)
        })
        .unwrap_or_else(|| panic!("no reference line for {tool}"));
    let response: Value = serde_json::from_str(line["raw"].as_str().unwrap()).unwrap();
    ToolResult::from_value(response["result"].clone()).unwrap()
}

fn wire_size(result: &ToolResult) -> usize {
    serde_json::to_vec(result).unwrap().len()
}

/// The input the reference cut: `pattern` repeated, then `end`, to the reference's
/// original length (header count + kept bytes).
fn rebuilt(reference: &ToolResult, pattern: &str, end: &str) -> String {
    let text = reference.content[0].as_text().unwrap();
    let (header, kept) = text.split_once('\n').unwrap();
    let n: usize = header
        .strip_prefix("[... truncated ")
        .and_then(|h| h.strip_suffix(" bytes ...]"))
        .unwrap()
        .parse()
        .unwrap();
    let total = n + kept.len();
    let body = total - end.len();
    assert_eq!(
        body % pattern.len(),
        0,
        "the rebuilt input has the reference's length"
    );
    let input = pattern.repeat(body / pattern.len()) + end;
    assert!(
        input.ends_with(kept),
        "the reference kept a suffix of this input"
    );
    input
}

fn success(text: String) -> ToolResult {
    ToolResult {
        is_error: Some(false),
        meta: Some(Default::default()),
        ..ToolResult::text(text)
    }
}

/// Limit `input` at the reference's cap, check what must hold against the reference,
/// and return our wire output for the snapshot.
fn limit_like_the_reference(tool: &str, input: ToolResult) -> String {
    let theirs = reference(tool);
    let ours = Limit::new(CAP).unwrap().apply(tool, input.clone()).result;
    assert!(
        wire_size(&ours) <= CAP,
        "L4: ours is {} bytes",
        wire_size(&ours)
    );
    assert_eq!(ours.is_error, theirs.is_error, "L5, as the reference");
    let ours_text = ours.content[0].as_text().unwrap();
    let theirs_text = theirs.content[0].as_text().unwrap();
    assert!(
        ours_text.starts_with("[... truncated "),
        "header shape as the reference"
    );
    let ours_tail = ours_text.split_once('\n').unwrap().1;
    let theirs_tail = theirs_text.split_once('\n').unwrap().1;
    let input_text = input.content[0].as_text().unwrap();
    let end_at = input_text.char_indices().rev().nth(7).map_or(0, |(i, _)| i);
    let end = &input_text[end_at..];
    assert!(
        theirs_tail.ends_with(end) && ours_tail.ends_with(end),
        "the end survives"
    );
    assert!(
        input_text.ends_with(ours_tail),
        "L3: ours is a suffix of the input"
    );
    // The reference's own meta keys survive, beside our truncation report (L6, L12).
    let ours_meta = ours.meta.clone().unwrap();
    for key in theirs.meta.clone().unwrap_or_default().keys() {
        assert_eq!(
            ours_meta.get(key),
            theirs.meta.as_ref().unwrap().get(key),
            "_meta.{key}"
        );
    }
    serde_json::to_string(&ours).unwrap()
}

#[test]
fn plain_lines_fit_the_cap_and_start_at_a_line() {
    let theirs = reference("plain");
    assert!(wire_size(&theirs) > CAP, "defect 2: the reference overshot");
    let input = rebuilt(&theirs, "line of output\n", "PROMPT $");
    let out = limit_like_the_reference("plain", success(input));
    assert!(
        out.contains("bytes ...]\\nline of output\\n"),
        "L9: a whole first line"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn bare_newlines_are_counted_as_two_bytes_each() {
    let theirs = reference("newlines");
    assert!(wire_size(&theirs) > CAP, "defect 2: the reference overshot");
    let input = rebuilt(&theirs, "\n", "PROMPT $");
    insta::assert_snapshot!(limit_like_the_reference("newlines", success(input)));
}

#[test]
fn ansi_colour_codes_are_not_cut_and_escapes_are_counted() {
    let theirs = reference("ansi");
    assert!(wire_size(&theirs) > CAP, "defect 2: the reference overshot");
    let input = rebuilt(&theirs, "\u{1b}[31mred\u{1b}[0m\n", "PROMPT $");
    let out = limit_like_the_reference("ansi", success(input));
    assert!(
        out.contains("bytes ...]\\n\\u001b[31mred"),
        "L8/L9: starts at a whole line"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn emoji_families_are_never_split() {
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let theirs = reference("emoji");
    let theirs_tail = theirs.content[0]
        .as_text()
        .unwrap()
        .split_once('\n')
        .unwrap()
        .1;
    assert!(
        theirs_tail.starts_with('\u{200d}'),
        "defect 3: the reference split a family"
    );
    let input = rebuilt(&theirs, family, "END");
    let out = limit_like_the_reference("emoji", success(input));
    let ours = serde_json::from_str::<ToolResult>(&out).unwrap();
    let tail = ours.content[0]
        .as_text()
        .unwrap()
        .split_once('\n')
        .unwrap()
        .1
        .to_owned();
    assert!(
        tail.starts_with(family),
        "L8: the tail starts with a whole family"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn letters_without_line_breaks_cut_at_a_grapheme() {
    let theirs = reference("limited_ok");
    let input = rebuilt(&theirs, "y", "");
    insta::assert_snapshot!(limit_like_the_reference("limited_ok", success(input)));
}

#[test]
fn an_oversized_error_stays_an_error_with_its_meta_and_suggestion() {
    let theirs = reference("limited_fail");
    assert!(
        wire_size(&theirs) > CAP,
        "defect 2: the reference did not count _meta"
    );
    let message = format!("Invalid name: '{}'", "x".repeat(1050));
    let input = ToolResult {
        content: vec![Content::text(format!("{message}\n{SUGGESTION}"))],
        is_error: Some(true),
        meta:
            json!({"error_type": "ExpectedToolError", "expected": true, "suggestion": SUGGESTION})
                .as_object()
                .cloned(),
        ..ToolResult::default()
    };
    assert_eq!(
        input.content[0].as_text().unwrap().len(),
        rebuilt_len(&theirs)
    );
    let out = limit_like_the_reference("limited_fail", input);
    assert!(out.ends_with(&format!(
        "\\n{SUGGESTION}\",\"type\":\"text\"}}],\"isError\":true}}"
    )));
    insta::assert_snapshot!(out);
}

/// The original text length of a reference cut.
fn rebuilt_len(reference: &ToolResult) -> usize {
    let text = reference.content[0].as_text().unwrap();
    let (header, kept) = text.split_once('\n').unwrap();
    let n: usize = header
        .trim_start_matches("[... truncated ")
        .trim_end_matches(" bytes ...]")
        .parse()
        .unwrap();
    n + kept.len()
}

#[test]
fn results_under_the_cap_are_returned_unchanged() {
    let theirs = reference("small");
    let limited = Limit::new(CAP).unwrap().apply("small", theirs.clone());
    assert!(limited.truncation.is_none(), "L2");
    assert_eq!(
        serde_json::to_string(&limited.result).unwrap(),
        serde_json::to_string(&theirs).unwrap()
    );
}
