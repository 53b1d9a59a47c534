//! Building error results: an expected failure with a cause and a suggestion, and an
//! argument-validation failure read from serde's message with the unrecognised names
//! listed (the two cases of the reference's error middleware).
//!
//! Run: `cargo bench -p backstop-core --bench error_result`.

use std::hint::black_box;

use backstop_core::call::{CallContext, error_result};
use backstop_core::{Failure, call::Problem, protocol::ClientInfo};
use criterion::{Criterion, criterion_group, criterion_main};

#[derive(Debug, thiserror::Error)]
#[error("pane %99 does not exist")]
struct PaneNotFound;

fn error_results(c: &mut Criterion) {
    let mut group = c.benchmark_group("error_result");
    let call = CallContext::new("capture_pane").with_arguments(["pane_id"]);
    group.bench_function("expected_with_cause_and_suggestion", |b| {
        b.iter(|| {
            let failure = Failure::expected("Pane not found: %99")
                .caused_by(&PaneNotFound)
                .with_suggestion("Call list_panes to discover valid pane ids.");
            serde_json::to_vec(&error_result(black_box(&failure), black_box(&call))).unwrap()
        })
    });
    let call = CallContext::new("takes_int")
        .with_arguments(["count", "wait_for_previous", "bogus_flag"])
        .with_parameters(["count"])
        .with_required(["count"])
        .with_client(ClientInfo::new("probe-client", "9.9"));
    let serde_says = "unknown field `wait_for_previous`, expected `count`";
    group.bench_function("validation_with_unknown_names", |b| {
        b.iter(|| {
            let problem = Problem::from_serde_message(black_box(serde_says)).unwrap();
            let failure = Failure::validation(vec![problem]);
            serde_json::to_vec(&error_result(&failure, black_box(&call))).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, error_results);
criterion_main!(benches);
