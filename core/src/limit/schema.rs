//! What a tool's `outputSchema` lets a cut do to its `structuredContent` (SPEC L15).
//!
//! A structured cut only ever does two things: a string loses its head, an array loses
//! its first items. [`Applicable`] holds the schemas that apply to one value — found
//! through `$ref`, `allOf`, `anyOf` and `oneOf` — and says whether each is allowed
//! there, and how far:
//!
//! - a string may be cut unless a schema gives it a `pattern`, `format`, `enum`,
//!   `const` or content encoding; `minLength` bounds what is kept;
//! - an array may lose items unless a schema gives it an `enum` or `const`;
//!   `minItems` bounds what is kept;
//! - under `anyOf`/`oneOf`, every branch whose `type` admits the value must allow the
//!   cut (the branch that validated the value is one of them); under `oneOf`, a
//!   `maxLength`/`maxItems` forbids it, as a shorter value could start to match a
//!   second branch;
//! - anything under a keyword this module does not know (`not`, `if`,
//!   `patternProperties`, `prefixItems`, `contains`, a remote `$ref`, …) stays as it is.
//!
//! Without a schema every string and array may be cut (L15 b).

use serde_json::{Map, Value};

/// Keywords whose meaning a cut cannot break, or that this module applies.
const KNOWN: &[&str] = &[
    // Applied here.
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "pattern",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "minLength",
    "minItems",
    "maxLength",
    "maxItems",
    // Not affected by shortening a string or dropping array items.
    "type",
    "nullable",
    "required",
    "uniqueItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
    "discriminator",
    // Annotations and places that hold definitions.
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The most schemas looked at for one value: a `$ref` cycle, or branches that multiply
/// (`anyOf` of `$ref`s back to itself), is not understood rather than walked for ever.
const MAX_SCHEMAS: usize = 512;

/// A schema construct this module does not understand: the value under it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NotUnderstood;

/// The schemas that apply to one value; a cut must satisfy all of them.
#[derive(Debug, Clone)]
pub(super) struct Applicable<'s> {
    /// The document `$ref`s resolve in; `None` when the tool advertises no schema.
    root: Option<&'s Value>,
    schemas: Vec<&'s Map<String, Value>>,
    /// Some of the schemas came from a `oneOf` branch.
    exclusive: bool,
}

impl<'s> Applicable<'s> {
    /// The schemas that apply to a tool's whole `structuredContent`: `None` when the tool
    /// advertises no `outputSchema`, so that every string and array may be cut (L15 b).
    pub(super) fn root(schema: Option<&'s Value>, value: &Value) -> Result<Self, NotUnderstood> {
        let mut applicable = Self {
            root: schema,
            schemas: Vec::new(),
            exclusive: false,
        };
        if let Some(schema) = schema {
            applicable.collect(schema, value, &mut { MAX_SCHEMAS })?;
        }
        Ok(applicable)
    }

    fn child(&self) -> Self {
        Self {
            root: self.root,
            schemas: Vec::new(),
            exclusive: false,
        }
    }

