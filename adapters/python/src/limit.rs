//! `backstop._core.Limit`: the core's response limit (L1–L18) for use without
//! fastmcp: a result dict or its JSON bytes cut as the core cuts it, its texts read in
//! place (L13), and the report of a cut as a dict.

use std::borrow::Cow;

use backstop_core::limit::DEFAULT_MAX_BYTES;
use backstop_core::{
    Limit as CoreLimit, ToolResult,
    limit::{Keep, Limited, MetaKept, Truncation},
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::Value;

use crate::result::{held_in_part, result_shell, whole_structured};
use crate::values::{Tails, borrow_str, from_value, to_value};

/// A response limit (L1–L15): a cap in wire bytes, the tools it applies to, and
/// whether cuts are line-aligned. A cap too small for any result is refused with a
/// `ValueError` naming the minimum (L14).
#[pyclass(frozen, module = "backstop._core")]
pub(crate) struct Limit {
    pub(crate) inner: CoreLimit,
}

/// The report of a cut as a dict (L12), with what was kept of `_meta`.
pub(crate) fn truncation_value(truncation: &Truncation) -> PyResult<Value> {
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
    /// `tails.whole` are cut to their tails here; `structuredContent`'s were already),
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
        let error = |e: backstop_core::limit::LimitError| PyValueError::new_err(e.to_string());
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
        let mut tails = Tails::for_cap(self.inner.max_bytes());
        let (shell, held) = result_shell(result, &mut tails)?;
        let texts: Vec<Cow<'_, str>> = held.iter().map(borrow_str).collect();
        let long_text = texts.iter().any(|t| t.len() > tails.whole);
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
