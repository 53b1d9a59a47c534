//! Properties of failure conversion: V3 (no rejected value anywhere), V4 (every
//! unrecognised name listed), E2, E5, E6, E7, and the lossless encoding of failures.
//!
//! Case counts are proptest's default (256), or `PROPTEST_CASES`.

use std::collections::BTreeMap;

use backstop_core::{
    Failure, ProtocolError, ToolResult,
    call::{CallContext, ErrorCounts, Family, Level, LogRecord, Problem, error_result},
    protocol::{ClientInfo, Revision},
};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Characters no fixed text of this library uses, and no generated argument name
/// either: any of them in an output is a leaked value.
const MARKER: &str = "ЖЗИЙКЛМНПФ";

fn leaks(text: &str) -> bool {
    text.chars().any(|c| MARKER.contains(c))
}

/// A rejected value's text: six or more marker characters, wrapped in the syntax the
/// parser splits on (quotes, backticks, `, expected `, ` at line 1 column 2`).
fn marked_text() -> impl Strategy<Value = String> {
    let syntax = prop_oneof![
        Just(String::new()),
        Just("\"".to_owned()),
        Just("`".to_owned()),
        Just(", expected ".to_owned()),
        Just("`, expected `".to_owned()),
        Just(" at line 1 column 2".to_owned()),
        "[ -~]{0,8}",
    ];
    (syntax.clone(), "[ЖЗИЙКЛМНПФ]{6,12}", syntax).prop_map(|(a, m, b)| format!("{a}{m}{b}"))
}

/// A rejected number that stands out: at least 13 digits, so no count or position in a
/// fixed text can contain it.
fn marked_number() -> impl Strategy<Value = u64> {
    1_000_000_000_000u64..u64::MAX / 2
}

/// A JSON value that holds marked texts or numbers somewhere.
fn marked_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        marked_text().prop_map(Value::String),
        marked_number().prop_map(Value::from),
        marked_number().prop_map(|n| Value::from(-(n as i64))),
        marked_text().prop_map(|t| json!([t])),
        marked_text().prop_map(|t| json!({ t.clone(): t })),
        (marked_number(), marked_number()).prop_map(|(a, b)| json!([a, b, a])),
    ]
}

/// The strings and numbers in a value, for the leak check.
fn needles(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string().trim_start_matches('-').to_owned()),
        Value::Array(items) => items.iter().for_each(|v| needles(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            needles(v, out);
        }),
        _ => {}
    }
}

/// A tool's parameters, as rmcp would deserialize them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Params {
    count: i64,
    #[serde(default)]
    small: Option<u8>,
    #[serde(default)]
    flag: Option<bool>,
    #[serde(default)]
    ratio: Option<f64>,
    #[serde(default)]
    mode: Option<Mode>,
    #[serde(default)]
    names: Option<Vec<u16>>,
    #[serde(default)]
    pair: Option<(u8, u8)>,
    #[serde(default)]
    target: Option<Target>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Slow,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Target {
    pane: u32,
}

const PARAMS: [&str; 8] = [
    "count", "small", "flag", "ratio", "mode", "names", "pair", "target",
];

/// Arguments: some of the tool's own names and some unknown ones, all with marked values.
fn marked_arguments() -> impl Strategy<Value = Map<String, Value>> {
    let name = prop_oneof![
        prop::sample::select(PARAMS.to_vec()).prop_map(str::to_owned),
        "[a-z_]{1,10}",
        Just("wait_for_previous".to_owned()),
    ];
    prop::collection::btree_map(name, marked_value(), 0..6).prop_map(|m| m.into_iter().collect())
}

/// Every way a validation failure is built from a rejected call. (A JSON-RPC error whose
/// message is not one the parser knows decodes to a plain failure: those are in the
/// list too, for the leak check.)
fn validation_failures(arguments: &Map<String, Value>) -> Vec<Failure> {
    let value = Value::Object(arguments.clone());
    let mut failures = vec![Failure::validation(Vec::new())];
    let mut messages = Vec::new();
    if let Err(e) = serde_json::from_value::<Params>(value.clone()) {
        messages.push(format!("failed to deserialize parameters: {e}"));
    }
    if let Err(e) = serde_json::from_str::<Params>(&value.to_string()) {
        messages.push(e.to_string()); // with ` at line N column M`
    }
    for message in messages {
        let problem =
            Problem::from_serde_message(&message).unwrap_or_else(Problem::invalid_arguments);
        failures.push(Failure::validation(vec![problem]));
        let located = Problem::from_serde_message_at(&message, ["count"]);
        failures.push(Failure::validation(located.into_iter().collect()));
        let rmcp = ProtocolError::new(-32602, message.clone());
        failures.push(Failure::from_protocol_error(&rmcp));
        failures.push(Failure::protocol(rmcp));
    }
    failures
}

