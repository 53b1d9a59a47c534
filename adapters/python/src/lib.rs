//! `backstop._core`: backstop-core's decisions for Python (SPEC A0, A4): the core's
//! session machine (`machine.rs`: every decision about a server's tool calls, which the
//! fastmcp middleware drives), the limit (`Limit`, for use without fastmcp), the
//! conversion of other requests' failures (`request_error`, counted in `counts.rs`), and
//! a few plain-data functions (`classify`, `validation_text`, `tool_error`,
//! `unknown_tool_error`).
//!
//! Thin by design: every function translates Python objects (dicts, lists, strings,
//! numbers — the JSON data model) into the core's types, calls the core, and translates
//! the answer back. No decision is made here. This file holds the translations the
//! others share — Python values to JSON and back, a result dict to a shell and its
//! borrowed texts (L13: a long string is handed over by its tail, never copied whole).
//! The pure-Python package `backstop` (its fastmcp middleware) gathers the facts only a
//! server can see — the exception's type, its cause chain, pydantic's structured errors
//! — and hands them over.
//!
//! Nothing here panics on what Python passes: a value of the wrong shape is a
//! `TypeError` or `ValueError`.
#![forbid(unsafe_code)]

use std::borrow::Cow;

use backstop_core::foreign_error::{ForeignError, classify as core_classify};
use backstop_core::foreign_validation::from_pydantic_errors;
use backstop_core::limit::{DEFAULT_MAX_BYTES, HeldInPart};
use backstop_core::{
    CallContext, ClientInfo, Content, Failure, Keep, Limit as CoreLimit, Limited, LogRecord,
    MetaKept, ProtocolError, Revision, Session, ToolResult, Truncation, error_result,
    render_problems, unknown_tool,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

mod counts;
mod machine;

use counts::ErrorCounts;

/// How deep a Python value may nest before it is refused (no unbounded recursion).
const MAX_DEPTH: usize = 256;

/// A Python object of the JSON data model as a `serde_json` value.
fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    convert(obj, depth, None)
}

/// Where the strings of a value that are too long to copy go when it is converted for
/// a cut held in part (L13): each becomes its tail of `least` bytes or a little more,
/// and its JSON pointer and the bytes of its head left out are recorded in `heads`.
struct Tails {
    /// The bytes of a string's tail that are kept: `HeldInPart::min_held_bytes`.
    least: usize,
    /// The JSON pointer of the value being converted.
    pointer: String,
    /// `(JSON pointer, bytes of the head left out)` of each string cut to its tail.
    heads: Vec<(String, usize)>,
}

impl Tails {
    /// The value of a string: whole, or its tail with its head recorded.
    fn string(&mut self, s: &Bound<'_, PyString>) -> Value {
        let text = borrow_str(s);
        if text.len() <= self.least {
            return Value::String(text.into_owned());
        }
        let tail = held_tail(&text, self.least);
        self.heads
            .push((self.pointer.clone(), text.len() - tail.len()));
        Value::String(tail.to_owned())
    }

    /// Converts `value` with `segment` (an object key or array index) on the pointer.
    fn within(&mut self, segment: &str, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
        let len = self.pointer.len();
        self.pointer.push('/');
        self.pointer
            .push_str(&segment.replace('~', "~0").replace('/', "~1"));
        let value = convert(value, depth, Some(self));
        self.pointer.truncate(len);
        value
    }
}

/// A Python `str` as UTF-8, borrowed where CPython holds it so (every ASCII `str`),
/// else copied; a lone surrogate becomes U+FFFD.
fn borrow_str<'a>(s: &'a Bound<'_, PyString>) -> Cow<'a, str> {
    s.to_str()
        .map_or_else(|_| s.to_string_lossy(), Cow::Borrowed)
}

/// The tail of `text` handed to the core for a cut held in part: at least `least`
/// bytes, from a character boundary.
fn held_tail(text: &str, least: usize) -> &str {
    let mut start = text.len().saturating_sub(least);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..]
}

