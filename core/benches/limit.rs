//! The limiter on one text block of 1 MB, 10 MB and 100 MB at a 1 MB cap, beside
//! `serde_json::to_vec` of the same results (what a limiter that serializes to measure
//! would pay before it even starts cutting), and beside a 1 MB `memcpy` in the same
//! run: the floor of any cut that keeps 1 MB (the goal: within 5× of it).
//!
//! Two kinds of text: plain scrollback, and escape-heavy scrollback (colour escapes,
//! quotes, tabs, carriage returns, BEL: bytes that cost 2 or 6 on the wire). Besides
//! the cut alone, the cut followed by `serde_json::to_vec` of the cut result, which is
//! what an adapter does before it sends it.
//!
//! The structured cut (SPEC L15) on a fastmcp-style result — `structuredContent` with
//! one long string field and its serialization as the text block — of 1 MB and 100 MB,
//! at the same cap.
//!
//! The keep policies (SPEC L16) — tail, head, head and tail half each — on plain
//! scrollback of 1 MB and 100 MB at the same cap, beside a 1 MB `memcpy` in the same
//! group: each within a few times the copy, and flat in the input size (L13: the
//! dropped part, the middle under head and tail, is never read).
//!
//! The reader's limits (SPEC L18): the cut to each client profile's characters and
//! tokens (Claude Code, Codex, Gemini CLI) on plain scrollback and on CJK text with
//! emoji (where characters, tokens and bytes disagree) of 1 MB and 100 MB, beside a
//! 1 MB `memcpy` in the same group: flat in the input size, and well under the copy
//! (a reader keeps about 40,000 characters).
//!
//! Run: `cargo bench -p backstop-core --bench limit` (`-- keep_1MB_cap` for the
//! policies alone, `-- reader_limits` for the reader's limits). The inputs are the same as those
//! of `scripts/anchor_limiter_bench.py`, which times the reference implementation.

use std::hint::black_box;
use std::time::Duration;

use backstop_core::{Limit, ToolResult, limit::Keep};
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

/// Scrollback of a coloured build log: every line has SGR escapes, quotes, a tab, a
/// carriage return and a BEL, so that most bytes cost more than one on the wire.
fn escape_heavy(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut n = 0;
    while text.len() < size {
        use std::fmt::Write;
        let _ = write!(
            text,
            "\u{1b}[1;32m\"ok\"\u{1b}[0m\t\\src\\{n:06}.rs\r\u{7}\u{1b}[2K\n"
        );
        n += 1;
    }
    text
}

fn limit(c: &mut Criterion) {
    // glibc's malloc raises its mmap and trim thresholds to the largest block freed so
    // far, up to 32 MiB (a larger block raises nothing). A long-running server has long
    // since freed large blocks; without this, the case that runs first pays page faults
    // on every fresh 1 MB block it allocates and the others do not.
    drop(std::hint::black_box(vec![1u8; 16 << 20]));
    let limit = Limit::default();
    let mut group = c.benchmark_group("limit_1MB_cap");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    // The floor: copying the 1 MB a cut keeps, into a buffer that is already there.
    let source = scrollback(1_000_000).into_bytes();
    let mut target = vec![0u8; source.len()];
    group.throughput(Throughput::Bytes(source.len() as u64));
    group.bench_function(BenchmarkId::new("memcpy", "1MB"), |b| {
        b.iter(|| {
            target.copy_from_slice(black_box(&source));
            black_box(&target);
        })
    });
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
        if label != "10MB" {
            group.bench_with_input(
                BenchmarkId::new("backstop_truncate_then_to_vec", label),
                &result,
                |b, r| b.iter(|| cut_and_serialize(&limit, black_box(r))),
            );
        }
    }
    for (label, size) in [("1MB", 1_000_000), ("100MB", 100_000_000)] {
        let result = ToolResult::text(escape_heavy(size));
        assert!(limit.truncate(&result).is_some(), "{label} is over the cap");
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(
            BenchmarkId::new("backstop_truncate_escapes", label),
            &result,
            |b, r| b.iter(|| limit.truncate(black_box(r))),
        );
        group.bench_with_input(
            BenchmarkId::new("backstop_truncate_then_to_vec_escapes", label),
            &result,
            |b, r| b.iter(|| cut_and_serialize(&limit, black_box(r))),
        );
    }
    group.finish();
}

