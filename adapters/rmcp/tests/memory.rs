//! SPEC B2, L13 through the wrapper: a tool that returns a 100 MB text, cut to a 1 MB
//! cap, costs the wrapper about the kept tail on top of the text the tool built — the
//! wrapper reads the text where rmcp holds it and never copies it whole (B2, L13).
//!
//! The bytes allocated at the peak are counted by this binary's own global allocator,
//! so the cases here run one at a time (one `#[test]`, in sequence).

mod support;

use std::sync::Arc;
use std::time::Duration;

use backstop_core::Limit;
use backstop_rmcp::Backstop;
use peak_alloc::PeakAlloc;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use support::big_output::BigOutput;

#[global_allocator]
static ALLOCATED: PeakAlloc = PeakAlloc;

/// The size of the text the tool returns.
const TEXT_BYTES: usize = 100_000_000;
/// The cap the wrapper cuts it to.
const CAP: usize = 1_000_000;

/// [`TEXT_BYTES`] of build output, ending in `$`s.
fn output() -> String {
    let line = "a line of build output, as a tool prints it\n";
    let mut text = String::with_capacity(TEXT_BYTES);
    while text.len() + line.len() <= TEXT_BYTES {
        text.push_str(line);
    }
    text.extend(std::iter::repeat_n('$', TEXT_BYTES - text.len()));
    text
}

/// Bytes allocated at the peak of one call of `capture` (its copy of the text
/// included) through the wrapper at [`CAP`], above what was allocated before it; and
/// the text the client received.
async fn peak_of_one_call(text: Arc<String>, error: bool) -> (usize, String) {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = Backstop::new(BigOutput(text)).with_limit(Limit::new(CAP).unwrap());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("the client connects");
    // The catalog is read on the first call: read it now, outside the measurement.
    client.list_all_tools().await.expect("tools/list");
    tokio::time::sleep(Duration::from_millis(50)).await;

    let before = ALLOCATED.current_usage();
    ALLOCATED.reset_peak_usage();
    let request = CallToolRequestParams::new("capture")
        .with_arguments(json!({"error": error}).as_object().cloned().unwrap());
    let result = client.call_tool(request).await.expect("a result");
    let peak = ALLOCATED.peak_usage() - before;

    assert_eq!(result.is_error, Some(error), "L5");
    let received = result.content[0].as_text().expect("a text block");
    let _ = client.cancel().await;
    (peak, received.text.clone())
}

/// B2, L13: the peak is the tool's own text and about the cap, not twice the text —
/// for a success and for an `isError` result alike.
#[test]
fn a_100_mb_text_cut_to_1_mb_is_never_copied_whole() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let text = Arc::new(output());
    let peaks = [false, true].map(|error| {
        let (peak, received) = runtime.block_on(peak_of_one_call(text.clone(), error));
        eprintln!(
            "isError {error}: {peak} bytes allocated at the peak of the call ({:.2}× the {TEXT_BYTES}-byte text)",
            peak as f64 / TEXT_BYTES as f64
        );
        assert!(received.starts_with("[... truncated "), "L3: {}", &received[..80]);
        assert!(received.ends_with("$$$$"), "L3: the tail is kept");
        assert!(received.len() <= CAP, "L4");
        peak
    });
    for (error, peak) in [false, true].into_iter().zip(peaks) {
        assert!(
            peak < TEXT_BYTES * 6 / 5,
            "B2, L13 (isError {error}): {peak} bytes at the peak for a {TEXT_BYTES}-byte text"
        );
    }
}