    /// Add `schema` and every schema it brings in for `value`, counting each schema
    /// looked at against `work`.
    fn collect(
        &mut self,
        schema: &'s Value,
        value: &Value,
        work: &mut usize,
    ) -> Result<(), NotUnderstood> {
        *work = work.checked_sub(1).ok_or(NotUnderstood)?;
        let map = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Object(map) => map,
            _ => return Err(NotUnderstood),
        };
        if map
            .keys()
            .any(|k| !KNOWN.contains(&k.as_str()) && !k.starts_with("x-"))
        {
            return Err(NotUnderstood);
        }
        self.schemas.push(map);
        if let Some(reference) = map.get("$ref") {
            let target = self.resolve(reference)?;
            self.collect(target, value, work)?;
        }
        if let Some(all) = map.get("allOf") {
            for schema in all.as_array().ok_or(NotUnderstood)? {
                self.collect(schema, value, work)?;
            }
        }
        for (keyword, exclusive) in [("anyOf", false), ("oneOf", true)] {
            let Some(branches) = map.get(keyword) else {
                continue;
            };
            for branch in branches.as_array().ok_or(NotUnderstood)? {
                let mut applies = self.child();
                applies.collect(branch, value, work)?;
                if applies.schemas.iter().all(|s| admits_type(s, value)) {
                    self.schemas.extend(applies.schemas);
                    self.exclusive |= exclusive || applies.exclusive;
                }
            }
        }
        Ok(())
    }

    /// The schema a local `$ref` (`#`, `#/$defs/…`) points to.
    fn resolve(&self, reference: &Value) -> Result<&'s Value, NotUnderstood> {
        let root = self.root.ok_or(NotUnderstood)?;
        let pointer = reference
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .filter(|p| !p.contains('%'))
            .ok_or(NotUnderstood)?;
        root.pointer(pointer).ok_or(NotUnderstood)
    }

    fn any(&self, keyword: &str) -> bool {
        self.schemas.iter().any(|s| s.contains_key(keyword))
    }

    /// The largest value of a non-negative integer keyword, 0 when none gives it.
    fn max_of(&self, keyword: &str) -> usize {
        self.schemas
            .iter()
            .filter_map(|s| s.get(keyword)?.as_u64())
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .max()
            .unwrap_or(0)
    }

    /// Whether an `enum` or `const` pins the value (then nothing under it is cut).
    pub(super) fn is_pinned(&self) -> bool {
        self.any("enum") || self.any("const")
    }

    /// How many characters a cut string must keep, or `None` if it may not be cut
    /// (besides [`is_pinned`](Self::is_pinned), which forbids every cut).
    pub(super) fn string_min_chars(&self) -> Option<usize> {
        let forbidden = [
            "pattern",
            "format",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
        ];
        if forbidden.iter().any(|k| self.any(k)) || (self.exclusive && self.any("maxLength")) {
            return None;
        }
        Some(self.max_of("minLength"))
    }

    /// How many items a cut array must keep, or `None` if it may not lose any (besides
    /// [`is_pinned`](Self::is_pinned)).
    pub(super) fn array_min_items(&self) -> Option<usize> {
        if self.exclusive && self.any("maxItems") {
            return None;
        }
        Some(self.max_of("minItems"))
    }

    /// The schemas that apply to one item of the array this applies to.
    pub(super) fn item(&self, item: &Value) -> Result<Self, NotUnderstood> {
        let mut applicable = self.child();
        let mut work = MAX_SCHEMAS;
        for schema in &self.schemas {
            if let Some(items) = schema.get("items") {
                if items.is_array() {
                    return Err(NotUnderstood); // A tuple (draft 4–7 `items: [...]`).
                }
                applicable.collect(items, item, &mut work)?;
            }
        }
        Ok(applicable)
    }

    /// The schemas that apply to the member `key` of the object this applies to.
    pub(super) fn member(&self, key: &str, member: &Value) -> Result<Self, NotUnderstood> {
        let mut applicable = self.child();
        let mut work = MAX_SCHEMAS;
        for schema in &self.schemas {
            let declared = schema
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| p.get(key));
            match (declared, schema.get("additionalProperties")) {
                (Some(property), _) => applicable.collect(property, member, &mut work)?,
                (None, Some(Value::Bool(false))) => return Err(NotUnderstood),
                (None, Some(additional)) => applicable.collect(additional, member, &mut work)?,
                (None, None) => {}
            }
        }
        Ok(applicable)
    }
}