/// [`to_value`], with long strings cut to their tails into `tails` when given.
fn convert(obj: &Bound<'_, PyAny>, depth: usize, mut tails: Option<&mut Tails>) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("value nests too deeply"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(match tails {
            Some(tails) => tails.string(s),
            None => Value::String(borrow_str(s).into_owned()),
        });
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        let f: f64 = obj.extract()?;
        return Ok(Number::from_f64(f).map_or(Value::Null, Value::Number));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Number::from_f64(f.value()).map_or(Value::Null, Value::Number));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in dict.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) => s.to_string_lossy().into_owned(),
                Err(_) => k.str()?.to_string_lossy().into_owned(),
            };
            let value = match tails.as_deref_mut() {
                Some(tails) => tails.within(&key, &v, depth + 1)?,
                None => convert(&v, depth + 1, None)?,
            };
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    let items = if let Ok(list) = obj.cast::<PyList>() {
        list.iter().collect::<Vec<_>>()
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Err(PyTypeError::new_err(format!(
            "not JSON data: an object of type {}",
            obj.get_type().name()?
        )));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match tails.as_deref_mut() {
            Some(tails) => tails.within(&index.to_string(), item, depth + 1),
            None => convert(item, depth + 1, None),
        })
        .collect()
}

/// A `serde_json` value as a Python object.
fn from_value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, from_value(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// The string member `key` of a JSON object, if it is one.
fn text<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The list of strings member `key` of a JSON object (missing: empty).
fn names(map: &Map<String, Value>, key: &str) -> Vec<String> {
    map.get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A dict argument as a JSON object.
fn object(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Map<String, Value>> {
    match to_value(obj, 0)? {
        Value::Object(map) => Ok(map),
        _ => Err(PyTypeError::new_err(format!("{what} must be a dict"))),
    }
}

/// A failure described as a dict: either `{"validation": [<pydantic error dicts>]}`
/// (each with `loc`, `type`, `msg` and optionally `input` as text), or the facts of an
/// exception: `type_name`, `message`, `ancestors`, `causes`, `expected`, `suggestion`,
/// `level`, `meta` (see `backstop_core::foreign_error::ForeignError`).
fn failure(map: &Map<String, Value>) -> Failure {
    if let Some(errors) = map.get("validation") {
        let errors = errors.as_array().map(Vec::as_slice).unwrap_or_default();
        return Failure::validation(from_pydantic_errors(errors));
    }
    core_classify(&ForeignError {
        type_name: text(map, "type_name").unwrap_or("Exception").to_owned(),
        ancestors: names(map, "ancestors"),
        message: text(map, "message").unwrap_or_default().to_owned(),
        causes: names(map, "causes"),
        expected: map
            .get("expected")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        suggestion: text(map, "suggestion").map(str::to_owned),
        level: text(map, "level").map(str::to_owned),
        meta: map
            .get("meta")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    })
}

/// A log record as a dict (G1–G3).
fn record_value(record: &LogRecord) -> Value {
    let mut map = Map::new();
    map.insert("level".into(), Value::from(record.level.as_str()));
    map.insert("method".into(), Value::from(record.method.as_str()));
    map.insert(
        "tool".into(),
        record.tool.as_deref().map_or(Value::Null, Value::from),
    );
    map.insert("error_type".into(), Value::from(record.error_type.as_str()));
    map.insert("expected".into(), Value::Bool(record.expected));
    map.insert("message".into(), Value::from(record.message.as_str()));
    map.insert("count_key".into(), Value::from(record.count_key()));
    Value::Object(map)
}

/// A protocol error as a dict `{"code", "message", "data"?}`.
fn protocol_value(error: &ProtocolError) -> PyResult<Value> {
    serde_json::to_value(error).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// classify(failure: dict) -> dict
/// --
///
/// How the core reads a failure: `error_type`, `expected`, `family`, `level` (or
/// None), `message`, `suggestion` (or None). See `tool_error` for the dict's keys.
#[pyfunction]
fn classify<'py>(py: Python<'py>, failure: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let f = self::failure(&object(failure, "failure")?);
    let mut map = Map::new();
    map.insert("error_type".into(), Value::from(f.error_type()));
    map.insert("expected".into(), Value::Bool(f.is_expected()));
    map.insert("family".into(), Value::from(f.family().as_str()));
    map.insert(
        "level".into(),
        f.level().map_or(Value::Null, |l| Value::from(l.as_str())),
    );
    map.insert("message".into(), Value::from(f.message()));
    map.insert(
        "suggestion".into(),
        f.suggestion().map_or(Value::Null, Value::from),
    );
    from_value(py, &Value::Object(map))
}

/// validation_text(tool: str, errors: list[dict]) -> str
/// --
///
/// The V2 text of a rejected argument set given as pydantic's structured errors, with
/// no input value in it (V3).
#[pyfunction]
fn validation_text(tool: &str, errors: &Bound<'_, PyAny>) -> PyResult<String> {
    let errors = match to_value(errors, 0)? {
        Value::Array(errors) => errors,
        _ => return Err(PyTypeError::new_err("errors must be a list")),
    };
    Ok(render_problems(tool, &from_pydantic_errors(&errors)))
}

/// The call context of a dict `{"tool", "arguments": [names], "input_schema"?,
/// "client"?: {"name", "version"}}`.
fn call_context(map: &Map<String, Value>) -> CallContext {
    let mut call = CallContext::new(text(map, "tool").unwrap_or_default())
        .with_arguments(names(map, "arguments"));
    if let Some(schema) = map.get("input_schema").filter(|s| s.is_object()) {
        call = call.with_input_schema(schema);
    }
    call.with_client(map.get("client").and_then(ClientInfo::from_value))
}

/// tool_error(failure: dict, call: dict) -> tuple[dict, dict]
/// --
///
/// The `isError` result of a failed tool call (E1–E7, V1–V6) and its log record (G1,
/// G2). `failure` is `{"validation": [...]}` or the facts of an exception; `call` is
/// `{"tool", "arguments": [argument names], "input_schema": dict | None,
/// "client": {"name", "version"} | None}`.
#[pyfunction]
fn tool_error<'py>(
    py: Python<'py>,
    failure: &Bound<'py, PyAny>,
    call: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let f = self::failure(&object(failure, "failure")?);
    let call = call_context(&object(call, "call")?);
    let result = error_result(&f, &call).into_value();
    let record = LogRecord::for_call(&f, &call);
    Ok((
        from_value(py, &result)?,
        from_value(py, &record_value(&record))?,
    ))
}

/// The session a dict describes (R2, R3): its `handshake` (the `initialize` params:
/// `protocolVersion`, `clientInfo`), else its request's `meta`.
fn session(map: &Map<String, Value>) -> Session {
    let handshake = map.get("handshake").unwrap_or(&Value::Null);
    let meta = map.get("meta").and_then(Value::as_object);
    Session::from_initialize(handshake).or_request_meta(meta)
}

/// request_error(failure: dict, method: str, revision: str | None = None, uri: str | None = None, *, session: dict | None = None, counts: ErrorCounts | None = None) -> tuple[dict, dict]
/// --
///
/// The JSON-RPC error `{"code", "message", "data"?}` of a failed request that is not a
/// tool call (P1, P2, R3), and its log record (counted in `counts`, G3). The revision
/// is `revision`, or the one `session` (`{"handshake", "meta"}`, R3) says.
#[pyfunction]
#[pyo3(signature = (failure, method, revision=None, uri=None, *, session=None, counts=None))]
fn request_error<'py>(
    py: Python<'py>,
    failure: &Bound<'py, PyAny>,
    method: &str,
    revision: Option<&str>,
    uri: Option<&str>,
    session: Option<&Bound<'py, PyAny>>,
    counts: Option<&Bound<'py, ErrorCounts>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let f = self::failure(&object(failure, "failure")?);
    let revision = match (revision, session) {
        (Some(revision), _) => Revision::parse_or_newest(revision),
        (None, Some(session)) => self::session(&object(session, "session")?).revision(),
        (None, None) => Revision::NEWEST,
    };
    let error = ProtocolError::from_failure(&f, method, revision, uri);
    let record = LogRecord::new(&f, method, None);
    ErrorCounts::count(counts, &record);
    Ok((
        from_value(py, &protocol_value(&error)?)?,
        from_value(py, &record_value(&record))?,
    ))
}

/// unknown_tool_error(name: str, known: list[str]) -> dict
/// --
///
/// The protocol error of a call of a tool that does not exist (E8).
#[pyfunction]
fn unknown_tool_error<'py>(
    py: Python<'py>,
    name: &str,
    known: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    from_value(py, &protocol_value(&unknown_tool(name, &known))?)
}

