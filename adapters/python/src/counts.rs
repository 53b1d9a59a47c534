//! `backstop._core.ErrorCounts`: the core's counts of converted failures per
//! `<error_type>:<method>` (G3), for the failures of requests other than `tools/call`
//! that `request_error` converts (a `tools/call`'s are counted by the
//! [`SessionMachine`](crate::machine::SessionMachine)). This file translates the counts
//! to Python; the counting is the core's.

use backstop_core::call::{ErrorCounts as CoreCounts, LogRecord};
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

/// `counts` as a new dict.
pub(crate) fn counts_dict<'py>(
    py: Python<'py>,
    counts: &CoreCounts,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, count) in counts.iter() {
        dict.set_item(key, count)?;
    }
    Ok(dict)
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
        counts_dict(py, &self.inner)
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
