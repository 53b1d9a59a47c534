//! `backstop._core`: backstop-core's decisions for Python (SPEC A0, A4): the core's
//! session machine (`machine.rs`: every decision about a server's tool calls, which the
//! fastmcp middleware drives), the limit (`Limit`, for use without fastmcp), the
//! conversion of other requests' failures (`request_error`, counted in `counts.rs`), and
//! a few plain-data functions (`classify`, `validation_text`, `tool_error`,
//! `unknown_tool_error`).
//!
//! Thin by design: every function translates Python objects (dicts, lists, strings,
//! numbers — the JSON data model) into the core's types, calls the core, and translates
//! the answer back. No decision is made here. This file only registers the module's
//! parts, each in a file of its own: `values.rs` (Python values to JSON and back),
//! `result.rs` (a result dict as a shell and its borrowed texts; L13: a long string is
//! handed over by its tail, never copied whole), `failures.rs` (the plain-data
//! functions), `limit.rs` (`Limit`), `machine.rs` and `counts.rs`. The pure-Python package `backstop` (its fastmcp middleware) gathers the facts only a
//! server can see — the exception's type, its cause chain, pydantic's structured errors
//! — and hands them over.
//!
//! Nothing here panics on what Python passes: a value of the wrong shape is a
//! `TypeError` or `ValueError`.
#![forbid(unsafe_code)]

use pyo3::prelude::*;

mod counts;
mod failures;
mod limit;
mod machine;
mod result;
mod values;

use backstop_core::Limit as CoreLimit;
use backstop_core::limit::DEFAULT_MAX_BYTES;

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MIN_BYTES", CoreLimit::min_bytes())?;
    m.add("DEFAULT_MAX_BYTES", DEFAULT_MAX_BYTES)?;
    m.add_class::<limit::Limit>()?;
    m.add_class::<counts::ErrorCounts>()?;
    m.add_class::<machine::SessionMachine>()?;
    m.add_function(wrap_pyfunction!(failures::classify, m)?)?;
    m.add_function(wrap_pyfunction!(failures::validation_text, m)?)?;
    m.add_function(wrap_pyfunction!(failures::tool_error, m)?)?;
    m.add_function(wrap_pyfunction!(failures::request_error, m)?)?;
    m.add_function(wrap_pyfunction!(failures::unknown_tool_error, m)?)?;
    Ok(())
}