/// A response limit (L1–L15): a cap in wire bytes, the tools it applies to, and
/// whether cuts are line-aligned. A cap too small for any result is refused with a
/// `ValueError` naming the minimum (L14).
#[pyclass(frozen, module = "backstop._core")]
struct Limit {
    inner: CoreLimit,
}

/// The report of a cut as a dict (L12), with what was kept of `_meta`.
fn truncation_value(truncation: &Truncation) -> PyResult<Value> {
    let mut value =
        serde_json::to_value(truncation).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let Value::Object(map) = &mut value {
        let kept = match truncation.meta {
            MetaKept::All => "all",
            MetaKept::ErrorKeys => "error_keys",
            MetaKept::Nothing => "nothing",
        };
        map.insert("meta_kept".into(), Value::from(kept));
    }
    Ok(value)
}

/// `limit` with the keep policy `keep` asks for (L16): a string (`"head"`, for every
/// tool), or a dict of tool names to strings (`"*"`: every other tool).
fn with_keep(mut limit: CoreLimit, keep: &Bound<'_, PyAny>) -> PyResult<CoreLimit> {
    let parse = |policy: &Bound<'_, PyAny>| -> PyResult<Keep> {
        let policy: String = policy.extract()?;
        policy
            .parse::<Keep>()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    };
    if let Ok(policies) = keep.cast::<PyDict>() {
        for (tool, policy) in policies.iter() {
            let tool: String = tool.extract()?;
            let policy = parse(&policy)?;
            limit = match tool.as_str() {
                "*" => limit.with_keep(policy),
                _ => limit.keep_for(tool, policy),
            };
        }
        Ok(limit)
    } else {
        Ok(limit.with_keep(parse(keep)?))
    }
}

