//! Failures as plain data: a failure described as a dict made the core's `Failure`,
//! and the functions that convert one without the session machine (`classify`,
//! `validation_text`, `tool_error`, `request_error`, `unknown_tool_error`), with the
//! log records and protocol errors they give as dicts (E1–E8, P1, P2, G1–G3).

use backstop_core::call::from_pydantic_errors;
use backstop_core::call::{ForeignError, classify as core_classify};
use backstop_core::{
    Failure, ProtocolError,
    call::{CallContext, LogRecord, error_result, render_problems, unknown_tool},
    protocol::{ClientInfo, Revision, Session},
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Map, Value};

use crate::counts::ErrorCounts;
use crate::values::{from_value, names, object, text, to_value};

/// A failure described as a dict: either `{"validation": [<pydantic error dicts>]}`
/// (each with `loc`, `type`, `msg` and optionally `input` as text), or the facts of an
/// exception: `type_name`, `message`, `ancestors`, `causes`, `expected`, `suggestion`,
/// `level`, `meta` (see `backstop_core::call::ForeignError`).
pub(crate) fn failure(map: &Map<String, Value>) -> Failure {
    if let Some(errors) = map.get("validation") {
        let errors = errors.as_array().map(Vec::as_slice).unwrap_or_default();
        return Failure::validation(from_pydantic_errors(errors));
    }
    core_classify(&foreign_error(map))
}

/// The facts of an exception described as a dict (see [`failure`]); None for a
/// rejected argument set (`{"validation": [...]}`).
pub(crate) fn raised(map: &Map<String, Value>) -> Option<ForeignError> {
    (!map.contains_key("validation")).then(|| foreign_error(map))
}

/// The facts of an exception described as a dict, as the core's [`ForeignError`].
fn foreign_error(map: &Map<String, Value>) -> ForeignError {
    ForeignError {
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
    }
}

/// A log record as a dict (G1–G3).
pub(crate) fn record_value(record: &LogRecord) -> Value {
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
pub(crate) fn protocol_value(error: &ProtocolError) -> PyResult<Value> {
    serde_json::to_value(error).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// classify(failure: dict) -> dict
/// --
///
/// How the core reads a failure: `error_type`, `expected`, `family`, `level` (or
/// None), `message`, `suggestion` (or None). See `tool_error` for the dict's keys.
#[pyfunction]
pub(crate) fn classify<'py>(
    py: Python<'py>,
    failure: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
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
pub(crate) fn validation_text(tool: &str, errors: &Bound<'_, PyAny>) -> PyResult<String> {
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
pub(crate) fn tool_error<'py>(
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
pub(crate) fn request_error<'py>(
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
pub(crate) fn unknown_tool_error<'py>(
    py: Python<'py>,
    name: &str,
    known: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    from_value(py, &protocol_value(&unknown_tool(name, &known))?)
}
