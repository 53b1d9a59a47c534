//! `backstop._core.SessionMachine`: the core's sans-IO session machine
//! ([`backstop_core::SessionMachine`], in process) for Python (SPEC A0).
//!
//! One machine serves one fastmcp server (every session of it: each request names its
//! session's `initialize` params, R2, R3). It decides everything about a `tools/call` —
//! whether to list the server's tools first (E8, R5), whether the call need not run
//! (E8, V6), what the tool's result or exception becomes (E1–E9, V1–V5, L1–L17, in the
//! order O2 requires; R4's `resultType` and the server's identity stamp counted, L4) —
//! and logs and counts what it converts (G1–G3).
//!
//! This file translates only: Python's ints, strs, dicts and lists into the core's
//! request ids, requests and responses, and the core's answers back into dicts. A
//! result's text blocks are handed over borrowed, and a string longer than the cap
//! needs by its tail (L13, B2): a 100 MB `str` is never copied.

use std::borrow::Cow;
use std::time::Instant;

use backstop_core::{
    SessionMachine as CoreMachine,
    machine::{Answer, ClientRequest, OwnRequest, RequestId, Response},
};
use backstop_core::{call::ArgumentShapes, protocol::Session};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Map, Value};

use crate::counts::counts_dict;
use crate::failures::{protocol_value, record_value};
use crate::limit::{Limit, truncation_value};
use crate::result::{held_in_part, result_shell, whole_structured};
use crate::values::{Tails, borrow_str, from_value, object, to_value};

/// The core's session machine, in process (see the [module docs](self)).
///
/// Requests are named by ints the caller picks (a counter); every method that answers
/// a `tools/call` gives `(result, error, truncation)`: all None to send the tool's own
/// result as it is, else the result dict to send instead (with the report of the cut,
/// when the limit cut it), or the protocol error to answer with.
#[pyclass(module = "backstop._core")]
pub(crate) struct SessionMachine {
    inner: CoreMachine,
}

/// Request `id` as the core names it.
fn request_id(id: u64) -> RequestId {
    RequestId::Number(id.to_string())
}

/// A dict or None argument as a JSON object (None: absent).
fn optional_object(
    obj: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<Map<String, Value>>> {
    match obj {
        Some(obj) if !obj.is_none() => object(obj, what).map(Some),
        _ => Ok(None),
    }
}

/// `request` with a `tools/call`'s arguments: a dict as its shapes (its names alone when
/// a value is no JSON data), a list as the names.
fn with_arguments(
    request: ClientRequest,
    arguments: Option<&Bound<'_, PyAny>>,
) -> PyResult<ClientRequest> {
    let Some(arguments) = arguments.filter(|a| !a.is_none()) else {
        return Ok(request);
    };
    let Ok(dict) = arguments.cast::<PyDict>() else {
        return Ok(request.arguments(arguments.extract::<Vec<String>>()?));
    };
    Ok(match to_value(arguments, 0) {
        Ok(Value::Object(map)) => request.argument_shapes(ArgumentShapes::of(&map)),
        _ => {
            let names = dict
                .keys()
                .iter()
                .map(|key| key.str().map(|s| s.to_string()));
            request.arguments(names.collect::<PyResult<Vec<_>>>()?)
        }
    })
}

/// One of backstop's own requests as `{"method", "params"}` (the params of a page
/// after the first carry its `cursor`).
fn own_request<'py>(
    py: Python<'py>,
    request: Option<OwnRequest>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(request) = request else {
        return Ok(None);
    };
    let dict = PyDict::new(py);
    dict.set_item("method", request.method)?;
    dict.set_item("params", from_value(py, &Value::Object(request.params))?)?;
    Ok(Some(dict.into_any()))
}