fn call_for(arguments: &Map<String, Value>, client: Option<ClientInfo>) -> CallContext {
    CallContext::new("probe")
        .with_arguments(arguments.keys())
        .with_parameters(PARAMS)
        .with_required(["count"])
        .with_client(client)
}

fn client() -> impl Strategy<Value = Option<ClientInfo>> {
    prop::option::of(("[a-z-]{1,8}", "[0-9.]{0,4}").prop_map(|(n, v)| ClientInfo::new(n, v)))
}

/// Everything a failure can be turned into, as text.
fn outputs(failure: &Failure, call: &CallContext) -> Vec<String> {
    let result = error_result(failure, call);
    let record = LogRecord::for_call(failure, call);
    let plain = LogRecord::new(failure, "tools/call", Some(&call.tool));
    let mut counts = ErrorCounts::new();
    counts.record(&record);
    let mut out = vec![
        serde_json::to_string(&result).unwrap(),
        format!("{record:?}"),
        format!("{plain:?}"),
        format!("{counts:?}"),
        serde_json::to_string(&ProtocolError::encode_failure(failure)).unwrap(),
    ];
    for method in ["resources/read", "prompts/get", "tools/call"] {
        let error = ProtocolError::from_failure(failure, method, Revision::NEWEST, Some("u"));
        out.push(serde_json::to_string(&error).unwrap());
    }
    out
}

fn meta_of(result: &ToolResult) -> &Map<String, Value> {
    result.meta.as_ref().expect("an error result has _meta")
}

fn text_of(result: &ToolResult) -> &str {
    assert_eq!(result.content.len(), 1);
    result.content[0].as_text().expect("a text block")
}

fn any_level() -> impl Strategy<Value = Option<Level>> {
    prop::option::of(prop::sample::select(vec![
        Level::Trace,
        Level::Debug,
        Level::Info,
        Level::Warning,
        Level::Error,
    ]))
}

fn any_family() -> impl Strategy<Value = Family> {
    prop::sample::select(Family::ALL.to_vec())
}

fn own_meta() -> impl Strategy<Value = BTreeMap<String, Value>> {
    let key = prop_oneof![
        Just("error_type".to_owned()),
        Just("expected".to_owned()),
        Just("suggestion".to_owned()),
        "[a-z/_]{1,8}",
    ];
    let value = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        ".{0,6}".prop_map(Value::from)
    ];
    prop::collection::btree_map(key, value, 0..5)
}

/// Any failure that is not a validation failure, built through the public builders.
fn plain_failure() -> impl Strategy<Value = Failure> {
    (
        any::<bool>(),
        "\\PC{0,40}",
        prop::option::of("\\PC{0,30}"),
        prop::option::of("[A-Za-z]{1,12}"),
        any_level(),
        any_family(),
        own_meta(),
    )
        .prop_map(
            |(expected, message, suggestion, error_type, level, family, meta)| {
                let mut failure = if expected {
                    Failure::expected(message)
                } else {
                    Failure::unexpected(message)
                };
                if let Some(s) = suggestion {
                    failure = failure.with_suggestion(s);
                }
                if let Some(t) = error_type {
                    failure = failure.with_error_type(t);
                }
                if let Some(l) = level {
                    failure = failure.with_level(l);
                }
                for (k, v) in meta {
                    failure = failure.with_meta(k, v);
                }
                failure.with_family(family)
            },
        )
}

