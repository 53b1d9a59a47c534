//! One `tools/call` through the core's one entry point, for Python (SPEC A0, O2):
//! `shape_tool_call` takes the call's outcome — the facts of the exception the tool
//! raised, or the result it returned — with the tool catalog, the call's context and
//! the limit, and gives back what to send, the log record and the truncation report.
//! The order of the steps (E8, conversion, V3 redaction, the limit) and every decision
//! is the core's; this file translates Python data into the core's types and back, and
//! keeps the per-server state the core decides with: the [`ToolCatalog`] learnt from
//! `tools/list`, and the [`ErrorCounts`] of G3.

use std::borrow::Cow;

use backstop_core::call::{
    Outcome, Shaped, ToolCatalog as CoreCatalog, shape_tool_call as core_shape,
    shape_tool_call_in_part, shape_tool_call_texts,
};
use backstop_core::limit::HeldInPart;
use backstop_core::{ErrorCounts as CoreCounts, LogRecord, Revision, Session, ToolResult};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value};

use crate::{
    Limit, Tails, borrow_str, from_value, object, protocol_value, record_value, result_shell,
    to_value, truncation_value, whole_structured,
};

/// The `_meta` key MCP 2026-07-28 servers stamp their identity under (R4).
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// The tools a server has, as `tools/list` said: what E8 and L15 decide with (R5).
///
/// `learn` takes the tools of a listing as MCP's `Tool` dicts (`name`, `inputSchema`,
/// `outputSchema`); `replace` forgets what was known first (a new full listing).
#[pyclass(module = "backstop._core")]
#[derive(Default)]
pub(crate) struct ToolCatalog {
    inner: CoreCatalog,
}

/// A `tools/list` result of `tools`, a list of MCP `Tool` dicts.
fn tools_list(tools: &Bound<'_, PyAny>) -> PyResult<Value> {
    match to_value(tools, 0)? {
        Value::Array(tools) => Ok(serde_json::json!({ "tools": tools })),
        _ => Err(PyTypeError::new_err("tools must be a list of dicts")),
    }
}

#[pymethods]
impl ToolCatalog {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Add the tools of one listing (or one more page of it).
    fn learn(&mut self, tools: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.extend_from_tools_list(&tools_list(tools)?);
        Ok(())
    }

    /// Forget what was known, and know the tools of this full listing.
    fn replace(&mut self, tools: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner = CoreCatalog::from_tools_list(&tools_list(tools)?);
        Ok(())
    }

    /// The names of the known tools, in order.
    fn names(&self) -> Vec<String> {
        self.inner.names().map(str::to_owned).collect()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.contains(name)
    }

    fn __len__(&self) -> usize {
        self.inner.names().count()
    }
}

/// Converted failures per `<error_type>:<method>` (G3), with a bound on the number of
/// keys (method names come from clients); what comes after it is `overflow`.
#[pyclass(module = "backstop._core")]
pub(crate) struct ErrorCounts {
    inner: CoreCounts,
}

impl ErrorCounts {
    /// Count `record`, when there are counts to keep.
    pub(crate) fn count(counts: Option<&Bound<'_, ErrorCounts>>, record: &LogRecord) {
        if let Some(counts) = counts {
            counts.borrow_mut().inner.record(record);
        }
    }
}

#[pymethods]
impl ErrorCounts {
    #[new]
    #[pyo3(signature = (max_keys=CoreCounts::DEFAULT_MAX_KEYS))]
    fn new(max_keys: usize) -> Self {
        Self {
            inner: CoreCounts::with_max_keys(max_keys),
        }
    }

    /// Every key and its count, as a new dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, count) in self.inner.iter() {
            dict.set_item(key, count)?;
        }
        Ok(dict)
    }

    /// The count under `key`, 0 if none.
    fn get(&self, key: &str) -> u64 {
        self.inner.get(key)
    }

    /// The records counted after the key bound was reached, under new keys.
    #[getter]
    fn overflow(&self) -> u64 {
        self.inner.overflow()
    }
}

/// The session a call's dict describes (R2, R3): its `handshake` (the `initialize`
/// params: `protocolVersion`, `clientInfo`), else its request's `meta`.
pub(crate) fn session(map: &Map<String, Value>) -> Session {
    let handshake = map.get("handshake").unwrap_or(&Value::Null);
    let meta = map.get("meta").and_then(Value::as_object);
    Session::from_initialize(handshake).or_request_meta(meta)
}

/// What the SDK adds to a result after the middleware, for the limit to count it (L4):
/// from 2026-07-28 on, `resultType` and — unless the result carries one — the server's
/// identity stamp in `_meta` (R4).
struct WireAdditions {
    /// Whether `resultType` is added.
    result_type: bool,
    /// The stamp to add, when the result carries none.
    stamp: Option<Value>,
}

impl WireAdditions {
    fn of(revision: Revision, stamp: Option<&Value>) -> Self {
        let stamped = revision.results_carry_result_type();
        Self {
            result_type: stamped,
            stamp: stamp.filter(|s| stamped && s.is_object()).cloned(),
        }
    }

    /// Add them to `result`: `resultType` where it has none, the stamp where its
    /// `_meta` has none. Returns whether `resultType` was added.
    fn add(&self, result: &mut ToolResult) -> bool {
        if let Some(stamp) = &self.stamp {
            let meta = result.meta.get_or_insert_with(Map::new);
            if meta.get(SERVER_INFO_META).is_none_or(Value::is_null) {
                meta.insert(SERVER_INFO_META.to_owned(), stamp.clone());
            }
        }
        let added = self.result_type && result.result_type.is_none();
        if added {
            result.result_type = Some("complete".to_owned());
        }
        added
    }
}

