//! What the core keeps of a call's argument values, and where a problem a validator
//! reported at `__root__` lies (SPEC V2, V3).
//!
//! serde names no argument when one has the wrong type (`invalid type: string …,
//! expected i64`), and the TypeScript SDK none when the arguments are absent
//! altogether; but the tool's input schema and the arguments are known, so the
//! location is too. An adapter hands the arguments to the core as [`ArgumentShapes`]:
//! each value's JSON type and, for a scalar, a keyed fingerprint to compare with the
//! schema's `enum` and `const` — never the value (V3). When the failure is converted,
//! each problem at `__root__` is placed at the properties it is about
//! (`locate_root_problems`):
//!
//! - a missing argument at each `required` property absent from the arguments (at the
//!   top level, and inside an object argument whose schema is plain);
//! - a type problem at each property whose value does not match the schema's `type`
//!   (a `type` array too), `enum` or `const` — at the top level, and nested inside
//!   objects (`properties`, local `$ref`s, the one `anyOf`/`oneOf` branch that fits)
//!   and arrays (`items`, `prefixItems`) — where the schema's word agrees with the
//!   validator's (serde's `expected i64` is about an `integer` property, never a
//!   `string` one: V2);
//!
//! one problem per property, each with the validator's message and kind. Where nothing
//! can be located, the problem stays at `__root__`. A location is always a path of the
//! schema's property names and array indexes: never a value, and never a name the
//! schema does not have.

use std::fmt;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::{Arc, OnceLock};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::result::ToolResult;
use crate::session::{ClientInfo, Revision, SERVER_INFO_META_KEY};
use crate::validation::{Problem, ProblemKind};

/// What is known of the call that failed: the tool, the argument names it gave, and —
/// when known — the names the tool takes and requires, its input schema, the shapes of
/// the values given, and the client (R2).
///
/// Only argument *names* are kept, never values (V3): of a value, only its
/// [`ArgumentShapes`].
///
/// ```
/// use backstop_core::{call::CallContext, protocol::ClientInfo};
/// let call = CallContext::new("takes_int")
///     .with_arguments(["count", "wait_for_previous"])
///     .with_parameters(["count"])
///     .with_required(["count"])
///     .with_client(ClientInfo::new("probe-client", "9.9"));
/// assert_eq!(call.arguments, ["count", "wait_for_previous"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallContext {
    /// The tool's name, as called.
    pub tool: String,
    /// The argument names the call gave, in the order given.
    pub arguments: Vec<String>,
    /// The names of the tool's parameters, when known.
    pub parameters: Option<Vec<String>>,
    /// The names of the tool's required parameters, when known.
    pub required: Option<Vec<String>>,
    /// The tool's input schema, when known: with the
    /// [`argument_shapes`](Self::argument_shapes), it says where a problem a validator
    /// reported at `__root__` lies (V2).
    pub input_schema: Option<Arc<Value>>,
    /// The shapes of the argument values given, when known (see [`ArgumentShapes`]).
    pub argument_shapes: Option<ArgumentShapes>,
    /// The client's identity, when known (R2).
    pub client: Option<ClientInfo>,
    /// The revision of the call's request, when known (R3): a result built for a
    /// request of 2026-07-28 carries `resultType` (R4).
    pub revision: Option<Revision>,
    /// The server identity an in-process server's SDK stamps in the `_meta` of every
    /// result of 2026-07-28 after backstop has shaped it (see
    /// [`add_wire_fields`](Self::add_wire_fields)).
    pub server_stamp: Option<Value>,
}

