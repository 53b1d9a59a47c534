//! The last line of defence for V3: pydantic's `input_value=…` and `input_type=…`
//! fragments cut out of a text that no recogniser read.

use std::borrow::Cow;

/// The key before a rejected value in pydantic's `[type=…, input_value=…, input_type=…]`.
const INPUT_VALUE: &str = "input_value=";
/// The key before the rejected value's type name.
const INPUT_TYPE: &str = "input_type=";

/// The last line of defence for V3: `text` without the `input_value=…` and
/// `input_type=…` fragments of pydantic's `[type=…, input_value=…, input_type=…]`
/// brackets — for texts that look like pydantic's but were not recognised (a new
/// prefix, a new layout, a model that is not a tool's arguments). A text with neither
/// fragment is returned as it is (borrowed), so that it can pass byte-identical.
///
/// pydantic writes a value as its `repr`, which has no raw line break, so that where
/// every line holds at most one bracket, each value is cut exactly: from `input_value=`
/// to the type name before its `]`. Where the text is not laid out so (a value with a
/// line break, or with `input_value=` / `input_type=` in it), everything from the first
/// `input_value=` to the last `input_type=…` goes — the lines between included: a
/// value's end cannot be told from the text there, and V3 comes first. A message that
/// quotes the value in its own words is beyond this; the recognisers ([`recognize`](super::recognize))
/// redact those in the texts they know.
///
/// ```
/// use backstop_core::call::redact_input_values;
/// let text = "Error: 1 validation error for Order\ncount\n  Input should be a valid integer \
///     [type=int_parsing, input_value='hunter2', input_type=str]";
/// assert_eq!(redact_input_values(text),
///     "Error: 1 validation error for Order\ncount\n  Input should be a valid integer [type=int_parsing]");
/// assert!(matches!(redact_input_values("Pane not found"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn redact_input_values(text: &str) -> Cow<'_, str> {
    if !text.contains(INPUT_VALUE) && !text.contains(INPUT_TYPE) {
        return Cow::Borrowed(text);
    }
    let cuts = exact_cuts(text).unwrap_or_else(|| vec![greedy_cut(text)]);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (from, to) in cuts {
        out.push_str(&text[at..from]);
        at = to;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The byte range of each value fragment, when every line holds at most one bracket's
/// `input_value=…, input_type=<name>` (in that order) and no stray key: the layout
/// pydantic writes, where a value cannot run past its own line.
pub(super) fn exact_cuts(text: &str) -> Option<Vec<(usize, usize)>> {
    let mut cuts = Vec::new();
    let mut start = 0;
    for line in text.split('\n') {
        let values = line.matches(INPUT_VALUE).count();
        let types = line.matches(INPUT_TYPE).count();
        match (values, types) {
            (0, 0) => {}
            (1, 1) => {
                let value = line.find(INPUT_VALUE)?;
                let typ = line.find(INPUT_TYPE)?;
                if typ < value || !line[..typ].ends_with(", ") {
                    return None;
                }
                let end = type_name_end(line, typ)?;
                cuts.push((start + fragment_start(line, value), start + end));
            }
            _ => return None,
        }
        start += line.len() + 1;
    }
    Some(cuts)
}

/// Everything from the first `input_value=` (or `input_type=`) to the end of the last
/// `input_type=<name>`, or to the end of the text when no type name follows.
fn greedy_cut(text: &str) -> (usize, usize) {
    let first = [text.find(INPUT_VALUE), text.find(INPUT_TYPE)]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(0);
    let end = text
        .rfind(INPUT_TYPE)
        .filter(|&typ| typ >= first)
        .map_or(text.len(), |typ| {
            type_name_end(text, typ).unwrap_or(text.len())
        });
    (fragment_start(text, first), end)
}

/// Where a fragment starting at `key` begins, its `, ` separator included.
fn fragment_start(text: &str, key: usize) -> usize {
    if text[..key].ends_with(", ") {
        key - 2
    } else {
        key
    }
}

/// The end of the type name after `input_type=` at `at`: a Python name (letters,
/// digits, `_`, `.`), followed by `]` or the end of the text.
fn type_name_end(text: &str, at: usize) -> Option<usize> {
    let name = &text[at + INPUT_TYPE.len()..];
    let len = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(name.len());
    let end = at + INPUT_TYPE.len() + len;
    (text[end..].is_empty() || text[end..].starts_with(']')).then_some(end)
}