/// The response, record and truncation of `shaped`, with the `resultType` the SDK adds
/// itself taken out again when it was added for the count.
fn answer<'py>(
    py: Python<'py>,
    shaped: Shaped,
    added_result_type: bool,
    counts: Option<&Bound<'py, ErrorCounts>>,
) -> PyResult<Bound<'py, PyAny>> {
    let record = match &shaped.log {
        Some(record) => {
            ErrorCounts::count(counts, record);
            from_value(py, &record_value(record))?
        }
        None => py.None().into_bound(py),
    };
    let truncation = match &shaped.truncation {
        Some(truncation) => from_value(py, &truncation_value(truncation)?)?,
        None => py.None().into_bound(py),
    };
    let unchanged = shaped.log.is_none() && shaped.truncation.is_none();
    let (result, error) = match shaped.response {
        Err(error) => (
            py.None().into_bound(py),
            from_value(py, &protocol_value(&error)?)?,
        ),
        Ok(_) if unchanged => (py.None().into_bound(py), py.None().into_bound(py)),
        Ok(mut result) => {
            if added_result_type {
                result.result_type = None;
            }
            (
                from_value(py, &result.into_value())?,
                py.None().into_bound(py),
            )
        }
    };
    Ok((result, error, record, truncation)
        .into_pyobject(py)?
        .into_any())
}

/// The shaping of a result the tool returned, its texts borrowed (L13: a text longer
/// than the cap needs is handed over by its tail).
fn shape_result(
    catalog: &CoreCatalog,
    call: &backstop_core::CallContext,
    result: &Bound<'_, PyDict>,
    limit: &Limit,
    additions: &WireAdditions,
) -> PyResult<(Shaped, bool)> {
    let mut tails = Tails {
        least: HeldInPart::min_held_bytes(limit.inner.max_bytes()),
        pointer: String::new(),
        heads: Vec::new(),
    };
    let (mut shell, held) = result_shell(result, &mut tails)?;
    let added = additions.add(&mut shell);
    let texts: Vec<Cow<'_, str>> = held.iter().map(borrow_str).collect();
    let long_text = texts.iter().any(|t| t.len() > tails.least);
    if long_text || !tails.heads.is_empty() {
        let in_part = limit.held_in_part(&shell, &texts, &tails);
        if let Some(shaped) =
            shape_tool_call_in_part(catalog, call, in_part.0, &in_part.1, &limit.inner)
        {
            return Ok((shaped, added));
        }
        shell = whole_structured(result, shell)?;
    }
    let borrowed: Vec<&str> = texts.iter().map(Cow::as_ref).collect();
    Ok((
        shape_tool_call_texts(catalog, call, shell, &borrowed, &limit.inner),
        added,
    ))
}

/// shape_tool_call(catalog, call, limit, *, failure=None, result=None, counts=None) -> tuple
/// --
///
/// What to send for one `tools/call` (E1–E9, V1–V6, L1–L17, O2, G1), decided by the
/// core: exactly one of `failure` (the facts of the exception, as `_facts.describe`
/// gives them) and `result` (the result the tool returned, a dict with MCP's wire
/// names). `call` is `{"tool", "arguments": [names], "handshake": initialize params |
/// None, "meta": the request's _meta | None, "server_info": the identity stamp | None}`.
///
/// Returns `(result, error, record, truncation)`: the result to send (None: send the
/// tool's own result as it is), or the protocol error to answer with (E8); the log
/// record of a converted failure (counted in `counts`); the report of a cut.
#[pyfunction]
#[pyo3(signature = (catalog, call, limit, *, failure=None, result=None, counts=None))]
pub(crate) fn shape_tool_call<'py>(
    py: Python<'py>,
    catalog: &Bound<'py, ToolCatalog>,
    call: &Bound<'py, PyAny>,
    limit: &Bound<'py, Limit>,
    failure: Option<&Bound<'py, PyAny>>,
    result: Option<&Bound<'py, PyDict>>,
    counts: Option<&Bound<'py, ErrorCounts>>,
) -> PyResult<Bound<'py, PyAny>> {
    let call_map = object(call, "call")?;
    let tool = call_map
        .get("tool")
        .and_then(Value::as_str)
        .ok_or_else(|| PyTypeError::new_err("call must name its tool"))?;
    let session = session(&call_map);
    let catalog = &catalog.borrow().inner;
    let limit = limit.get();
    let context = catalog
        .context(tool)
        .with_arguments(crate::names(&call_map, "arguments"))
        .with_client(session.client.clone())
        .with_revision(session.revision);
    let additions = WireAdditions::of(session.revision(), call_map.get("server_info"));
    match (failure, result) {
        (Some(failure), None) => {
            let failure = crate::failure(&object(failure, "failure")?);
            let shaped = core_shape(catalog, &context, Outcome::Failure(failure), &limit.inner);
            // The converted result is measured again with what the SDK adds (L4).
            let shaped = match shaped.response {
                Ok(mut converted) if additions.result_type || additions.stamp.is_some() => {
                    let added = additions.add(&mut converted);
                    let schema = catalog.output_schema(tool);
                    let limited = limit.inner.apply_with_schema(tool, converted, schema);
                    let shaped = Shaped {
                        response: Ok(limited.result),
                        unchanged: false,
                        log: shaped.log,
                        truncation: limited.truncation.or(shaped.truncation),
                    };
                    return answer(py, shaped, added, counts);
                }
                _ => shaped,
            };
            answer(py, shaped, false, counts)
        }
        (None, Some(result)) => {
            let (shaped, added) = shape_result(catalog, &context, result, limit, &additions)?;
            answer(py, shaped, added, counts)
        }
        _ => Err(PyValueError::new_err(
            "give exactly one of failure= and result=",
        )),
    }
}
