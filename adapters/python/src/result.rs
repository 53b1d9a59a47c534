//! A result dict as the core reads it: its shell (the text blocks' texts left empty,
//! to be borrowed, and `structuredContent`'s long strings cut to their tails), and what
//! the tails of its long strings leave out, for a cut held in part (L13).

use std::borrow::Cow;

use backstop_core::limit::HeldInPart;
use backstop_core::{ToolResult, call::Content};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{Map, Value};

use crate::values::{Tails, convert, held_tail, to_value};

/// A result dict as the core's `ToolResult` with its text blocks' texts left empty
/// (they are returned, in order, to be borrowed) and its `structuredContent`'s long
/// strings cut to their tails into `tails`.
pub(crate) fn result_shell<'py>(
    result: &Bound<'py, PyDict>,
    tails: &mut Tails,
) -> PyResult<(ToolResult, Vec<Bound<'py, PyString>>)> {
    let mut held: Vec<Bound<'py, PyString>> = Vec::new();
    let mut shell = Map::new();
    for (key, value) in result.iter() {
        let key: String = key.extract()?;
        if key == "structuredContent" {
            shell.insert(key, convert(&value, 0, Some(tails))?);
            continue;
        }
        let blocks = match value.cast::<PyList>() {
            Ok(blocks) if key == "content" => blocks,
            _ => {
                shell.insert(key, to_value(&value, 0)?);
                continue;
            }
        };
        let mut content = Vec::with_capacity(blocks.len());
        for block in blocks.iter() {
            match text_block(&block)? {
                Some((map, text)) => {
                    held.push(text);
                    content.push(Value::Object(map));
                }
                None => content.push(to_value(&block, 1)?),
            }
        }
        shell.insert(key, Value::Array(content));
    }
    let shell = ToolResult::from_value(Value::Object(shell))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((shell, held))
}

/// A text block's other members (its `text` left empty) and its text.
type TextBlock<'py> = (Map<String, Value>, Bound<'py, PyString>);

/// A text block (`{"type": "text", "text": <str>, …}`) as its other members, with
/// `text` empty, and its text; None for any other block.
fn text_block<'py>(block: &Bound<'py, PyAny>) -> PyResult<Option<TextBlock<'py>>> {
    let Ok(dict) = block.cast::<PyDict>() else {
        return Ok(None);
    };
    let is_text = dict
        .get_item("type")?
        .is_some_and(|t| t.extract::<&str>().is_ok_and(|t| t == "text"));
    let Some(text) = dict.get_item("text")? else {
        return Ok(None);
    };
    let Ok(text) = text.cast_into::<PyString>() else {
        return Ok(None);
    };
    if !is_text {
        return Ok(None);
    }
    let mut map = Map::new();
    for (k, v) in dict.iter() {
        let k: String = k.extract()?;
        if k != "text" {
            map.insert(k, to_value(&v, 1)?);
        }
    }
    map.insert("text".into(), Value::String(String::new()));
    Ok(Some((map, text)))
}

/// `shell` with the whole `structuredContent` of `result` in place of its tails.
pub(crate) fn whole_structured(
    result: &Bound<'_, PyDict>,
    mut shell: ToolResult,
) -> PyResult<ToolResult> {
    if let Some(value) = result.get_item("structuredContent")? {
        shell.structured_content = Some(to_value(&value, 0)?);
    }
    Ok(shell)
}

/// `shell` with its texts longer than `tails.whole` cut to their tails
/// (`structuredContent`'s long strings were already), and what those tails leave out:
/// what the core decides a cut held in part from (L13). A shorter text is held whole:
/// the core may read a failure in it (`HeldEnds::held_whole_up_to`).
pub(crate) fn held_in_part(
    shell: &ToolResult,
    texts: &[Cow<'_, str>],
    tails: &Tails,
) -> (ToolResult, HeldInPart) {
    let mut result = shell.clone();
    let mut held = HeldInPart::default();
    let mut given = texts.iter();
    for (index, block) in result.content.iter_mut().enumerate() {
        if let Content::Text(block) = block
            && let Some(text) = given.next()
        {
            let tail = match text.len() > tails.whole {
                true => held_tail(text, tails.least),
                false => text,
            };
            if tail.len() < text.len() {
                let first = text.as_bytes()[0].min(0x80);
                held = held
                    .with_text_head(index, text.len() - tail.len())
                    .with_text_start(index, first);
            }
            block.text = tail.to_owned();
        }
    }
    for (pointer, bytes) in &tails.heads {
        held = held.with_structured_head(pointer.clone(), *bytes);
    }
    (result, held)
}
