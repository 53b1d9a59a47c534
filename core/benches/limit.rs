//! The limiter on one text block of 1 MB, 10 MB and 100 MB at a 1 MB cap, beside
//! `serde_json::to_vec` of the same results (what a limiter that serializes to measure
//! would pay before it even starts cutting).
//!
//! The structured cut (SPEC L15) on a fastmcp-style result — `structuredContent` with
//! one long string field and its serialization as the text block — of 1 MB and 100 MB,
//! at the same cap.
//!
//! Run: `cargo bench -p backstop-core --bench limit`. The inputs are the same as those
//! of `scripts/anchor_limiter_bench.py`, which times the reference implementation.

use std::hint::black_box;
use std::time::Duration;

use backstop_core::{Limit, ToolResult};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// Terminal scrollback of `size / 26` lines of exactly 26 bytes each.
fn scrollback(size: usize) -> String {
    let mut text = String::with_capacity(size);
    for n in 0..size / 26 {
        use std::fmt::Write;
        let _ = writeln!(text, "line {n:010} of output");
    }
    text
}

fn limit(c: &mut Criterion) {
    // glibc's malloc raises its mmap and trim thresholds to the largest block freed so
    // far. A long-running server has long since freed large blocks; without this, the
    // case that runs first pays page faults on every fresh 1 MB block it allocates and
    // the others do not.
    drop(std::hint::black_box(vec![1u8; 64 << 20]));
    let limit = Limit::default();
    let mut group = c.benchmark_group("limit_1MB_cap");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    for (label, size) in [
        ("1MB", 1_000_000),
        ("10MB", 10_000_000),
        ("100MB", 100_000_000),
    ] {
        let result = ToolResult::text(scrollback(size));
        assert!(limit.truncate(&result).is_some(), "{label} is over the cap");
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(
            BenchmarkId::new("backstop_truncate", label),
            &result,
            |b, r| b.iter(|| limit.truncate(black_box(r))),
        );
        group.bench_with_input(
            BenchmarkId::new("serde_json_to_vec", label),
            &result,
            |b, r| b.iter(|| serde_json::to_vec(black_box(r)).unwrap()),
        );
    }
    group.finish();
}

/// A result like fastmcp's for a pydantic return value: `structuredContent` with a
/// long `log` field, and its compact serialization as the one text block.
fn structured_report(size: usize) -> (ToolResult, serde_json::Value) {
    let value = serde_json::json!({"summary": "build finished", "lines": size / 26, "log": scrollback(size)});
    let schema = serde_json::json!({"type": "object", "required": ["summary", "lines", "log"],
        "properties": {"summary": {"type": "string"}, "lines": {"type": "integer"}, "log": {"type": "string"}}});
    let result = ToolResult {
        content: vec![backstop_core::Content::text(value.to_string())],
        structured_content: Some(value),
        ..ToolResult::default()
    };
    (result, schema)
}

fn structured(c: &mut Criterion) {
    let limit = Limit::default();
    let mut group = c.benchmark_group("structured_1MB_cap");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    for (label, size) in [("1MB", 1_000_000), ("100MB", 100_000_000)] {
        let (result, schema) = structured_report(size);
        let cut = limit.truncate_with_schema(&result, Some(&schema));
        assert!(
            cut.is_some_and(|c| c.result.structured_content.is_some()),
            "{label} is cut inside"
        );
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(
            BenchmarkId::new("backstop_truncate", label),
            &result,
            |b, r| b.iter(|| limit.truncate_with_schema(black_box(r), Some(&schema))),
        );
    }
    group.finish();
}

criterion_group!(benches, limit, structured);
criterion_main!(benches);