impl CallContext {
    /// A call of `tool` with no arguments and nothing known of the tool or client.
    ///
    /// ```
    /// let call = backstop_core::call::CallContext::new("list_panes");
    /// assert_eq!(call.tool, "list_panes");
    /// assert!(call.parameters.is_none());
    /// ```
    pub fn new(tool: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            ..Self::default()
        }
    }

    /// Set the argument names the call gave, in the order given. From a
    /// `serde_json::Map` of arguments, pass `arguments.keys()`.
    ///
    /// ```
    /// let args = serde_json::json!({"b": 1, "a": 2});
    /// let call = backstop_core::call::CallContext::new("t").with_arguments(args.as_object().unwrap().keys());
    /// assert_eq!(call.arguments.len(), 2);
    /// ```
    pub fn with_arguments<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.arguments = names.into_iter().map(Into::into).collect();
        self
    }

    /// Set the names of the tool's parameters.
    ///
    /// ```
    /// let call = backstop_core::call::CallContext::new("t").with_parameters(["count"]);
    /// assert_eq!(call.parameters.unwrap(), ["count"]);
    /// ```
    pub fn with_parameters<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parameters = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Set the names of the tool's required parameters.
    ///
    /// ```
    /// let call = backstop_core::call::CallContext::new("t").with_required(["count"]);
    /// assert_eq!(call.required.unwrap(), ["count"]);
    /// ```
    pub fn with_required<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Set the shapes of the argument values given (or `None`: unknown), for a problem
    /// a validator reported at `__root__` to be placed where the input schema says
    /// (V2). Give the names with [`with_arguments`](Self::with_arguments) too.
    ///
    /// ```
    /// use backstop_core::call::{ArgumentShapes, CallContext};
    /// let arguments = serde_json::json!({"count": "hunter2"});
    /// let call = CallContext::new("t").with_argument_shapes(ArgumentShapes::of(arguments.as_object().unwrap()));
    /// assert!(call.argument_shapes.is_some());
    /// ```
    pub fn with_argument_shapes(mut self, shapes: impl Into<Option<ArgumentShapes>>) -> Self {
        self.argument_shapes = shapes.into();
        self
    }

    /// Set the client's identity (or `None`: unknown).
    ///
    /// ```
    /// use backstop_core::{call::CallContext, protocol::ClientInfo};
    /// let call = CallContext::new("t").with_client(ClientInfo::new("c", "1"));
    /// assert_eq!(call.client.unwrap().name, "c");
    /// assert!(CallContext::new("t").with_client(None).client.is_none());
    /// ```
    pub fn with_client(mut self, client: impl Into<Option<ClientInfo>>) -> Self {
        self.client = client.into();
        self
    }

    /// Set the revision of the call's request (R3, R4).
    ///
    /// ```
    /// use backstop_core::{Failure, call::{CallContext, error_result}, protocol::Revision};
    /// let call = CallContext::new("t").with_revision(Revision::V2026_07_28);
    /// let result = error_result(&Failure::expected("no"), &call);
    /// assert_eq!(result.result_type.as_deref(), Some("complete"));
    /// let older = CallContext::new("t").with_revision(Revision::V2025_11_25);
    /// assert_eq!(error_result(&Failure::expected("no"), &older).result_type, None);
    /// ```
    pub fn with_revision(mut self, revision: impl Into<Option<Revision>>) -> Self {
        self.revision = revision.into();
        self
    }

    /// Set the identity stamp the server's SDK adds to results of 2026-07-28 (an
    /// object; anything else is ignored).
    pub fn with_server_stamp(mut self, stamp: Option<Value>) -> Self {
        self.server_stamp = stamp.filter(Value::is_object);
        self
    }

    /// Add to `result` what the wire carries for it on the call's revision, so that
    /// the limit counts it (L4) and the result is valid there (R4): from 2026-07-28 on,
    /// `resultType: "complete"` where it has none, and the [server
    /// stamp](Self::with_server_stamp) where its `_meta` has none. Returns whether
    /// anything was added.
    ///
    /// ```
    /// use backstop_core::{ToolResult, call::CallContext, protocol::Revision};
    /// let stamp = serde_json::json!({"name": "srv", "version": "1"});
    /// let call = CallContext::new("t").with_revision(Revision::V2026_07_28).with_server_stamp(Some(stamp));
    /// let mut result = ToolResult::text("ok");
    /// assert!(call.add_wire_fields(&mut result));
    /// assert_eq!(result.result_type.as_deref(), Some("complete"));
    /// assert_eq!(result.meta.unwrap()["io.modelcontextprotocol/serverInfo"]["name"], "srv");
    /// assert!(!CallContext::new("t").add_wire_fields(&mut ToolResult::text("ok")));
    /// ```
    pub fn add_wire_fields(&self, result: &mut ToolResult) -> bool {
        if !self
            .revision
            .is_some_and(Revision::results_carry_result_type)
        {
            return false;
        }
        let mut added = false;
        if let Some(stamp) = &self.server_stamp {
            let meta = result.meta.get_or_insert_with(Map::new);
            if meta.get(SERVER_INFO_META_KEY).is_none_or(Value::is_null) {
                meta.insert(SERVER_INFO_META_KEY.to_owned(), stamp.clone());
                added = true;
            }
        }
        if result.result_type.is_none() {
            result.result_type = Some("complete".to_owned());
            added = true;
        }
        added
    }

    /// Take the parameter and required names from the tool's `inputSchema`, and keep
    /// the schema (see [`input_schema`](Self::input_schema)).
    ///
    /// The parameters are the keys of `properties`. They are left unknown when the
    /// schema has no `properties` object, or admits other names: `additionalProperties`
    /// other than `false` (absent counts as closed: a name outside `properties` would
    /// be dropped by the tool's deserializer, which V6 forbids), `patternProperties`,
    /// or composition (`allOf`, `anyOf`, `oneOf`, `$ref`). The required names are
    /// those of a `required` array.
    ///
    /// ```
    /// let schema = serde_json::json!({
    ///     "type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]
    /// });
    /// let call = backstop_core::call::CallContext::new("takes_int").with_input_schema(&schema);
    /// assert_eq!(call.parameters.unwrap(), ["count"]);
    /// assert_eq!(call.required.unwrap(), ["count"]);
    /// ```
    pub fn with_input_schema(self, schema: &Value) -> Self {
        self.with_shared_input_schema(Arc::new(schema.clone()))
    }

    /// [`with_input_schema`](Self::with_input_schema) with a schema shared with the
    /// catalog (not copied per call).
    pub(crate) fn with_shared_input_schema(mut self, schema: Arc<Value>) -> Self {
        self.take_names_from(&schema);
        self.input_schema = Some(schema);
        self
    }

    fn take_names_from(&mut self, schema: &Value) {
        let open = schema
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
            || ["patternProperties", "allOf", "anyOf", "oneOf", "$ref"]
                .iter()
                .any(|key| schema.get(key).is_some());
        self.parameters = match schema.get("properties").and_then(Value::as_object) {
            Some(properties) if !open => Some(properties.keys().cloned().collect()),
            _ => None,
        };
        self.required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|required| {
                required
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
    }
}

/// The most values one call's shapes describe (B2: a pending call's state is bounded
/// whatever its arguments): past it, a value is not described, and so never located.
/// The top-level argument names are all kept, as they always were.
const MAX_SHAPED_VALUES: usize = 512;

/// The deepest value described; deeper ones are never located.
const MAX_DEPTH: usize = 8;

/// The most steps one search of a schema takes, and the deepest it goes (a `$ref`
/// loop ends in either).
const MAX_STEPS: usize = 4096;
const MAX_NESTING: usize = 64;

