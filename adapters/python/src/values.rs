//! Python values and JSON: a Python object of the JSON data model as a `serde_json`
//! value and back, the members of a dict read as the core's fields, and a Python `str`
//! borrowed as UTF-8 — whole, or cut to its tail for a cut held in part (L13, `Tails`).

use std::borrow::Cow;

use backstop_core::limit::{HeldEnds, Keep};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How deep a Python value may nest before it is refused (no unbounded recursion).
const MAX_DEPTH: usize = 256;

/// A Python object of the JSON data model as a `serde_json` value.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    convert(obj, depth, None)
}

/// Where the strings of a value that are too long to copy go when it is converted for
/// a cut held in part (L13): each becomes its tail of `least` bytes or a little more,
/// and its JSON pointer and the bytes of its head left out are recorded in `heads`.
pub(crate) struct Tails {
    /// The bytes of a string's tail that are kept: `HeldInPart::min_held_bytes`.
    pub(crate) least: usize,
    /// The longest text block's text that is held whole (the core's
    /// `HeldEnds::held_whole_up_to`: it may read a failure in a shorter one).
    pub(crate) whole: usize,
    /// The JSON pointer of the value being converted.
    pub(crate) pointer: String,
    /// `(JSON pointer, bytes of the head left out)` of each string cut to its tail.
    pub(crate) heads: Vec<(String, usize)>,
}

impl Tails {
    /// The tails a cut at a cap of `max_bytes` reads: the ends the core names for a
    /// cut of the tail, whatever the keep policy (a cut that keeps a head is not
    /// decided from tails, and the value is read whole: L16).
    pub(crate) fn for_cap(max_bytes: usize) -> Self {
        let ends = HeldEnds::for_keep(max_bytes, Keep::Tail);
        Self {
            least: ends.tail,
            whole: ends.held_whole_up_to(),
            pointer: String::new(),
            heads: Vec::new(),
        }
    }

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
pub(crate) fn borrow_str<'a>(s: &'a Bound<'_, PyString>) -> Cow<'a, str> {
    s.to_str()
        .map_or_else(|_| s.to_string_lossy(), Cow::Borrowed)
}

/// The tail of `text` handed to the core for a cut held in part: at least `least`
/// bytes, from a character boundary.
pub(crate) fn held_tail(text: &str, least: usize) -> &str {
    let mut start = text.len().saturating_sub(least);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..]
}

/// [`to_value`], with long strings cut to their tails into `tails` when given.
pub(crate) fn convert(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    mut tails: Option<&mut Tails>,
) -> PyResult<Value> {
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
pub(crate) fn from_value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
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
pub(crate) fn text<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The list of strings member `key` of a JSON object (missing: empty).
pub(crate) fn names(map: &Map<String, Value>, key: &str) -> Vec<String> {
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
pub(crate) fn object(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Map<String, Value>> {
    match to_value(obj, 0)? {
        Value::Object(map) => Ok(map),
        _ => Err(PyTypeError::new_err(format!("{what} must be a dict"))),
    }
}