proptest! {
    /// V3: whatever path a rejected call takes — serde's message parsed (with or without
    /// a position, with or without a location), rmcp's JSON-RPC error decoded, the
    /// problem list completed from the names — no rejected value reaches the result,
    /// the log record, the counts, or a protocol error.
    #[test]
    fn v3_no_rejected_value_anywhere(arguments in marked_arguments(), client in client()) {
        let mut values = Vec::new();
        for value in arguments.values() {
            needles(value, &mut values);
        }
        let call = call_for(&arguments, client);
        for failure in validation_failures(&arguments) {
            for out in outputs(&failure, &call) {
                prop_assert!(!leaks(&out), "a marked value leaked: {}", out);
                for needle in &values {
                    prop_assert!(!out.contains(needle.as_str()), "{:?} leaked: {}", needle, out);
                }
            }
        }
    }

    /// V4: with the parameters known, every given name that is not one is listed as a
    /// problem and in the suggestion, in the order given; every absent required one is
    /// listed as missing.
    #[test]
    fn v4_every_unrecognised_name_is_listed(arguments in marked_arguments(), client in client()) {
        let call = call_for(&arguments, client);
        let unknown: Vec<&str> = arguments.keys().map(String::as_str).filter(|k| !PARAMS.contains(k)).collect();
        for failure in validation_failures(&arguments).iter().filter(|f| f.is_validation()) {
            let result = error_result(failure, &call);
            let text = text_of(&result);
            let meta = meta_of(&result);
            for name in &unknown {
                let line = format!("\n{name}\n  Unexpected keyword argument [type=unexpected_keyword_argument]");
                prop_assert!(text.contains(&line), "{} not listed: {}", name, text);
            }
            if !arguments.contains_key("count") {
                prop_assert!(text.contains("\ncount\n  Missing required argument [type=missing_argument]"), "{}", text);
            }
            if unknown.is_empty() {
                prop_assert!(!meta.contains_key("suggestion"));
            } else {
                let expected = format!("Remove or correct the unrecognized argument(s): {}.", unknown.join(", "));
                let suggestion = meta["suggestion"].as_str().unwrap();
                prop_assert!(suggestion.starts_with(&expected), "{}", suggestion);
                prop_assert_eq!(
                    suggestion.contains("wait_for_previous is a scheduling flag"),
                    unknown.contains(&"wait_for_previous")
                );
            }
        }
    }

    /// E2: the text is the message exactly, then `\n` and the suggestion if any.
    /// E5: `_meta.suggestion` is present exactly when there is one — a stale own
    /// `suggestion` key does not survive. E6: no `structuredContent`. E7: own keys
    /// are kept, and E3–E5 keys win.
    #[test]
    fn e2_e5_e6_e7_hold(failure in plain_failure(), tool in "[a-z_]{1,10}") {
        let result = error_result(&failure, &CallContext::new(tool));
        let text = text_of(&result);
        prop_assert!(text.starts_with(failure.message()));
        match failure.suggestion() {
            Some(s) => prop_assert_eq!(text.to_owned(), format!("{}\n{}", failure.message(), s)),
            None => prop_assert_eq!(text, failure.message()),
        }
        prop_assert_eq!(result.is_error, Some(true));

        let meta = meta_of(&result);
        prop_assert_eq!(meta.get("suggestion").and_then(Value::as_str), failure.suggestion());
        prop_assert_eq!(&meta["error_type"], &Value::from(failure.error_type()));
        prop_assert_eq!(&meta["expected"], &Value::Bool(failure.is_expected()));
        for (key, value) in failure.meta() {
            if !["error_type", "expected", "suggestion"].contains(&key.as_str()) {
                prop_assert_eq!(meta.get(key), Some(value));
            }
        }
        let ours = 2 + usize::from(failure.suggestion().is_some());
        let own = failure.meta().keys().filter(|k| !["error_type", "expected", "suggestion"].contains(&k.as_str())).count();
        prop_assert_eq!(meta.len(), ours + own);

        prop_assert!(result.structured_content.is_none());
        let wire: Value = serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
        prop_assert!(wire.get("structuredContent").is_none());
        prop_assert_eq!(ToolResult::from_value(wire).unwrap(), result);
    }

    /// E6 and E5 for validation failures too, whatever the call.
    #[test]
    fn validation_results_have_no_structured_content(arguments in marked_arguments(), client in client()) {
        let call = call_for(&arguments, client);
        for failure in validation_failures(&arguments).iter().filter(|f| f.is_validation()) {
            let result = error_result(failure, &call);
            prop_assert!(result.structured_content.is_none());
            let text = text_of(&result);
            let suggestion = meta_of(&result).get("suggestion").and_then(Value::as_str);
            match suggestion {
                Some(s) => {
                    let ending = format!("\n{s}");
                    prop_assert!(text.ends_with(&ending));
                }
                None => prop_assert!(text.lines().last().unwrap().ends_with(']')),
            }
        }
    }

    /// A failure encoded as a protocol error (to travel as an `Err` through inner
    /// layers, O1) decodes to the same failure, also through the wire.
    #[test]
    fn encoding_is_lossless(failure in plain_failure()) {
        let wire = serde_json::to_string(&ProtocolError::encode_failure(&failure)).unwrap();
        let back: ProtocolError = serde_json::from_str(&wire).unwrap();
        prop_assert_eq!(Failure::from_protocol_error(&back), failure);
    }

    /// Validation failures, with every kind of problem, decode losslessly too.
    #[test]
    fn validation_encoding_is_lossless(arguments in marked_arguments(), suggestion in prop::option::of("[a-z ]{1,10}")) {
        for mut failure in validation_failures(&arguments) {
            if failure.as_protocol_error().is_some() {
                continue; // passes unchanged (P2); covered by the unit tests
            }
            if let Some(s) = &suggestion {
                failure = failure.with_suggestion(s.clone());
            }
            let encoded = ProtocolError::encode_failure(&failure);
            prop_assert_eq!(Failure::from_protocol_error(&encoded), failure);
        }
    }
}
