//! The text of a result with no text block: the JSON of the members a cut replaces
//! (SPEC L3), of which only the end that a cut can keep is held (L13).

use serde::Serialize;
use serde_json::Value;

use super::{Keep, escape};
use crate::result::{Content, ToolResult};

/// The members a cut replaces, for results with no text block, as they serialize.
#[derive(Serialize)]
struct Payload<'a> {
    content: &'a [Content],
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Value>,
}

impl<'a> Payload<'a> {
    fn of(result: &'a ToolResult) -> Self {
        Payload {
            content: &result.content,
            structured_content: result.structured_content.as_ref(),
        }
    }
}

/// The JSON of the members a cut replaces, for results with no text block.
pub(super) fn payload_json(result: &ToolResult) -> String {
    serde_json::to_string(&Payload::of(result)).unwrap_or_default()
}

/// The end of [`payload_json`], and how many bytes before it were not kept: enough of
/// the end for any cut under `cap` to be the cut of the whole JSON (SPEC L13: memory
/// bounded by the cap, not by the result).
pub(super) struct PayloadTail {
    pub(super) elided: usize,
    pub(super) tail: String,
}

/// Bytes held before the earliest place a cut's window can start, for a grapheme
/// cursor's look-behind (see [`PayloadTail::of`]).
const PAYLOAD_MARGIN: usize = 4096;

impl PayloadTail {
    /// [`PayloadTail::of`] for a cut that keeps the tail; a cut that keeps a head
    /// (L16) is made from the whole JSON, held whole.
    pub(super) fn for_keep(result: &ToolResult, cap: usize, keep: Keep) -> Self {
        match keep {
            Keep::Tail => Self::of(result, cap),
            Keep::Head | Keep::HeadAndTail { .. } => Self {
                elided: 0,
                tail: payload_json(result),
            },
        }
    }

    /// The JSON's end, from a character boundary.
    ///
    /// A cut under `cap` keeps at most `cap` bytes (each costs at least one on the
    /// wire) and reads at most [`escape::LOOKBACK`] bytes before them (JSON text holds
    /// no raw control character, so no escape sequence either); what a grapheme
    /// cursor reads before that stops at the first ASCII character (no grapheme rule
    /// looks behind one). So the tail held is the whole JSON when an ASCII byte lies in
    /// it before all of that, which JSON punctuation nearly always provides; when not,
    /// the whole JSON is held, as before.
    pub(super) fn of(result: &ToolResult, cap: usize) -> Self {
        let reach = cap.saturating_add(escape::LOOKBACK + 4);
        let keep = reach.saturating_add(PAYLOAD_MARGIN);
        let mut writer = TailWriter::new(keep);
        if serde_json::to_writer(&mut writer, &Payload::of(result)).is_ok()
            && let Some(tail) = writer.tail()
        {
            let elided = writer.written - tail.len();
            let before_reach = &tail.as_bytes()[..tail.len().saturating_sub(reach)];
            if elided == 0 || before_reach.iter().any(u8::is_ascii) {
                return Self { elided, tail };
            }
        }
        Self {
            elided: 0,
            tail: payload_json(result),
        }
    }
}

/// A writer that counts what it is given and keeps only the last bytes of it: at
/// least `keep` of them (all when fewer were written), at most twice that.
struct TailWriter {
    keep: usize,
    held: Vec<u8>,
    written: usize,
}

impl TailWriter {
    fn new(keep: usize) -> Self {
        Self {
            keep,
            held: Vec::new(),
            written: 0,
        }
    }

    /// What is held, from its first character boundary, as text (`None` if it is not
    /// UTF-8 there, which `serde_json` output always is).
    fn tail(&mut self) -> Option<String> {
        let held = std::mem::take(&mut self.held);
        let start = held
            .iter()
            .position(|&b| b & 0xC0 != 0x80)
            .unwrap_or(held.len());
        String::from_utf8(held[start..].to_vec()).ok()
    }
}