/// What an adapter does with an oversized result: cut it, then write the cut result.
fn cut_and_serialize(limit: &Limit, result: &ToolResult) -> Vec<u8> {
    let cut = limit.truncate(result).expect("over the cap");
    serde_json::to_vec(&cut.result).unwrap()
}

/// A result like fastmcp's for a pydantic return value: `structuredContent` with a
/// long `log` field, and its compact serialization as the one text block.
fn structured_report(size: usize) -> (ToolResult, serde_json::Value) {
    let value = serde_json::json!({"summary": "build finished", "lines": size / 26, "log": scrollback(size)});
    let schema = serde_json::json!({"type": "object", "required": ["summary", "lines", "log"],
        "properties": {"summary": {"type": "string"}, "lines": {"type": "integer"}, "log": {"type": "string"}}});
    let result = ToolResult {
        content: vec![backstop_core::call::Content::text(value.to_string())],
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

fn keep(c: &mut Criterion) {
    drop(std::hint::black_box(vec![1u8; 16 << 20]));
    let mut group = c.benchmark_group("keep_1MB_cap");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    let source = scrollback(1_000_000).into_bytes();
    let mut target = vec![0u8; source.len()];
    group.bench_function(BenchmarkId::new("memcpy", "1MB"), |b| {
        b.iter(|| {
            target.copy_from_slice(black_box(&source));
            black_box(&target);
        })
    });
    for (label, size) in [("1MB", 1_000_000), ("100MB", 100_000_000)] {
        let result = ToolResult::text(scrollback(size));
        for keep in [
            Keep::Tail,
            Keep::Head,
            Keep::HeadAndTail {
                head_per_mille: 500,
            },
        ] {
            let limit = Limit::default().with_keep(keep);
            assert!(limit.truncate(&result).is_some(), "{label} is over the cap");
            group.bench_with_input(
                BenchmarkId::new(format!("truncate_{keep}"), label),
                &result,
                |b, r| b.iter(|| limit.truncate(black_box(r))),
            );
        }
    }
    group.finish();
}

/// Lines of CJK text with an emoji, `size` bytes or a little more.
fn cjk(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut n = 0;
    while text.len() < size {
        use std::fmt::Write;
        let _ = writeln!(text, "行 {n:08} 漢字の出力 🙂");
        n += 1;
    }
    text
}

fn reader_limits(c: &mut Criterion) {
    use backstop_core::protocol::ClientInfo;
    drop(std::hint::black_box(vec![1u8; 16 << 20]));
    let mut group = c.benchmark_group("reader_limits");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    let source = scrollback(1_000_000).into_bytes();
    let mut target = vec![0u8; source.len()];
    group.bench_function(BenchmarkId::new("memcpy", "1MB"), |b| {
        b.iter(|| {
            target.copy_from_slice(black_box(&source));
            black_box(&target);
        })
    });
    // The structured cut for a client that reads `structuredContent` (Codex): the cut
    // made again under smaller caps until its JSON fits the reader too.
    let codex = Limit::default().for_client(Some(&ClientInfo::new("codex-mcp-client", "")));
    for (label, size) in [("1MB", 1_000_000), ("100MB", 100_000_000)] {
        let (result, schema) = structured_report(size);
        assert!(codex.truncate_with_schema(&result, Some(&schema)).is_some());
        group.bench_with_input(
            BenchmarkId::new("codex-mcp-client_structured", label),
            &result,
            |b, r| b.iter(|| codex.truncate_with_schema(black_box(r), Some(&schema))),
        );
    }
    for (label, size) in [("1MB", 1_000_000), ("100MB", 100_000_000)] {
        for (kind, text) in [("ascii", scrollback(size)), ("cjk", cjk(size))] {
            let result = ToolResult::text(text);
            for client in ["claude-code", "codex-mcp-client", "gemini-cli-mcp-client"] {
                let limit = Limit::default().for_client(Some(&ClientInfo::new(client, "")));
                assert!(
                    limit.truncate(&result).is_some(),
                    "{label} is over the limits"
                );
                group.bench_with_input(
                    BenchmarkId::new(format!("{client}_{kind}"), label),
                    &result,
                    |b, r| b.iter(|| limit.truncate(black_box(r))),
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, limit, structured, keep, reader_limits);
criterion_main!(benches);