/// The JSON Schema type words, as [`type_in_words`](crate::validation::type_in_words)
/// writes serde's types.
const JSON_TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// What the core keeps of a call's arguments: their names, in order, and of each value
/// its JSON type, the members and elements of objects and arrays (to a depth and a
/// count), and for a scalar a fingerprint (SipHash under a key drawn once per process)
/// to compare with the schema's `enum` and `const`. Never the value itself, and its
/// `Debug` shows no fingerprint (V3).
///
/// It is built from the arguments object ([`of`](Self::of)), or read from its JSON
/// text ([`from_json`](Self::from_json)).
///
/// ```
/// use backstop_core::{Failure, call::{ArgumentShapes, CallContext, Problem, error_result}};
/// let arguments = serde_json::json!({"count": "hunter2", "verbose": true});
/// let shapes = ArgumentShapes::of(arguments.as_object().unwrap());
/// assert_eq!(shapes.names().collect::<Vec<_>>(), ["count", "verbose"]);
/// assert!(!format!("{shapes:?}").contains("hunter2"));
///
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "count": {"type": "integer"}, "verbose": {"type": "boolean"}}, "required": ["count"]});
/// let call = CallContext::new("takes_int")
///     .with_input_schema(&schema)
///     .with_arguments(shapes.names())
///     .with_argument_shapes(shapes);
/// // serde says which type it wanted, not where: the schema says where (V2).
/// let serde_says = r#"invalid type: string "hunter2", expected i64"#;
/// let failure = Failure::validation(vec![Problem::from_serde_message(serde_says).unwrap()]);
/// let result = error_result(&failure, &call);
/// assert_eq!(result.content[0].as_text().unwrap(),
///     "1 validation error for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ArgumentShapes(Shape);

impl ArgumentShapes {
    /// The shapes of an arguments object's values.
    pub fn of(arguments: &Map<String, Value>) -> Self {
        let mut budget = MAX_SHAPED_VALUES;
        let members = arguments
            .iter()
            .map(|(name, value)| {
                let shape = ShapeSeed::new(&mut budget, 1)
                    .deserialize(value)
                    .unwrap_or(Shape::Unknown);
                (name.clone(), shape)
            })
            .collect();
        Self(Shape::Object {
            members,
            complete: true,
        })
    }

    /// The shapes of the arguments in a request's JSON text (`params.arguments`, read
    /// without building it): anything but an object has no names and nothing to
    /// locate by; `null` is no arguments. JSON that cannot be read (not JSON, a number
    /// out of `f64`'s range) keeps what it can: the names, values undescribed.
    ///
    /// ```
    /// use backstop_core::call::ArgumentShapes;
    /// let shapes = ArgumentShapes::from_json(r#"{"b": "hunter2", "a": 1e400}"#);
    /// assert_eq!(shapes.names().collect::<Vec<_>>(), ["b", "a"]);
    /// assert_eq!(ArgumentShapes::from_json("[1]").names().count(), 0);
    /// ```
    pub fn from_json(json: &str) -> Self {
        let read = |describe| {
            let mut deserializer = serde_json::Deserializer::from_str(json);
            Top { describe }.deserialize(&mut deserializer)
        };
        read(true)
            .or_else(|_| read(false))
            .unwrap_or_else(|_| Self::not_an_object())
    }

    /// The argument names, in the order given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let members = match &self.0 {
            Shape::Object { members, .. } => &members[..],
            _ => &[],
        };
        members.iter().map(|(name, _)| name.as_str())
    }

    /// Arguments that are no object: no names, and nothing to locate by.
    fn not_an_object() -> Self {
        Self(Shape::Object {
            members: Vec::new(),
            complete: false,
        })
    }
}

impl Default for ArgumentShapes {
    /// No arguments at all (an absent `arguments`).
    fn default() -> Self {
        Self(Shape::Object {
            members: Vec::new(),
            complete: true,
        })
    }
}

impl fmt::Debug for ArgumentShapes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ArgumentShapes").field(&self.0).finish()
    }
}

/// The top level of an arguments object: every name is kept (as the names always
/// were); the values are described within the budget when `describe`.
struct Top {
    describe: bool,
}

impl<'de> DeserializeSeed<'de> for Top {
    type Value = ArgumentShapes;
    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<ArgumentShapes, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top {
    type Value = ArgumentShapes;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ArgumentShapes, A::Error> {
        let mut budget = MAX_SHAPED_VALUES;
        let mut members = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            let shape = match self.describe {
                true => map.next_value_seed(ShapeSeed::new(&mut budget, 1))?,
                false => {
                    map.next_value::<IgnoredAny>()?;
                    Shape::Unknown
                }
            };
            members.push((name, shape));
        }
        Ok(ArgumentShapes(Shape::Object {
            members,
            complete: true,
        }))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ArgumentShapes, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ArgumentShapes::not_an_object())
    }
    fn visit_bool<E>(self, _: bool) -> Result<ArgumentShapes, E> {
        Ok(ArgumentShapes::not_an_object())
    }
    fn visit_i64<E>(self, _: i64) -> Result<ArgumentShapes, E> {
        Ok(ArgumentShapes::not_an_object())
    }
    fn visit_u64<E>(self, _: u64) -> Result<ArgumentShapes, E> {
        Ok(ArgumentShapes::not_an_object())
    }
    fn visit_f64<E>(self, _: f64) -> Result<ArgumentShapes, E> {
        Ok(ArgumentShapes::not_an_object())
    }
    fn visit_str<E>(self, _: &str) -> Result<ArgumentShapes, E> {
        Ok(ArgumentShapes::not_an_object())
    }
    fn visit_unit<E>(self) -> Result<ArgumentShapes, E> {
        Ok(ArgumentShapes::default())
    }
}

/// The shape of one value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// Not described (past the budget or the depth).
    Unknown,
    Null,
    Boolean(Fingerprint),
    /// A number without a fractional part (JSON Schema's `integer`).
    Integer(Fingerprint),
    Number(Fingerprint),
    String(Fingerprint),
    /// The elements described, in order (the rest not described).
    Array(Vec<Shape>),
    /// The members described, in order; `complete` when they are all of them.
    Object {
        members: Vec<(String, Shape)>,
        complete: bool,
    },
}

/// A keyed hash of a scalar value, to tell whether it equals an `enum` or `const`
/// member of the schema. Equal values have equal fingerprints; a collision can only
/// make a value look allowed, and so leave it unlocated.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Fingerprint(u64);

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fingerprint(..)")
    }
}

impl Fingerprint {
    fn hasher(kind: u8) -> impl Hasher {
        static KEY: OnceLock<RandomState> = OnceLock::new();
        let mut hasher = KEY.get_or_init(RandomState::new).build_hasher();
        hasher.write_u8(kind);
        hasher
    }