/// An answer as `(result, error, truncation)`, or, when the machine lists first
/// ([`Answer::ListFirst`]), the request of its own as [`own_request`] writes it.
fn answer<'py>(py: Python<'py>, answer: Answer) -> PyResult<Bound<'py, PyAny>> {
    let none = || py.None().into_bound(py);
    let (result, error, truncation) = match answer {
        Answer::Unchanged => (none(), none(), none()),
        Answer::Result {
            result, truncation, ..
        } => (
            from_value(py, &result.into_value())?,
            none(),
            match truncation {
                Some(truncation) => from_value(py, &truncation_value(&truncation)?)?,
                None => none(),
            },
        ),
        Answer::TaskState {
            task, truncation, ..
        } => (
            from_value(py, &task)?,
            none(),
            match truncation {
                Some(truncation) => from_value(py, &truncation_value(&truncation)?)?,
                None => none(),
            },
        ),
        Answer::Error { error, .. } => (none(), from_value(py, &protocol_value(&error)?)?, none()),
        Answer::ListFirst(own) => return Ok(own_request(py, Some(own))?.unwrap_or(none())),
    };
    Ok((result, error, truncation).into_pyobject(py)?.into_any())
}

#[pymethods]
impl SessionMachine {
    /// A machine in process applying `limit` (L1); `strict`: V6's strict mode (an
    /// argument the tool's input schema does not name is rejected before it runs).
    #[new]
    #[pyo3(signature = (limit, strict=false))]
    fn new(limit: &Bound<'_, Limit>, strict: bool) -> Self {
        let limit = limit.get().inner.clone();
        Self {
            inner: CoreMachine::new(limit).in_process().with_strict(strict),
        }
    }

    /// Whether strict mode (V6) is on.
    #[getter]
    fn strict(&self) -> bool {
        self.inner.is_strict()
    }

    /// set_server_stamp(stamp: dict | None) -> None
    /// --
    ///
    /// The identity the server's SDK stamps into the `_meta` of results of 2026-07-28
    /// (R4), for the limit to count it (L4).
    fn set_server_stamp(&mut self, stamp: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let stamp = optional_object(stamp, "stamp")?.map(Value::Object);
        self.inner.set_server_stamp(stamp);
        Ok(())
    }