/// A limited result and its report as Python objects.
fn limited_pair<'py>(
    py: Python<'py>,
    limited: Limited,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let report = match &limited.truncation {
        Some(t) => truncation_value(t)?,
        None => Value::Null,
    };
    Ok((
        from_value(py, &limited.result.into_value())?,
        from_value(py, &report)?,
    ))
}

/// A schema argument: a dict, or None.
fn schema(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    match obj {
        Some(obj) if !obj.is_none() => Ok(Some(to_value(obj, 0)?)),
        _ => Ok(None),
    }
}

/// A result dict as the core's `ToolResult` with its text blocks' texts left empty
/// (they are returned, in order, to be borrowed) and its `structuredContent`'s long
/// strings cut to their tails into `tails`.
fn result_shell<'py>(
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
fn whole_structured(result: &Bound<'_, PyDict>, mut shell: ToolResult) -> PyResult<ToolResult> {
    if let Some(value) = result.get_item("structuredContent")? {
        shell.structured_content = Some(to_value(&value, 0)?);
    }
    Ok(shell)
}

impl Limit {
    /// The cut of `shell` with `texts` borrowed in place of its text blocks' texts.
    fn borrowed(
        limit: &CoreLimit,
        shell: &ToolResult,
        texts: &[Cow<'_, str>],
        schema: Option<&Value>,
    ) -> Option<Limited> {
        let borrowed: Vec<&str> = texts.iter().map(Cow::as_ref).collect();
        limit.truncate_texts(shell, &borrowed, schema)
    }

    /// The cut of `shell` decided from the tails of its long strings (texts longer than
    /// `tails.least` are cut to their tails here; `structuredContent`'s were already),
    /// copying only the tails: the core's cut of the whole, or `Err(())` where the
    /// tails cannot decide it.
    fn in_part(
        &self,
        limit: &CoreLimit,
        shell: &ToolResult,
        texts: &[Cow<'_, str>],
        tails: &Tails,
        schema: Option<&Value>,
    ) -> Result<Option<Limited>, ()> {
        let (result, held) = held_in_part(shell, texts, tails);
        limit.truncate_in_part(&result, &held, schema)
    }
}

/// `shell` with its long texts cut to their tails (`structuredContent`'s were
/// already), and what those tails leave out: what the core decides a cut held in
/// part from (L13).
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
            let tail = held_tail(text, tails.least);
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

/// A reader's limit given to `Limit(...)`: a number, or `"none"` for none (L18).
fn reader_limit(value: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if let Ok(text) = value.extract::<String>() {
        return match text.trim() {
            "none" => Ok(None),
            other => Err(PyValueError::new_err(format!(
                "{other:?}: a reader's limit is a number, or \"none\""
            ))),
        };
    }
    value.extract::<usize>().map(Some)
}

/// `MAX_MCP_OUTPUT_TOKENS` from the server process's environment, which Claude Code's
/// profile follows (L18).
fn max_mcp_output_tokens() -> Option<usize> {
    std::env::var("MAX_MCP_OUTPUT_TOKENS")
        .ok()
        .and_then(|value| value.trim().parse().ok())
}

#[pymethods]
impl Limit {
    #[new]
    #[pyo3(signature = (max_bytes=DEFAULT_MAX_BYTES, tools=None, line_align=true, keep=None, max_chars=None, max_tokens=None))]
    fn new(
        max_bytes: usize,
        tools: Option<Vec<String>>,
        line_align: bool,
        keep: Option<&Bound<'_, PyAny>>,
        max_chars: Option<&Bound<'_, PyAny>>,
        max_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let error = |e: backstop_core::LimitError| PyValueError::new_err(e.to_string());
        let mut inner = CoreLimit::new(max_bytes)
            .map_err(error)?
            .line_aligned(line_align)
            .with_max_output_tokens_env(max_mcp_output_tokens());
        // L2, L18: None leaves the unit to the client's profile; "none" turns it off.
        if let Some(chars) = max_chars {
            inner = inner.with_max_chars(reader_limit(chars)?).map_err(error)?;
        }
        if let Some(tokens) = max_tokens {
            inner = inner
                .with_max_tokens(reader_limit(tokens)?)
                .map_err(error)?;
        }
        if let Some(tools) = tools {
            inner = inner.only_tools(tools);
        }
        if let Some(keep) = keep {
            inner = with_keep(inner, keep)?;
        }
        Ok(Self { inner })
    }

    /// keep_of(tool) -> str
    /// --
    ///
    /// The keep policy for `tool`'s results (L16): `tail`, `head` or `head+tail:SHARE`.
    fn keep_of(&self, tool: &str) -> String {
        self.inner.keep_of(tool).to_string()
    }

    /// The cap in wire bytes.
    #[getter]
    fn max_bytes(&self) -> usize {
        self.inner.max_bytes()
    }

    /// The limit in characters set explicitly, or None (the client's profile, L18).
    #[getter]
    fn max_chars(&self) -> Option<usize> {
        self.inner.max_chars()
    }

    /// The limit in tokens set explicitly, or None (the client's profile, L18).
    #[getter]
    fn max_tokens(&self) -> Option<usize> {
        self.inner.max_tokens()
    }

    /// Whether cuts are line-aligned (L9).
    #[getter]
    fn line_align(&self) -> bool {
        self.inner.is_line_aligned()
    }

    /// Whether the limit applies to results of `tool` (L1).
    fn applies_to(&self, tool: &str) -> bool {
        self.inner.applies_to(tool)
    }

    /// limit(tool, result, output_schema=None) -> tuple[dict, dict] | None
    /// --
    ///
    /// Limit a `tools/call` result given as a dict with MCP's wire names (`content`,
    /// `structuredContent`, `isError`, `_meta`, …): None when it is sent as it is (the
    /// limit does not apply to `tool`, the result is not complete, or it fits), else
    /// the cut result and the report of the cut. The text of text blocks and the
    /// strings of `structuredContent` are read in place, not copied: a string longer
    /// than the cap needs is handed to the core by its tail (L13).
    #[pyo3(signature = (tool, result, output_schema=None))]
    fn limit<'py>(
        &self,
        py: Python<'py>,
        tool: &str,
        result: &Bound<'py, PyDict>,
        output_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        if !self.inner.applies_to(tool) {
            return Ok(None);
        }
        let schema = schema(output_schema)?;
        let mut tails = Tails {
            least: HeldInPart::min_held_bytes(self.inner.max_bytes()),
            pointer: String::new(),
            heads: Vec::new(),
        };
        let (shell, held) = result_shell(result, &mut tails)?;
        let texts: Vec<Cow<'_, str>> = held.iter().map(borrow_str).collect();
        let long_text = texts.iter().any(|t| t.len() > tails.least);
        let limit = self.inner.for_tool(tool);
        let limited = if long_text || !tails.heads.is_empty() {
            match self.in_part(&limit, &shell, &texts, &tails, schema.as_ref()) {
                Ok(limited) => limited,
                // Not decidable from the tails (or a head is kept, L16): the whole
                // value, copied.
                Err(()) => {
                    let whole = whole_structured(result, shell)?;
                    Self::borrowed(&limit, &whole, &texts, schema.as_ref())
                }
            }
        } else {
            Self::borrowed(&limit, &shell, &texts, schema.as_ref())
        };
        match limited {
            Some(limited) => limited_pair(py, limited).map(Some),
            None => Ok(None),
        }
    }

    /// limit_json(tool, result, output_schema=None) -> bytes | None
    /// --
    ///
    /// Limit a `tools/call` result given as JSON bytes: None when it is sent as it is,
    /// else the cut result's compact JSON.
    #[pyo3(signature = (tool, result, output_schema=None))]
    fn limit_json<'py>(
        &self,
        py: Python<'py>,
        tool: &str,
        result: &[u8],
        output_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        if !self.inner.applies_to(tool) {
            return Ok(None);
        }
        let schema = schema(output_schema)?;
        let parsed: ToolResult =
            serde_json::from_slice(result).map_err(|e| PyValueError::new_err(e.to_string()))?;
        match self
            .inner
            .for_tool(tool)
            .truncate_with_schema(&parsed, schema.as_ref())
        {
            Some(limited) => {
                let bytes = serde_json::to_vec(&limited.result)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Ok(Some(PyBytes::new(py, &bytes)))
            }
            None => Ok(None),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Limit(max_bytes={}, line_align={})",
            self.inner.max_bytes(),
            if self.inner.is_line_aligned() {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MIN_BYTES", CoreLimit::min_bytes())?;
    m.add("DEFAULT_MAX_BYTES", DEFAULT_MAX_BYTES)?;
    m.add_class::<Limit>()?;
    m.add_class::<ErrorCounts>()?;
    m.add_class::<machine::SessionMachine>()?;
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(validation_text, m)?)?;
    m.add_function(wrap_pyfunction!(tool_error, m)?)?;
    m.add_function(wrap_pyfunction!(request_error, m)?)?;
    m.add_function(wrap_pyfunction!(unknown_tool_error, m)?)?;
    Ok(())
}