    fn of_bool(value: bool) -> Self {
        let mut hasher = Self::hasher(0);
        hasher.write_u8(u8::from(value));
        Self(hasher.finish())
    }

    /// Numbers compare as JSON Schema compares them: `1` equals `1.0`.
    fn of_number(value: f64) -> Self {
        let mut hasher = Self::hasher(1);
        let value = if value == 0.0 { 0.0 } else { value };
        hasher.write_u64(value.to_bits());
        Self(hasher.finish())
    }

    fn of_str(value: &str) -> Self {
        let mut hasher = Self::hasher(2);
        hasher.write(value.as_bytes());
        hasher.write_u8(0xff);
        Self(hasher.finish())
    }
}

impl Shape {
    fn number(value: f64) -> Self {
        let fingerprint = Fingerprint::of_number(value);
        if value.is_finite() && value.fract() == 0.0 {
            Shape::Integer(fingerprint)
        } else {
            Shape::Number(fingerprint)
        }
    }
}

/// Reads one value as its shape, spending the budget; a value past the budget or the
/// depth is skipped unread.
struct ShapeSeed<'b> {
    budget: &'b mut usize,
    depth: usize,
}

impl<'b> ShapeSeed<'b> {
    fn new(budget: &'b mut usize, depth: usize) -> Self {
        Self { budget, depth }
    }
}

impl<'de> DeserializeSeed<'de> for ShapeSeed<'_> {
    type Value = Shape;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        if *self.budget == 0 || self.depth > MAX_DEPTH {
            <IgnoredAny as serde::Deserialize>::deserialize(deserializer)?;
            return Ok(Shape::Unknown);
        }
        *self.budget -= 1;
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ShapeSeed<'_> {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_bool<E>(self, value: bool) -> Result<Shape, E> {
        Ok(Shape::Boolean(Fingerprint::of_bool(value)))
    }
    #[allow(clippy::cast_precision_loss)] // equal values stay equal (see Fingerprint)
    fn visit_i64<E>(self, value: i64) -> Result<Shape, E> {
        Ok(Shape::number(value as f64))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_u64<E>(self, value: u64) -> Result<Shape, E> {
        Ok(Shape::number(value as f64))
    }
    fn visit_f64<E>(self, value: f64) -> Result<Shape, E> {
        Ok(Shape::number(value))
    }
    fn visit_str<E>(self, value: &str) -> Result<Shape, E> {
        Ok(Shape::String(Fingerprint::of_str(value)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut elements = Vec::new();
        while let Some(element) =
            seq.next_element_seed(ShapeSeed::new(&mut *self.budget, self.depth + 1))?
        {
            // Past the budget the rest are not described (nor kept).
            if element != Shape::Unknown {
                elements.push(element);
            } else {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                break;
            }
        }
        Ok(Shape::Array(elements))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut members = Vec::new();
        let mut complete = true;
        while let Some(name) = map.next_key::<String>()? {
            if *self.budget == 0 || self.depth >= MAX_DEPTH {
                // Past the budget the names are not kept either (B2).
                map.next_value::<IgnoredAny>()?;
                complete = false;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                break;
            }
            let shape = map.next_value_seed(ShapeSeed::new(&mut *self.budget, self.depth + 1))?;
            members.push((name, shape));
        }
        Ok(Shape::Object { members, complete })
    }
}

/// What a search of the schema found at one location.
#[derive(Debug, Clone, PartialEq)]
enum Found<'s> {
    /// A `required` property is absent.
    Missing,
    /// The value is of none of these types.
    Type(Vec<&'s str>),
    /// The value is none of the `enum`, or not the `const`.
    Value,
}

/// One place the arguments do not match the schema.
#[derive(Debug, Clone, PartialEq)]
struct Mismatch<'s> {
    location: Vec<String>,
    found: Found<'s>,
}

/// Whether a value is allowed by a schema's own `type`, `enum` and `const`, as far as
/// its shape tells.
enum Admits<'s> {
    /// Allowed, or cannot tell.
    Maybe,
    /// Not allowed.
    No(Found<'s>),
}

/// A search of one schema for where the arguments do not match it.
struct Search<'s> {
    root: &'s Value,
    steps: usize,
    nesting: usize,
    found: Vec<Mismatch<'s>>,
}

