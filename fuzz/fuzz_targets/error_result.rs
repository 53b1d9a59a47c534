//! Error results of any failure and call: SPEC E1–E7 hold and no rejected argument
//! value leaks (V3), checked by `backstop_core::testing::checks::check_error_result`.
//!
//! Failures come three ways: built with the API, decoded from a JSON-RPC error some
//! server sent, and validation failures read from serde's messages that quote a value.
//! Values are marked (they hold characters no fixed text uses) so that a leak is
//! recognisable wherever it lands.
#![no_main]

use arbitrary::{Result, Unstructured};
use backstop_core::testing::{checks::check_error_result, unstructured::terminal_text};
use backstop_core::{Failure, ProtocolError, call::{CallContext, Family, Problem}, protocol::ClientInfo};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const NAMES: &[&str] = &[
    "count",
    "pane_id",
    "keys",
    "wait_for_previous",
    "cuont",
    "target",
    "x",
];
const MARKERS: &[char] = &['Ж', 'З', 'И', 'Й', 'К'];

/// A rejected value: marker characters around arbitrary text.
fn secret(u: &mut Unstructured<'_>) -> Result<String> {
    let inner: String = u.arbitrary()?;
    Ok(format!(
        "{}{}{}",
        u.choose(MARKERS)?,
        inner.replace(['"', '`'], ""),
        u.choose(MARKERS)?
    ))
}

fn names(u: &mut Unstructured<'_>) -> Result<Vec<String>> {
    let n = u.int_in_range(0..=4)?;
    (0..n).map(|_| Ok((*u.choose(NAMES)?).to_owned())).collect()
}

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let secret = secret(&mut u)?;
    let mut call = CallContext::new(*u.choose(&["takes_int", "capture_pane", "t"])?)
        .with_arguments(names(&mut u)?);
    if u.arbitrary()? {
        call = call
            .with_parameters(names(&mut u)?)
            .with_required(names(&mut u)?);
    }
    if u.arbitrary()? {
        call = call.with_client(ClientInfo::new(terminal_text(&mut u, 3)?, "1.0"));
    }
    let (failure, secrets): (Failure, Vec<String>) = match u.int_in_range(0..=2)? {
        0 => {
            let mut failure = if u.arbitrary()? {
                Failure::expected(terminal_text(&mut u, 20)?)
            } else {
                Failure::unexpected(terminal_text(&mut u, 20)?)
            };
            if u.arbitrary()? {
                failure = failure.with_suggestion(terminal_text(&mut u, 10)?);
            }
            if u.arbitrary()? {
                let key = *u.choose(&["pane", "suggestion", "error_type", "expected"])?;
                failure = failure.with_meta(key, terminal_text(&mut u, 5)?.into());
            }
            (failure.with_family(*u.choose(&Family::ALL)?), vec![])
        }
        1 => {
            let template = *u.choose(&[
                "failed to deserialize parameters: invalid type: string \"{}\", expected i64",
                "invalid type: string \"{}\", expected u32 at line 1 column 9",
                "invalid value: string \"{}\", expected a pane id",
                "unknown variant `{}`, expected `fast` or `slow`",
                "Invalid params: invalid type: string \"{}\", expected a boolean",
            ])?;
            let code = *u.choose(&[-32602i64, -32603, -32000])?;
            let error = ProtocolError::new(code, template.replace("{}", &secret));
            (Failure::from_protocol_error(&error), vec![secret.clone()])
        }
        _ => {
            let message = format!("invalid type: string \"{secret}\", expected i64");
            let problem =
                Problem::from_serde_message(&message).unwrap_or_else(Problem::invalid_arguments);
            (Failure::validation(vec![problem]), vec![secret.clone()])
        }
    };
    check(&failure, &call, &secrets);
    Ok(())
}

/// E1–E7 always; V3 where the failure is a rejected argument set (a failure that is
/// not keeps its message as written, E2). A value spelled as part of a name is no
/// secret: V3 is about the values the caller sent, and the result may name a missing
/// required parameter of the tool's schema and an unknown argument the caller sent
/// (V2).
fn check(failure: &Failure, call: &CallContext, secrets: &[String]) {
    let names: Vec<&str> = [&call.parameters, &call.required]
        .into_iter()
        .flatten()
        .flatten()
        .chain(&call.arguments)
        .map(String::as_str)
        .chain([call.tool.as_str()])
        .collect();
    let secrets: Vec<&str> = if failure.is_validation() {
        secrets
            .iter()
            .map(String::as_str)
            .filter(|secret| !names.iter().any(|name| name.contains(secret)))
            .collect()
    } else {
        Vec::new()
    };
    if let Err(violation) = check_error_result(failure, call, &secrets) {
        panic!("{violation}");
    }
}

/// A JSON case, the form of the seed corpus: `{"tool", "arguments", "parameters",
/// "required", "client", "error": {code, message, data}}` or with `"failure":
/// {"message", "expected", "suggestion", "error_type"}` instead of `"error"`. String
/// argument values that hold a marker character are the secrets.
fn json_case(case: &Value) -> Option<()> {
    let names = |key: &str| -> Option<Vec<String>> {
        Some(
            case.get(key)?
                .as_array()?
                .iter()
                .filter_map(|v| Some(v.as_str()?.to_owned()))
                .collect(),
        )
    };
    let arguments = case.get("arguments").and_then(Value::as_object);
    let mut call = CallContext::new(case.get("tool")?.as_str()?)
        .with_arguments(arguments.into_iter().flat_map(|a| a.keys().cloned()));
    call.parameters = names("parameters");
    call.required = names("required");
    call.client = case.get("client").and_then(ClientInfo::from_value);
    let secrets: Vec<String> = arguments
        .into_iter()
        .flat_map(|a| a.values())
        .filter_map(Value::as_str)
        .filter(|s| s.contains(MARKERS))
        .map(str::to_owned)
        .collect();
    let failure = if let Some(error) = case.get("error") {
        Failure::from_protocol_error(&serde_json::from_value::<ProtocolError>(error.clone()).ok()?)
    } else {
        let f = case.get("failure")?;
        let message = f.get("message")?.as_str()?;
        let mut failure = match f.get("expected").and_then(Value::as_bool) {
            Some(true) => Failure::expected(message),
            _ => Failure::unexpected(message),
        };
        if let Some(s) = f.get("suggestion").and_then(Value::as_str) {
            failure = failure.with_suggestion(s);
        }
        if let Some(t) = f.get("error_type").and_then(Value::as_str) {
            failure = failure.with_error_type(t);
        }
        failure
    };
    check(&failure, &call, &secrets);
    Some(())
}

fuzz_target!(|data: &[u8]| {
    match serde_json::from_slice::<Value>(data) {
        Ok(case) => {
            let _ = json_case(&case);
        }
        Err(_) => {
            let _ = run(data);
        }
    }
});