    /// client_request(id, method, *, tool=None, arguments=None, task_id=None, meta=None, handshake=None, may_send=True) -> dict | None
    /// --
    ///
    /// A request of a client: `tool` and its `arguments` (a `tools/call`: the dict as
    /// sent, whose values the core keeps only the shapes of, to place a problem a
    /// validator reports at `__root__`, V2, V3; or a list of the names), `task_id` (a `tasks/*` request's `taskId`), its `params._meta`, and the `initialize` params of its session
    /// (`{"protocolVersion", "clientInfo"}`). Returns the request backstop makes first
    /// (`{"method": "tools/list", "params": {...}}`: list the server's tools, then hand
    /// the page to `own_listing_answer`), or None.
    #[pyo3(signature = (id, method, *, tool=None, arguments=None, task_id=None, meta=None, handshake=None, may_send=true))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of one request
    fn client_request<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        method: &str,
        tool: Option<String>,
        arguments: Option<&Bound<'py, PyAny>>,
        task_id: Option<String>,
        meta: Option<&Bound<'py, PyAny>>,
        handshake: Option<&Bound<'py, PyAny>>,
        may_send: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let request = ClientRequest::new(request_id(id), id.to_string(), method);
        let mut request = with_arguments(request, arguments)?
            .meta(optional_object(meta, "meta")?)
            .in_session(
                optional_object(handshake, "handshake")?
                    .map(|handshake| Session::from_initialize(&Value::Object(handshake))),
            );
        request.tool = tool;
        request.task_id = task_id;
        let own = self.inner.client_request(request, may_send, Instant::now());
        own_request(py, own)
    }

    /// own_listing_answer(page: dict | None) -> dict | None
    /// --
    ///
    /// The `tools/list` result of backstop's own listing (None: the listing failed):
    /// the request of the next page, or None when the listing is over.
    fn own_listing_answer<'py>(
        &mut self,
        py: Python<'py>,
        page: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let page = optional_object(page, "page")?.map(Value::Object);
        let next = self.inner.own_listing_answer(page.as_ref(), Instant::now());
        own_request(py, next)
    }

    /// before_running(id) -> tuple | None
    /// --
    ///
    /// Before the tool of `tools/call` `id` runs: the answer that makes running it
    /// needless (E8, V6), or None to run it.
    fn before_running<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.inner.before_running(&request_id(id), Instant::now()) {
            Some(decided) => answer(py, decided).map(Some),
            None => Ok(None),
        }
    }

    /// server_response(id, result) -> tuple
    /// --
    ///
    /// The server's result (JSON data) of request `id`: a `tools/list` page teaches
    /// the catalog (R5).
    fn server_response<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let response = Response::Result(to_value(result, 0)?);
        let decided = self
            .inner
            .server_response(&request_id(id), response, Instant::now());
        answer(py, decided)
    }

    /// server_failure(id, failure) -> tuple | dict
    /// --
    ///
    /// The tool of `tools/call` `id` raised: `failure` is what the exception says
    /// (`_facts.describe`: `{"validation": [...]}` or its facts). A dict instead of
    /// the answer: the server's word that the tool is unknown (E8, R5) — list the
    /// tools as for `client_request`'s request (pages to `own_listing_answer`), then
    /// ask `before_running` again and, if it says nothing, hand the failure in again.
    fn server_failure<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        failure: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let failure = object(failure, "failure")?;
        let response = match crate::failures::raised(&failure) {
            Some(raised) => Response::Raised(raised),
            None => Response::Failure(crate::failures::failure(&failure)),
        };
        let decided = self
            .inner
            .server_response(&request_id(id), response, Instant::now());
        answer(py, decided)
    }

    /// server_result(id, result) -> tuple
    /// --
    ///
    /// The tool of `tools/call` `id` returned `result`, a dict with MCP's wire names
    /// (`content`, `structuredContent`, `isError`, `_meta`). Its texts are read in
    /// place; a string longer than the cap needs is handed over by its tail (L13).
    fn server_result<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        result: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = request_id(id);
        let mut tails = Tails::for_cap(self.inner.limit().max_bytes());
        let (mut shell, held) = result_shell(result, &mut tails)?;
        let texts: Vec<Cow<'_, str>> = held.iter().map(borrow_str).collect();
        let long_text = texts.iter().any(|t| t.len() > tails.whole);
        if long_text || !tails.heads.is_empty() {
            let (in_part, held) = held_in_part(&shell, &texts, &tails);
            if let Some(decided) = self.inner.server_result_in_part(&id, in_part, &held) {
                return answer(py, decided);
            }
            // Not decidable from the tails: the whole value, copied.
            shell = whole_structured(result, shell)?;
        }
        let borrowed: Vec<&str> = texts.iter().map(Cow::as_ref).collect();
        let decided = self.inner.server_result_texts(&id, shell, &borrowed);
        answer(py, decided)
    }

    /// server_notification(method) -> None
    /// --
    ///
    /// A notification of the server (`notifications/tools/list_changed`: the catalog
    /// is listed again before it decides).
    fn server_notification(&mut self, method: &str) {
        self.inner.server_notification(method);
    }

    /// knows_tool(name) -> bool
    /// --
    ///
    /// Whether the catalog holds tool `name`.
    fn knows_tool(&self, name: &str) -> bool {
        self.inner.catalog().contains(name)
    }

    /// forget(id) -> bool
    /// --
    ///
    /// Forget request `id` (it ended some other way: a cancellation, a fault of
    /// backstop's own); whether it was pending.
    fn forget(&mut self, id: u64) -> bool {
        self.inner.forget(&request_id(id)).is_some()
    }

    /// take_log_records() -> list[dict]
    /// --
    ///
    /// The log records of the failures converted since the last call (G1, G2).
    fn take_log_records<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for record in self.inner.take_log_records() {
            list.append(from_value(py, &record_value(&record))?)?;
        }
        Ok(list)
    }

    /// error_counts() -> dict[str, int]
    /// --
    ///
    /// Converted failures per `<error_type>:<method>` (G3), as a new dict.
    fn error_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counts_dict(py, self.inner.error_counts())
    }

    /// The number of requests pending.
    fn __len__(&self) -> usize {
        self.inner.pending().len()
    }
}