impl std::io::Write for TailWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.written += bytes.len();
        if bytes.len() >= self.keep {
            self.held.clear();
            self.held
                .extend_from_slice(&bytes[bytes.len() - self.keep..]);
        } else {
            if self.held.len() + bytes.len() > self.keep.saturating_mul(2) {
                let drop = self.held.len() - self.keep;
                self.held.drain(..drop);
            }
            self.held.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::joined::Joined;
    use super::super::{Cutter, Limit, Limited, MetaKept};
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    /// The cut as it was made before the tail was bounded: from the whole JSON.
    fn cut_of_the_whole_json(limit: &Limit, result: &ToolResult) -> Limited {
        let json = payload_json(result);
        let joined = Joined::new([json.as_str()]);
        let cutter = Cutter {
            limit,
            source: result,
            joined: &joined,
            elided: 0,
            non_text: result.content.len(),
        };
        cutter
            .cut(MetaKept::All)
            .or_else(|| cutter.cut(MetaKept::ErrorKeys))
            .unwrap_or_else(|| cutter.header_only())
    }

    fn blob(data: String) -> ToolResult {
        ToolResult {
            content: vec![Content::Other(serde_json::json!({
                "type": "image", "mimeType": "image/png", "data": data,
            }))],
            ..ToolResult::default()
        }
    }

    #[test]
    fn a_huge_blob_is_held_only_at_its_end() {
        let cap = 10_000;
        let result = blob("QUJD".repeat(2_500_000)); // 10 MB of base64
        let payload = PayloadTail::of(&result, cap);
        assert!(payload.elided > 9_900_000, "elided {}", payload.elided);
        let keep = cap + escape::LOOKBACK + 4 + PAYLOAD_MARGIN;
        assert!(payload.tail.len() >= keep && payload.tail.len() <= 2 * keep);
        assert_eq!(
            payload.elided + payload.tail.len(),
            payload_json(&result).len()
        );
        assert!(payload_json(&result).ends_with(&payload.tail));
        let limit = Limit::new(cap).unwrap();
        assert_eq!(
            limit.truncate(&result).unwrap(),
            cut_of_the_whole_json(&limit, &result)
        );
    }

    #[test]
    fn without_ascii_before_the_reach_the_whole_json_is_held() {
        // Flags are pairs of regional indicators: where a cut may fall depends on
        // how many came before, back to the start of the run.
        let cap = 10_000;
        for flags in [20_000, 20_001] {
            let result = blob("🇺🇸".repeat(flags).chars().skip(1).collect());
            let payload = PayloadTail::of(&result, cap);
            assert_eq!(payload.elided, 0);
            let limit = Limit::new(cap).unwrap().line_aligned(false);
            assert_eq!(
                limit.truncate(&result).unwrap(),
                cut_of_the_whole_json(&limit, &result)
            );
        }
    }

    #[test]
    fn a_huge_result_no_cut_can_fit_its_schema_is_held_only_at_its_end() {
        // L15 c without a text block: the error result's text is the JSON, then the
        // suggestion; only the JSON's end is held, and the count covers all of it.
        let cap = 10_000;
        let result = ToolResult {
            structured_content: Some(serde_json::json!({"state": "x".repeat(5_000_000)})),
            ..ToolResult::default()
        };
        let schema = serde_json::json!({"properties": {"state": {"enum": ["x"]}}});
        let limited = Limit::new(cap)
            .unwrap()
            .truncate_with_schema(&result, Some(&schema))
            .unwrap();
        assert!(limited.result.is_error());
        let whole = payload_json(&result) + "\n\n" + super::super::RESULT_TOO_LARGE_SUGGESTION;
        let text = limited.result.content[0].as_text().unwrap();
        let (header, tail) = text.split_once('\n').unwrap();
        let dropped = whole.len() - tail.len();
        assert_eq!(header, format!("[... truncated {dropped} bytes ...]"));
        assert!(
            whole.ends_with(tail) && tail.len() > cap / 2,
            "{} kept",
            tail.len()
        );
        let report = limited.truncation.unwrap();
        assert_eq!(
            (report.dropped_bytes, report.original_bytes),
            (dropped, whole.len())
        );
        assert!(serde_json::to_vec(&limited.result).unwrap().len() <= cap);
    }

    #[test]
    fn the_writer_keeps_between_one_and_two_times_its_keep() {
        let mut writer = TailWriter::new(10);
        let mut all = Vec::new();
        for n in 0..200u8 {
            let piece = vec![b'a' + n % 26; usize::from(n % 13)];
            writer.write_all(&piece).unwrap();
            all.extend_from_slice(&piece);
            assert!(writer.held.len() <= 20, "{} held", writer.held.len());
            assert!(all.ends_with(&writer.held));
            assert!(writer.held.len() >= 10.min(all.len()));
        }
        writer.write_all(&[b'z'; 50]).unwrap();
        assert_eq!(writer.held, [b'z'; 10]);
        assert_eq!(writer.written, all.len() + 50);
        writer.flush().unwrap();
    }

    #[test]
    fn the_tail_starts_at_a_character_boundary() {
        let mut writer = TailWriter::new(4);
        for piece in ["€", "€", "", "€"] {
            writer.write_all(piece.as_bytes()).unwrap();
        }
        // The third € made room by dropping the first's first two bytes.
        assert_eq!(writer.held.len(), 7);
        assert_eq!(writer.tail().as_deref(), Some("€€"));
        let mut writer = TailWriter::new(4);
        writer.write_all("€€".as_bytes()).unwrap();
        assert_eq!(writer.tail().as_deref(), Some("€"));
    }

    /// Text, multi-byte and combining characters, flags, escapes that cost more than
    /// one byte, a CSI, and the start of an OSC that runs on over the next runs.
    const FRAGMENTS: [&str; 10] = [
        "\u{1b}]0;",
        "A",
        "é",
        "🇺🇸",
        "\u{301}",
        "\"",
        "\n",
        "\u{1b}[31m",
        "😀\u{200d}",
        "ab\r\n",
    ];

    fn data() -> impl Strategy<Value = String> {
        let run = (
            prop::sample::select(&FRAGMENTS[..]),
            prop_oneof![0usize..8, 1000usize..12_000],
        );
        prop::collection::vec(run, 1..6).prop_map(|runs| {
            runs.into_iter()
                .map(|(fragment, n)| fragment.repeat(n))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// L13 without changing a byte: the cut of the held end is the cut of the whole.
        #[test]
        fn the_held_end_cuts_as_the_whole_json_does(
            blocks in prop::collection::vec(data(), 1..3),
            cap in Limit::min_bytes()..3_000usize,
            line_aligned in any::<bool>(),
        ) {
            let result = ToolResult {
                content: blocks
                    .into_iter()
                    .map(|data| Content::Other(serde_json::json!({"type": "blob", "data": data})))
                    .collect(),
                ..ToolResult::default()
            };
            let limit = Limit::new(cap).unwrap().line_aligned(line_aligned);
            if let Some(cut) = limit.truncate(&result) {
                prop_assert_eq!(cut, cut_of_the_whole_json(&limit, &result));
            }
        }
    }
}
