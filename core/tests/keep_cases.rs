//! The keep policies of SPEC L16, by exact output: where the header line stands, what
//! each end keeps, the count N.

use backstop_core::limit::Keep;
use backstop_core::{Limit, ToolResult};

fn cut_text(keep: Keep, cap: usize, text: &str) -> String {
    let limited = Limit::new(cap)
        .unwrap()
        .with_keep(keep)
        .apply_to_result(ToolResult::text(text));
    assert!(serde_json::to_vec(&limited.result).unwrap().len() <= cap);
    limited.result.content[0].as_text().unwrap().to_owned()
}

fn listing() -> String {
    (0..400)
        .rev()
        .map(|n| format!("commit {n:04} message\n"))
        .collect()
}

#[test]
fn head_keeps_the_first_lines_and_ends_with_the_header() {
    insta::assert_snapshot!(cut_text(Keep::Head, 400, &listing()));
}

#[test]
fn head_and_tail_keep_both_ends_around_the_header() {
    let keep = Keep::HeadAndTail {
        head_per_mille: 500,
    };
    insta::assert_snapshot!(cut_text(keep, 500, &listing()));
}

#[test]
fn head_and_tail_with_a_fifth_for_the_head() {
    let keep: Keep = "head+tail:0.2".parse().unwrap();
    insta::assert_snapshot!(cut_text(keep, 500, &listing()));
}

#[test]
fn tail_is_the_default() {
    let tail = cut_text(Keep::Tail, 400, &listing());
    assert!(tail.starts_with("[... truncated "));
    assert_eq!(tail, cut_text(Keep::default(), 400, &listing()));
}

#[test]
fn a_tool_keeps_its_own_policy_and_others_the_default() {
    let limit = Limit::new(400).unwrap().keep_for("git_log", Keep::Head);
    let head = limit.apply("git_log", ToolResult::text(listing()));
    let tail = limit.apply("capture_pane", ToolResult::text(listing()));
    let head = head.result.content[0].as_text().unwrap();
    let tail = tail.result.content[0].as_text().unwrap();
    assert!(head.starts_with("commit 0399 message\n"), "{head}");
    assert!(tail.ends_with("commit 0000 message\n"), "{tail}");
    assert_eq!(
        limit
            .for_tool("git_log")
            .truncate(&ToolResult::text(listing()))
            .unwrap()
            .result
            .content[0]
            .as_text()
            .unwrap(),
        head
    );
}

/// A string held only at its tail (as the Python binding holds it) cannot decide a
/// head: the whole is asked for (`Err`). Holding a head as well decides it
/// (`in_part_properties.rs`).
#[test]
fn a_result_held_in_part_needs_the_whole_for_a_head() {
    use backstop_core::limit::HeldInPart;
    let tail = "line\n".repeat(50_000);
    let held = HeldInPart::default().with_text_head(0, 1_000_000);
    let result = ToolResult::text(tail);
    for keep in [
        Keep::Head,
        Keep::HeadAndTail {
            head_per_mille: 500,
        },
    ] {
        let limit = Limit::new(1_000).unwrap().with_keep(keep);
        assert_eq!(limit.truncate_in_part(&result, &held, None), Err(()));
    }
    let limit = Limit::new(1_000).unwrap();
    assert!(
        limit
            .truncate_in_part(&result, &held, None)
            .unwrap()
            .is_some()
    );
}

/// Borrowed texts (the Python binding's path) are cut as the whole result would be.
#[test]
fn borrowed_texts_cut_as_the_whole_under_every_policy() {
    let text = listing();
    let shell = ToolResult {
        content: vec![
            backstop_core::call::Content::text(""),
            backstop_core::call::Content::text(""),
        ],
        ..ToolResult::default()
    };
    for keep in [
        Keep::Tail,
        Keep::Head,
        Keep::HeadAndTail {
            head_per_mille: 250,
        },
    ] {
        let limit = Limit::new(600).unwrap().with_keep(keep);
        let whole = ToolResult {
            content: vec![
                backstop_core::call::Content::text(text.as_str()),
                backstop_core::call::Content::text("PROMPT $"),
            ],
            ..ToolResult::default()
        };
        let borrowed = limit.truncate_texts(&shell, &[&text, "PROMPT $"], None);
        assert_eq!(borrowed, limit.truncate(&whole), "{keep}");
    }
}

/// Without a text block, the result's own JSON is the text (L3), its head kept.
#[test]
fn a_result_without_text_keeps_the_head_of_its_json() {
    let image = ToolResult::from_value(serde_json::json!({"content": [
        {"type": "image", "mimeType": "image/png", "data": "QUJD".repeat(1000)}]}))
    .unwrap();
    let text = Limit::new(300)
        .unwrap()
        .with_keep(Keep::Head)
        .apply_to_result(image)
        .result
        .content[0]
        .as_text()
        .unwrap()
        .to_owned();
    assert!(text.starts_with(r#"{"content":[{"#), "{text}");
    assert!(text.ends_with(" bytes ...]"), "{text}");
}

fn structured(keep: Keep) -> String {
    let value = serde_json::json!({
        "commits": (0..60).rev().map(|n| format!("commit {n:02}")).collect::<Vec<_>>(),
        "page": (1..=80).map(|n| format!("line {n}\n")).collect::<String>(),
    });
    let result = ToolResult {
        content: vec![backstop_core::call::Content::text(value.to_string())],
        structured_content: Some(value),
        ..ToolResult::default()
    };
    let limited = Limit::new(700)
        .unwrap()
        .with_keep(keep)
        .apply_to_result(result);
    let wire = serde_json::to_string(&limited.result).unwrap();
    assert!(wire.len() <= 700);
    wire
}

/// L15 with L16: strings keep their heads, arrays their first items; L17: the header
/// block first.
#[test]
fn a_structured_cut_keeps_the_heads() {
    insta::assert_snapshot!(structured(Keep::Head));
}

/// L15 with L16: strings keep both ends around the header line, arrays their first
/// and last items.
#[test]
fn a_structured_cut_keeps_both_ends() {
    insta::assert_snapshot!(structured(Keep::HeadAndTail {
        head_per_mille: 500
    }));
}

/// L15 a with L16: under head and tail the header line is ASCII, so it can hold more
/// characters than the multibyte run it stands for. A string under `maxLength` keeps
/// its head instead, and still validates, at every cap that cuts it.
#[test]
fn a_max_length_string_is_never_lengthened_by_the_header() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 24}},
    });
    let name = "日本語".repeat(8); // 24 characters, 72 bytes
    let value = serde_json::json!({"name": name, "pad": "x".repeat(2000)});
    let keep = Keep::HeadAndTail {
        head_per_mille: 500,
    };
    let mut names_cut = 0;
    for cap in (Limit::min_bytes()..600).step_by(5) {
        let result = ToolResult {
            structured_content: Some(value.clone()),
            ..ToolResult::default()
        };
        let limited =
            Limit::new(cap)
                .unwrap()
                .with_keep(keep)
                .apply_with_schema("t", result, Some(&schema));
        let Some(cut) = limited.result.structured_content else {
            continue; // no cut fits: an error result (L15 c)
        };
        let kept = cut["name"].as_str().unwrap();
        assert!(kept.chars().count() <= 24, "cap {cap}: {kept}");
        if kept != name {
            assert!(name.starts_with(kept), "cap {cap}: {kept}");
            names_cut += 1;
        }
    }
    assert!(names_cut > 0, "no cap cut the name");
}