impl<'s> Search<'s> {
    fn run(schema: &'s Value, shapes: &ArgumentShapes) -> Vec<Mismatch<'s>> {
        let mut search = Search {
            root: schema,
            steps: MAX_STEPS,
            nesting: 0,
            found: Vec::new(),
        };
        search.check(schema, &shapes.0, &mut Vec::new());
        // One finding per location: the first.
        let mut seen: Vec<&[String]> = Vec::new();
        let mut unique = Vec::new();
        for mismatch in &search.found {
            if !seen.contains(&&mismatch.location[..]) {
                seen.push(&mismatch.location);
                unique.push(mismatch.clone());
            }
        }
        unique
    }

    /// One step more; false once the steps are spent.
    fn step(&mut self) -> bool {
        self.steps = self.steps.saturating_sub(1);
        self.steps > 0 && self.nesting < MAX_NESTING
    }

    fn check(&mut self, schema: &'s Value, shape: &Shape, location: &mut Vec<String>) {
        self.nesting += 1;
        self.check_here(schema, shape, location);
        self.nesting -= 1;
    }

    fn admits(&mut self, schema: &'s Value, shape: &Shape) -> Admits<'s> {
        self.nesting += 1;
        let admits = self.admits_here(schema, shape);
        self.nesting -= 1;
        admits
    }

    /// The target of a local `$ref` (`#`, `#/$defs/X`, any JSON pointer into the
    /// schema); `None` for any other.
    fn resolve(&self, schema: &Map<String, Value>) -> Option<&'s Value> {
        let reference = schema.get("$ref")?.as_str()?;
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn check_here(&mut self, schema: &'s Value, shape: &Shape, location: &mut Vec<String>) {
        if *shape == Shape::Unknown || !self.step() {
            return;
        }
        let Value::Object(map) = schema else {
            return; // `true`, `false` or no schema: nothing to say
        };
        if let Some(target) = self.resolve(map) {
            self.check(target, shape, location);
        }
        if let Admits::No(found) = own_admits(map, shape) {
            self.found.push(Mismatch {
                location: location.clone(),
                found,
            });
            return;
        }
        for branch in map
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.check(branch, shape, location);
        }
        for key in ["anyOf", "oneOf"] {
            let Some(branches) = map.get(key).and_then(Value::as_array) else {
                continue;
            };
            let mut open = Vec::new();
            let mut refused = Vec::new();
            for branch in branches {
                match self.admits(branch, shape) {
                    Admits::Maybe => open.push(branch),
                    Admits::No(found) => refused.push(found),
                }
            }
            match open[..] {
                [] if !refused.is_empty() => {
                    self.found.push(Mismatch {
                        location: location.clone(),
                        found: merged(refused),
                    });
                    return;
                }
                [branch] => self.check(branch, shape, location),
                _ => {}
            }
        }
        match shape {
            Shape::Object { members, complete } => {
                let properties = map.get("properties").and_then(Value::as_object);
                for (name, member) in members {
                    if let Some(property) = properties.and_then(|p| p.get(name)) {
                        location.push(name.clone());
                        self.check(property, member, location);
                        location.pop();
                    }
                }
                let required = map.get("required").and_then(Value::as_array);
                for name in required.into_iter().flatten().filter_map(Value::as_str) {
                    if *complete && !members.iter().any(|(given, _)| given == name) {
                        let mut at = location.clone();
                        at.push(name.to_owned());
                        self.found.push(Mismatch {
                            location: at,
                            found: Found::Missing,
                        });
                    }
                }
            }
            Shape::Array(elements) => {
                let prefix = map.get("prefixItems").and_then(Value::as_array);
                let items = map.get("items");
                for (index, element) in elements.iter().enumerate() {
                    let schema = match (prefix.and_then(|p| p.get(index)), items) {
                        (Some(schema), _) => schema,
                        // Drafts before 2020-12 wrote a tuple as an `items` array.
                        (None, Some(Value::Array(tuple))) => match tuple.get(index) {
                            Some(schema) => schema,
                            None => continue,
                        },
                        (None, Some(schema)) if prefix.is_none_or(|p| index >= p.len()) => schema,
                        _ => continue,
                    };
                    location.push(index.to_string());
                    self.check(schema, element, location);
                    location.pop();
                }
            }
            _ => {}
        }
    }

    /// Whether `schema` (one branch of an `anyOf`/`oneOf`) allows the value, by its
    /// own keywords, its `$ref`, `allOf` and nested branches.
    fn admits_here(&mut self, schema: &'s Value, shape: &Shape) -> Admits<'s> {
        if !self.step() {
            return Admits::Maybe;
        }
        let Value::Object(map) = schema else {
            return Admits::Maybe;
        };
        if let Some(target) = self.resolve(map)
            && let Admits::No(found) = self.admits(target, shape)
        {
            return Admits::No(found);
        }
        if let Admits::No(found) = own_admits(map, shape) {
            return Admits::No(found);
        }
        for branch in map
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Admits::No(found) = self.admits(branch, shape) {
                return Admits::No(found);
            }
        }
        for key in ["anyOf", "oneOf"] {
            let Some(branches) = map.get(key).and_then(Value::as_array) else {
                continue;
            };
            let mut refused = Vec::new();
            for branch in branches {
                match self.admits(branch, shape) {
                    Admits::Maybe => return Admits::Maybe,
                    Admits::No(found) => refused.push(found),
                }
            }
            if !refused.is_empty() {
                return Admits::No(merged(refused));
            }
        }
        Admits::Maybe
    }
}

/// What every branch refusing says together: the types of all of them when each
/// refused the type, else a value none allows.
fn merged(refused: Vec<Found<'_>>) -> Found<'_> {
    let mut types = Vec::new();
    for found in refused {
        match found {
            Found::Type(declared) => types.extend(declared),
            _ => return Found::Value,
        }
    }
    Found::Type(types)
}

/// Whether a schema's own `type`, `const` and `enum` allow a value of this shape.
fn own_admits<'s>(schema: &'s Map<String, Value>, shape: &Shape) -> Admits<'s> {
    let declared: Vec<&str> = match schema.get("type") {
        Some(Value::String(word)) => vec![word.as_str()],
        Some(Value::Array(words)) => words.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !declared.is_empty() && !declared.iter().any(|word| type_allows(word, shape)) {
        return Admits::No(Found::Type(declared));
    }
    if let Some(constant) = schema.get("const")
        && equals(shape, constant) == Some(false)
    {
        return Admits::No(Found::Value);
    }
    if let Some(members) = schema.get("enum").and_then(Value::as_array)
        && !members.is_empty()
        && members
            .iter()
            .all(|member| equals(shape, member) == Some(false))
    {
        return Admits::No(Found::Value);
    }
    Admits::Maybe
}

/// Whether the type word allows a value of this shape (a word JSON Schema does not
/// have allows anything: it cannot be told).
fn type_allows(word: &str, shape: &Shape) -> bool {
    match (word, shape) {
        (_, Shape::Unknown)
        | ("null", Shape::Null)
        | ("boolean", Shape::Boolean(_))
        | ("integer", Shape::Integer(_))
        | ("number", Shape::Integer(_) | Shape::Number(_))
        | ("string", Shape::String(_))
        | ("array", Shape::Array(_))
        | ("object", Shape::Object { .. }) => true,
        (word, _) => !JSON_TYPES.contains(&word),
    }
}

/// Whether the value equals a schema's `enum`/`const` member; `None`: cannot tell (an
/// array or object member, a value not described).
fn equals(shape: &Shape, member: &Value) -> Option<bool> {
    Some(match (shape, member) {
        (Shape::Unknown, _) => return None,
        (Shape::Array(_) | Shape::Object { .. }, Value::Array(_) | Value::Object(_)) => {
            return None;
        }
        (Shape::Null, Value::Null) => true,
        (Shape::Boolean(fingerprint), Value::Bool(value)) => {
            *fingerprint == Fingerprint::of_bool(*value)
        }
        (Shape::Integer(fingerprint) | Shape::Number(fingerprint), Value::Number(value)) => {
            *fingerprint == Fingerprint::of_number(value.as_f64()?)
        }
        (Shape::String(fingerprint), Value::String(value)) => {
            *fingerprint == Fingerprint::of_str(value)
        }
        _ => false,
    })
}

/// Whether a problem of this kind can be the one found there: a missing argument is
/// an absent `required` property; a wrong type whose word serde or zod named is a
/// property of that type given another (never a property of another type: that would
/// contradict the caller, V2); a wrong type in other words, or an unknown variant or
/// invalid value, any value the schema does not allow.
fn is_about(kind: &ProblemKind, found: &Found<'_>) -> bool {
    match (kind, found) {
        (ProblemKind::MissingArgument, Found::Missing) => true,
        (ProblemKind::MissingArgument, _) | (_, Found::Missing) => false,
        (ProblemKind::InvalidType { expected }, found) if JSON_TYPES.contains(&&**expected) => {
            matches!(found, Found::Type(declared) if declared.contains(&&**expected))
        }
        (ProblemKind::InvalidType { .. }, _) => true,
        (ProblemKind::Other { kind, .. }, Found::Value) => {
            kind == "unknown_variant" || kind == "invalid_value"
        }
        _ => false,
    }
}

/// `problems` with each one at `__root__` placed where the call's input schema and
/// argument shapes say it lies (see the [module docs](self)), one problem per
/// location, in the order of the arguments; a problem nothing locates stays at the
/// root. Without the shapes, a missing argument is placed at the `required` names
/// the call did not give.
pub(crate) fn locate_root_problems(problems: &[Problem], call: &CallContext) -> Vec<Problem> {
    if problems.iter().all(|problem| !problem.location.is_empty()) {
        return problems.to_vec();
    }
    let schema = call.input_schema.as_deref();
    let found = match (schema, &call.argument_shapes) {
        (Some(schema), Some(shapes)) => Search::run(schema, shapes),
        (_, None) => absent_required(call),
        (None, Some(_)) => Vec::new(),
    };
    let mut located: Vec<Problem> = Vec::with_capacity(problems.len());
    for problem in problems {
        let at: Vec<&Mismatch<'_>> = match problem.location.is_empty() {
            true => found
                .iter()
                .filter(|m| is_about(&problem.kind, &m.found))
                .collect(),
            false => Vec::new(),
        };
        if at.is_empty() {
            located.push(problem.clone());
            continue;
        }
        for mismatch in at {
            let problem = problem.clone().at(mismatch.location.iter().cloned());
            if !located.contains(&problem) {
                located.push(problem);
            }
        }
    }
    located
}