/// Whether a schema's `type` (if it has one) admits the JSON type of `value`.
fn admits_type(schema: &Map<String, Value>, value: &Value) -> bool {
    let Some(types) = schema.get("type") else {
        return true;
    };
    let admits = |t: &Value| match (t.as_str(), value) {
        (Some("null"), Value::Null)
        | (Some("boolean"), Value::Bool(_))
        | (Some("number"), Value::Number(_))
        | (Some("string"), Value::String(_))
        | (Some("array"), Value::Array(_))
        | (Some("object"), Value::Object(_)) => true,
        (Some("integer"), Value::Number(n)) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    };
    let nullable = value.is_null() && schema.get("nullable") == Some(&Value::Bool(true));
    nullable
        || match types {
            Value::Array(types) => types.iter().any(admits),
            single => admits(single),
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root<'s>(schema: &'s Value, value: &Value) -> Applicable<'s> {
        Applicable::root(Some(schema), value).unwrap()
    }

    #[test]
    fn strings_are_cut_unless_a_constraint_pins_them() {
        let value = json!("text");
        for (schema, expected) in [
            (json!({"type": "string"}), Some(0)),
            (json!({"type": "string", "minLength": 3}), Some(3)),
            (json!({"type": "string", "maxLength": 9}), Some(0)),
            (json!({"type": "string", "pattern": "^t"}), None),
            (json!({"type": "string", "format": "date-time"}), None),
            (json!({"contentEncoding": "base64"}), None),
            (json!(true), Some(0)),
        ] {
            assert_eq!(
                root(&schema, &value).string_min_chars(),
                expected,
                "{schema}"
            );
        }
        for pinned in [json!({"enum": ["text", "other"]}), json!({"const": "text"})] {
            assert!(root(&pinned, &value).is_pinned(), "{pinned}");
        }
        assert!(!root(&json!({"type": "string"}), &value).is_pinned());
        assert!(Applicable::root(Some(&json!({"not": {"type": "null"}})), &value).is_err());
        assert!(Applicable::root(Some(&json!(false)), &value).is_err());
    }

    #[test]
    fn every_branch_that_admits_the_value_must_allow_the_cut() {
        let value = json!("text");
        let any_of = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        assert_eq!(root(&any_of, &value).string_min_chars(), Some(0));
        let pinned = json!({"anyOf": [{"type": "string"}, {"type": "string", "pattern": "x"}]});
        assert_eq!(root(&pinned, &value).string_min_chars(), None);
        let one_of = json!({"oneOf": [{"type": "string", "maxLength": 2}, {"type": "string"}]});
        assert_eq!(root(&one_of, &value).string_min_chars(), None);
        let any_of_max = json!({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "string"}]});
        assert_eq!(root(&any_of_max, &value).string_min_chars(), Some(0));
        let items = json!(["a", "b", "c"]);
        let arrays = json!({"oneOf": [{"type": "array", "maxItems": 2}, {"type": "array"}]});
        assert_eq!(root(&arrays, &items).array_min_items(), None);
        let any_arrays = json!({"anyOf": [{"type": "array", "maxItems": 2}, {"type": "array"}]});
        assert_eq!(root(&any_arrays, &items).array_min_items(), Some(0));
        let ignored = json!({"oneOf": [{"type": "integer", "maxLength": 2}, {"type": "string"}]});
        assert_eq!(root(&ignored, &value).string_min_chars(), Some(0));
    }

    #[test]
    fn members_and_items_follow_properties_refs_and_additional_properties() {
        let schema = json!({
            "$defs": {"Entry": {"type": "object", "properties": {"at": {"format": "date-time"}, "msg": {"type": "string"}}}},
            "type": "object",
            "properties": {
                "log": {"type": "string"},
                "entries": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Entry"}}
            },
            "required": ["log"],
            "additionalProperties": {"type": "string", "pattern": "^x"}
        });
        let value = json!({"log": "l", "entries": [{"at": "t", "msg": "m"}], "other": "x"});
        let top = root(&schema, &value);
        let log = top.member("log", &value["log"]).unwrap();
        assert_eq!(log.string_min_chars(), Some(0));
        let other = top.member("other", &value["other"]).unwrap();
        assert_eq!(other.string_min_chars(), None);
        let entries = top.member("entries", &value["entries"]).unwrap();
        assert_eq!(entries.array_min_items(), Some(1));
        let entry = entries.item(&value["entries"][0]).unwrap();
        let at = entry.member("at", &json!("t")).unwrap();
        assert_eq!(at.string_min_chars(), None);
        assert_eq!(
            entry.member("msg", &json!("m")).unwrap().string_min_chars(),
            Some(0)
        );

        let closed = json!({"type": "object", "additionalProperties": false});
        assert!(root(&closed, &json!({})).member("x", &json!("s")).is_err());
        let tuple = json!({"type": "array", "items": [{"type": "string"}]});
        assert!(root(&tuple, &json!(["a"])).item(&json!("a")).is_err());
        let remote = json!({"$ref": "https://example.com/schema.json"});
        assert!(Applicable::root(Some(&remote), &value).is_err());
        let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(Applicable::root(Some(&cycle), &value).is_err());
        // Branches that multiply at each level: given up on, not walked 3^32 times.
        let fan = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}]});
        assert!(Applicable::root(Some(&fan), &value).is_err());
    }

    #[test]
    fn without_a_schema_everything_may_be_cut() {
        let value = json!({"a": ["x"]});
        let top = Applicable::root(None, &value).unwrap();
        let a = top.member("a", &value["a"]).unwrap();
        assert_eq!(a.array_min_items(), Some(0));
        assert_eq!(a.item(&json!("x")).unwrap().string_min_chars(), Some(0));
    }

    #[test]
    fn integer_and_nullable_types_are_admitted() {
        let s = |v: Value| v.as_object().unwrap().clone();
        assert!(admits_type(&s(json!({"type": "integer"})), &json!(3)));
        assert!(admits_type(&s(json!({"type": "integer"})), &json!(-3)));
        assert!(admits_type(
            &s(json!({"type": "integer"})),
            &json!(u64::MAX)
        ));
        assert!(admits_type(&s(json!({"type": "integer"})), &json!(3.0)));
        assert!(!admits_type(&s(json!({"type": "integer"})), &json!(3.5)));
        assert!(admits_type(
            &s(json!({"type": ["string", "null"]})),
            &json!(null)
        ));
        assert!(admits_type(
            &s(json!({"type": "string", "nullable": true})),
            &json!(null)
        ));
        assert!(!admits_type(&s(json!({"type": "string"})), &json!(null)));
    }
}
