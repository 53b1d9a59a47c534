//! Validation messages of the shapes frameworks print — serde (rmcp), pydantic
//! (fastmcp), zod (the TypeScript SDK) — with arbitrary values in them: the problems
//! read from them, and the error result and log record built from those, contain none
//! of the values (SPEC V3).
#![no_main]

use arbitrary::{Result, Unstructured};
use backstop_core::call::recognize;
use backstop_core::testing::checks::check_error_result;
use backstop_core::{Failure, call::{CallContext, Problem}};
use libfuzzer_sys::fuzz_target;

/// serde's messages, `{}` where the rejected value goes.
const SERDE: &[&str] = &[
    "invalid type: string \"{}\", expected i64",
    "invalid type: string \"{}\", expected a sequence",
    "invalid value: string \"{}\", expected one of `a`, `b`",
    "invalid length {}, expected a tuple of size 2",
    "unknown variant `{}`, expected `fast` or `slow`",
    "invalid type: string \"{}\", expected u8 at line 1 column 22",
];

/// pydantic's (fastmcp's) messages, `{}` where the value goes.
const PYDANTIC: &[&str] = &[
    "1 validation error for call[takes_int]\ncount\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='{}', input_type=str]",
    "1 validation error for call[t]\nmode\n  Input should be 'fast' or 'slow' [type=enum, input_value='{}', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.11/v/enum",
    "2 validation errors for call[t]\na\n  Value error, {} is not allowed [type=value_error, input_value='{}', input_type=str]\nb.0\n  Input should be a valid string [type=string_type, input_value={}, input_type=int]",
    "1 validation error for TArguments\nx\n  String should have at most 3 characters [type=string_too_long, input_value='{}', input_type=str]",
];

/// zod's issues as the TypeScript SDK prints them, `{}` where the value goes.
const ZOD: &[&str] = &[
    r#"MCP error -32602: Invalid arguments for tool add: [{"code": "invalid_type", "expected": "number", "received": "{}", "path": ["a"], "message": "Expected number, received {}"}]"#,
    r#"Invalid arguments for tool t: [{"code": "custom", "path": ["k"], "message": "bad {}"}, {"code": "unrecognized_keys", "keys": ["zz"], "path": [], "message": "Unrecognized key(s) in object: '{}'"}]"#,
    r#"Invalid arguments for tool t: [{"code": "invalid_enum_value", "options": ["a", "b"], "received": "{}", "path": ["m"], "message": "Invalid enum value. Expected 'a' | 'b', received '{}'"}]"#,
];

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let value: String = u.arbitrary()?;
    // Marked, and without the quotes and brackets the formats delimit values with.
    let value = format!(
        "Ж{}Ж",
        value.replace(['"', '`', '\'', '\\', '\n', ']', '['], "")
    );
    let (message, problems) = match u.int_in_range(0..=2)? {
        0 => {
            let message = u.choose(SERDE)?.replace("{}", &value);
            let problems = Problem::from_serde_message(&message).map(|p| vec![p]);
            (message, problems)
        }
        1 => {
            let message = u.choose(PYDANTIC)?.replace("{}", &value);
            let problems = recognize(&message);
            assert!(
                problems.is_some(),
                "a pydantic text is recognised: {message:?}"
            );
            (message, problems)
        }
        _ => {
            let escaped = serde_json::to_string(&value).unwrap();
            let message = u.choose(ZOD)?.replace("{}", &escaped[1..escaped.len() - 1]);
            let problems = recognize(&message);
            assert!(problems.is_some(), "a zod text is recognised: {message:?}");
            (message, problems)
        }
    };
    let Some(problems) = problems else {
        return Ok(());
    };
    let failure = Failure::validation(problems);
    let call = CallContext::new("tool")
        .with_arguments(["count"])
        .with_parameters(["count"]);
    if let Err(violation) = check_error_result(&failure, &call, &[value.as_str()]) {
        panic!("{violation}: {message:?}");
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});