/// The `required` names the call did not give, as missing at the top level.
fn absent_required(call: &CallContext) -> Vec<Mismatch<'static>> {
    let required = call.required.iter().flatten();
    required
        .filter(|name| !call.arguments.contains(name))
        .map(|name| Mismatch {
            location: vec![name.clone()],
            found: Found::Missing,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::render_problems;
    use proptest::prelude::*;
    use serde_json::json;

    fn shapes(arguments: &Value) -> ArgumentShapes {
        ArgumentShapes::of(arguments.as_object().unwrap())
    }

    fn call(schema: &Value, arguments: &Value) -> CallContext {
        let shapes = shapes(arguments);
        CallContext::new("t")
            .with_input_schema(schema)
            .with_arguments(shapes.names())
            .with_argument_shapes(shapes)
    }

    /// Where a root problem of `kind` is placed, as dotted locations.
    fn located(schema: &Value, arguments: &Value, problem: Problem) -> Vec<String> {
        locate_root_problems(&[problem], &call(schema, arguments))
            .iter()
            .map(Problem::location_text)
            .collect()
    }

    fn root_type(expected: &str) -> Problem {
        Problem::invalid_type(Vec::<String>::new(), expected)
    }

    fn root_missing() -> Problem {
        Problem::missing_argument("").at(Vec::<String>::new())
    }

    fn takes_int_schema() -> Value {
        json!({"type": "object", "properties": {
            "count": {"type": "integer"}, "verbose": {"type": "boolean"},
            "label": {"type": "string"}}, "required": ["count"]})
    }

    #[test]
    fn v2_a_wrong_type_is_placed_at_the_property_of_that_type() {
        let schema = takes_int_schema();
        let arguments = json!({"count": "hunter2", "verbose": true});
        assert_eq!(
            located(&schema, &arguments, root_type("integer")),
            ["count"]
        );
        // Two integers wrong: both, in the order given.
        let schema = json!({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
        let arguments = json!({"a": "x", "b": [1]});
        assert_eq!(
            located(&schema, &arguments, root_type("integer")),
            ["a", "b"]
        );
    }

    #[test]
    fn v2_never_at_a_property_of_another_type() {
        // serde wanted an integer; the only mismatch is a string property given a
        // number: placing "a valid integer" there would contradict the caller.
        let schema = takes_int_schema();
        let arguments = json!({"count": 1, "label": 5});
        assert_eq!(
            located(&schema, &arguments, root_type("integer")),
            ["__root__"]
        );
        assert_eq!(located(&schema, &arguments, root_type("string")), ["label"]);
        // Nothing wrong by the schema: the root, as before.
        let arguments = json!({"count": 1, "label": "x"});
        assert_eq!(
            located(&schema, &arguments, root_type("integer")),
            ["__root__"]
        );
    }

    #[test]
    fn type_arrays_numbers_and_null() {
        let schema = json!({"properties": {
            "n": {"type": ["integer", "null"]}, "x": {"type": "number"}}});
        assert_eq!(
            located(&schema, &json!({"n": null, "x": 1}), root_type("integer")),
            ["__root__"]
        );
        assert_eq!(
            located(&schema, &json!({"n": 1.5, "x": 2.5}), root_type("integer")),
            ["n"]
        );
        assert_eq!(
            located(&schema, &json!({"n": 2.0, "x": "1"}), root_type("number")),
            ["x"]
        );
    }

    #[test]
    fn enum_and_const_are_told_by_fingerprint() {
        let schema = json!({"properties": {
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "level": {"enum": [1, 2, null]},
            "kind": {"const": "pane"}}});
        let variant = Problem::root_other("unknown_variant", "Input should be `fast` or `slow`");
        let arguments = json!({"mode": "turbo", "level": 2.0, "kind": "pane"});
        assert_eq!(located(&schema, &arguments, variant.clone()), ["mode"]);
        let arguments = json!({"mode": "fast", "level": 3, "kind": "window"});
        // (In the order of the arguments object: serde_json's maps are sorted.)
        assert_eq!(
            located(&schema, &arguments, variant.clone()),
            ["kind", "level"]
        );
        let arguments = json!({"mode": "slow", "level": null, "kind": "pane"});
        assert_eq!(located(&schema, &arguments, variant), ["__root__"]);
        // A wrong type in serde's words for an enum type: any value not allowed.
        let arguments = json!({"mode": 5});
        assert_eq!(
            located(&schema, &arguments, root_type("value of enum Mode")),
            ["mode"]
        );
    }

    #[test]
    fn nested_through_refs_options_and_arrays() {
        // As schemars writes `target: Option<Target>`, `names: Vec<String>`,
        // `pair: (u8, u8)`.
        let schema = json!({
            "type": "object",
            "properties": {
                "target": {"anyOf": [{"$ref": "#/$defs/Target"}, {"type": "null"}]},
                "names": {"type": "array", "items": {"type": "string"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}]}
            },
            "$defs": {"Target": {"type": "object", "properties": {"pane": {"type": "string"}},
                                 "required": ["pane"]}}
        });
        let arguments = json!({"target": {"pane": 5}, "names": ["a", 7], "pair": [1, "2"]});
        assert_eq!(
            located(&schema, &arguments, root_type("string")),
            ["names.1", "target.pane"]
        );
        assert_eq!(
            located(&schema, &arguments, root_type("integer")),
            ["pair.1"]
        );
        // A value no branch takes is placed at the property itself.
        let arguments = json!({"target": "pane"});
        assert_eq!(
            located(&schema, &arguments, root_type("object")),
            ["target"]
        );
        // A missing member of a nested object.
        assert_eq!(
            located(&schema, &json!({"target": {}}), root_missing()),
            ["target.pane"]
        );
    }

    #[test]
    fn missing_arguments_are_the_required_ones_absent() {
        // The TypeScript SDK's arguments-absent case: `__root__ Missing required
        // argument`; the schema names them.
        let schema = json!({"type": "object", "properties": {"a": {"type": "number"},
            "b": {"type": "number"}}, "required": ["a", "b"]});
        assert_eq!(located(&schema, &json!({}), root_missing()), ["a", "b"]);
        assert_eq!(located(&schema, &json!({"a": 1}), root_missing()), ["b"]);
        assert_eq!(
            located(&schema, &json!({"a": 1, "b": 2}), root_missing()),
            ["__root__"]
        );
        // Without the shapes, from the names alone.
        let names = CallContext::new("t")
            .with_input_schema(&schema)
            .with_arguments(["a"]);
        let problems = locate_root_problems(&[root_missing()], &names);
        assert_eq!(problems, [Problem::missing_argument("b")]);
        // Arguments that are no object: nothing to locate by.
        let not_an_object = ArgumentShapes::from_json("[1]");
        let call = CallContext::new("t")
            .with_input_schema(&schema)
            .with_argument_shapes(not_an_object);
        assert_eq!(
            locate_root_problems(&[root_missing()], &call),
            [root_missing()]
        );
    }

    #[test]
    fn other_kinds_and_located_problems_stay() {
        let schema = takes_int_schema();
        let arguments = json!({"count": "x"});
        let problems = [
            Problem::invalid_arguments(),
            Problem::root_other("invalid_length", "Invalid length, expected 2"),
            Problem::unexpected_argument("bogus"),
            Problem::invalid_type(["label"], "string"),
        ];
        assert_eq!(
            locate_root_problems(&problems, &call(&schema, &arguments)),
            problems
        );
        // No schema or no shapes: the root.
        let unknown = CallContext::new("t").with_argument_shapes(shapes(&arguments));
        assert_eq!(
            locate_root_problems(&[root_type("integer")], &unknown),
            [root_type("integer")]
        );
    }

    #[test]
    fn loops_and_odd_schemas_end() {
        let arguments = json!({"a": {"a": {"a": "x"}}});
        for schema in [
            json!({"$ref": "#"}),
            json!({"properties": {"a": {"$ref": "#"}}}),
            json!({"anyOf": [{"$ref": "#"}, {"$ref": "#/anyOf/0"}]}),
            json!({"properties": {"a": {"$ref": "#/nowhere"}}}),
            json!({"properties": {"a": true}}),
            json!({"properties": {"a": false}}),
            json!("not a schema"),
            json!({"properties": {"a": {"type": ["object", 5]}}}),
        ] {
            let _ = located(&schema, &arguments, root_type("integer"));
        }
        let schema = json!({"properties": {"a": {"$ref": "#"}}, "type": "object"});
        assert_eq!(located(&schema, &arguments, root_type("object")), ["a.a.a"]);
    }

    #[test]
    fn the_budget_bounds_what_is_kept() {
        let many: Map<String, Value> = (0..2 * MAX_SHAPED_VALUES)
            .map(|i| (format!("k{i}"), json!("x")))
            .collect();
        let shapes = ArgumentShapes::of(&many);
        assert_eq!(
            shapes.names().count(),
            2 * MAX_SHAPED_VALUES,
            "every name kept"
        );
        let Shape::Object { members, .. } = &shapes.0 else {
            unreachable!()
        };
        let described = members.iter().filter(|(_, s)| *s != Shape::Unknown).count();
        assert_eq!(described, MAX_SHAPED_VALUES);
        // Nested past the budget: the object is marked incomplete, its names dropped.
        let nested = json!({"o": (0..2 * MAX_SHAPED_VALUES)
            .map(|i| (format!("k{i}"), json!(1))).collect::<Map<String, Value>>()});
        let shapes = ArgumentShapes::of(nested.as_object().unwrap());
        let Shape::Object { members, .. } = &shapes.0 else {
            unreachable!()
        };
        let Shape::Object { members, complete } = &members[0].1 else {
            unreachable!()
        };
        assert!(!complete && members.len() < MAX_SHAPED_VALUES);
        // Deeper than the depth: not described.
        let mut deep = json!("x");
        for _ in 0..2 * MAX_DEPTH {
            deep = json!([deep]);
        }
        let _ = ArgumentShapes::of(json!({"d": deep}).as_object().unwrap());
    }

    #[test]
    fn read_while_parsing_as_built_from_the_value() {
        let text = r#"{"count": "hunter2", "e": "a\u00e9", "t": {"p": [1, 2.5, null, true]}}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ArgumentShapes::from_json(text), shapes(&value));
        for not_an_object in ["[1]", "1", "\"s\"", "true", "1.5", "", "{", "{\"a\" 1}"] {
            assert_eq!(ArgumentShapes::from_json(not_an_object).names().count(), 0);
        }
        // Read in the order given (a `Value` sorts them).
        let given = ArgumentShapes::from_json(r#"{"b": 1, "a": 2}"#);
        assert_eq!(given.names().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(ArgumentShapes::from_json("null"), ArgumentShapes::default());
        // A number serde_json cannot read as a value: the names stay, undescribed.
        let huge = ArgumentShapes::from_json(r#"{"a": 1e400, "b": "x"}"#);
        assert_eq!(huge.names().collect::<Vec<_>>(), ["a", "b"]);
        let schema = json!({"properties": {"b": {"type": "integer"}}, "required": ["a", "c"]});
        let call = CallContext::new("t")
            .with_input_schema(&schema)
            .with_arguments(huge.names())
            .with_argument_shapes(huge);
        let problems = locate_root_problems(&[root_type("integer"), root_missing()], &call);
        assert_eq!(
            problems,
            [root_type("integer"), Problem::missing_argument("c")]
        );
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "S3CR3T[a-z0-9]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-d]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn json_schema() -> impl Strategy<Value = Value> {
        let word = prop::sample::select(JSON_TYPES.to_vec());
        let leaf = prop_oneof![
            word.clone().prop_map(|t| json!({"type": t})),
            prop::collection::vec(word, 1..3).prop_map(|t| json!({"type": t})),
            Just(json!({"enum": ["S3CR3Tab", 1, null]})),
            Just(json!({"const": "S3CR3Tq"})),
            Just(json!({"$ref": "#"})),
            Just(json!(true)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                (
                    prop::collection::btree_map("[a-d]", inner.clone(), 0..4),
                    prop::collection::vec("[a-e]", 0..3)
                )
                    .prop_map(|(properties, required)| json!({"type": "object",
                        "properties": properties, "required": required})),
                inner
                    .clone()
                    .prop_map(|items| json!({"type": "array", "items": items})),
                prop::collection::vec(inner, 1..3).prop_map(|branches| json!({"anyOf": branches})),
            ]
        })
    }

    /// The names a schema has: its properties' and required names, at any depth.
    fn schema_names(schema: &Value, names: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    if key == "properties"
                        && let Some(properties) = value.as_object()
                    {
                        names.extend(properties.keys().cloned());
                    }
                    if key == "required" {
                        names.extend(
                            value
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(Value::as_str)
                                .map(str::to_owned),
                        );
                    }
                    schema_names(value, names);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| schema_names(item, names)),
            _ => {}
        }
    }

    proptest! {
        /// For any arguments and schema: every located segment is a name of the schema
        /// (or an array index), and no argument value is anywhere in what is rendered
        /// or recorded (V3).
        #[test]
        fn v3_located_problems_name_only_the_schema(
            arguments in prop::collection::btree_map("[a-f]", json_value(), 0..5),
            properties in prop::collection::btree_map("[a-f]", json_schema(), 0..5),
            required in prop::collection::vec("[a-g]", 0..3),
            expected in prop::sample::select(vec!["integer", "string", "object", "array",
                "number", "boolean", "null", "value of enum Mode"]),
        ) {
            let arguments = Value::Object(arguments.into_iter().collect());
            let schema = json!({"type": "object", "properties": properties, "required": required});
            let problems = [
                root_type(expected),
                root_missing(),
                Problem::root_other("unknown_variant", "Input should be `a`"),
            ];
            let call = call(&schema, &arguments);
            let located = locate_root_problems(&problems, &call);
            let mut names = Vec::new();
            schema_names(&schema, &mut names);
            for problem in &located {
                for segment in &problem.location {
                    prop_assert!(names.contains(segment) || segment.parse::<usize>().is_ok(),
                        "{} not in the schema", segment);
                }
            }
            let failure = crate::failure::Failure::validation(located.clone());
            let result = crate::error_result::error_result(&failure, &call);
            let wire = serde_json::to_string(&result).unwrap();
            let log = format!("{:?}", crate::log::LogRecord::for_call(&failure, &call));
            let text = render_problems("t", &located);
            let shapes = format!("{:?}", call.argument_shapes);
            for shown in [&wire, &log, &text, &shapes] {
                prop_assert!(!shown.contains("S3CR3T"), "V3: {}", shown);
            }
        }
    }
}
