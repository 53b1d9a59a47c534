//! Validation messages of the shapes frameworks print, with arbitrary values in them:
//! the problems read from them, and the error result and log record built from those,
//! contain none of the values (SPEC V3).
#![no_main]

use arbitrary::{Result, Unstructured};
use backstop_core::testing::checks::check_error_result;
use backstop_core::{CallContext, Failure, Problem};
use libfuzzer_sys::fuzz_target;

/// serde's messages, `{}` where the rejected value goes.
const SERDE: &[&str] = &[
    "invalid type: string \"{}\", expected i64",
    "invalid type: string \"{}\", expected a sequence",
    "invalid value: string \"{}\", expected one of `a`, `b`",
    "invalid length {}, expected a tuple of size 2",
    "unknown variant `{}`, expected `fast` or `slow`",
    "unknown field `{}`, expected `count`",
    "missing field `{}`",
    "invalid type: string \"{}\", expected u8 at line 1 column 22",
];

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let value: String = u.arbitrary()?;
    let value = format!("Ж{}Ж", value.replace(['"', '`'], ""));
    let template = *u.choose(SERDE)?;
    let message = template.replace("{}", &value);
    let named_field =
        template.starts_with("unknown field") || template.starts_with("missing field");
    let Some(problem) = Problem::from_serde_message(&message) else {
        return Ok(());
    };
    let failure = Failure::validation(vec![problem]);
    // A field *name* is not a value: serde quotes names in these two messages.
    let secrets: Vec<&str> = if named_field {
        vec![]
    } else {
        vec![value.as_str()]
    };
    let call = CallContext::new("tool")
        .with_arguments(["count"])
        .with_parameters(["count"]);
    if let Err(violation) = check_error_result(&failure, &call, &secrets) {
        panic!("{violation}: {message:?}");
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});
