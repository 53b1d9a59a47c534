//! SPEC L17 (with L3 and L16): a cut that drops no byte of the text but drops blocks
//! other than text says so in its header line — never "truncated 0 bytes" — under
//! every keep policy, in the text cut and in the structured cut's header block.

use backstop_core::limit::Keep;
use backstop_core::{Limit, ToolResult, call::Content};
use serde_json::json;

fn image() -> Content {
    Content::Other(json!({"type": "image", "mimeType": "image/png", "data": "QUFB".repeat(500)}))
}

#[test]
fn l17_only_non_text_blocks_dropped_names_them_under_every_policy() {
    let result = ToolResult {
        content: vec![Content::text("PROMPT $"), image(), image()],
        ..ToolResult::default()
    };
    for (keep, text) in [
        (
            Keep::Tail,
            "[... truncated 2 non-text blocks ...]\nPROMPT $",
        ),
        (
            Keep::Head,
            "PROMPT $\n[... truncated 2 non-text blocks ...]",
        ),
        (
            Keep::HeadAndTail {
                head_per_mille: 500,
            },
            "PROMPT $\n[... truncated 2 non-text blocks ...]\n",
        ),
    ] {
        let limited = Limit::new(400)
            .unwrap()
            .with_keep(keep)
            .apply_to_result(result.clone());
        assert_eq!(limited.result.content, [Content::text(text)], "{keep}");
        let report = limited.truncation.unwrap();
        assert_eq!(
            (report.dropped_bytes, report.dropped_blocks),
            (0, 2),
            "{keep}"
        );
        assert!(serde_json::to_vec(&limited.result).unwrap().len() <= 400);
    }
    // One block: singular; and a text that loses bytes still counts them.
    let one = ToolResult {
        content: vec![Content::text("PROMPT $"), image()],
        ..ToolResult::default()
    };
    let limited = Limit::new(400).unwrap().apply_to_result(one);
    assert_eq!(
        limited.result.content,
        [Content::text(
            "[... truncated 1 non-text block ...]\nPROMPT $"
        )]
    );
    let both = ToolResult {
        content: vec![Content::text("line\n".repeat(200)), image()],
        ..ToolResult::default()
    };
    let text = Limit::new(400)
        .unwrap()
        .apply_to_result(both)
        .result
        .content[0]
        .as_text()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("[... truncated ") && text.contains(" bytes ...]\nline\n"));
}

#[test]
fn l17_the_structured_header_block_names_dropped_blocks() {
    let value = json!({"status": "ok"});
    let result = ToolResult {
        content: vec![Content::text(value.to_string()), image()],
        structured_content: Some(value.clone()),
        ..ToolResult::default()
    };
    let limited = Limit::new(400).unwrap().apply_to_result(result);
    assert_eq!(
        limited.result.content,
        [
            Content::text("[... truncated 1 non-text block ...]"),
            Content::text(value.to_string())
        ]
    );
    assert_eq!(limited.truncation.unwrap().dropped_blocks, 1);
}
