//! `backstop proxy` in front of the official `mcp-server-fetch` (PyPI, pinned in
//! `tests/peers/requirements.txt`, installed by `.ci/run` into `target/fastmcp-venv`),
//! fetching a page this test serves on loopback: the server's text starts with
//! `Contents of <url>:` and ends with its own pagination hint ("call again with a
//! start_index of …"), so a cap must keep both ends for the agent to read on from the
//! right place (SPEC L16: `--keep fetch=head+tail`), with the header line on its own
//! line between them — under the hard cap (L4). The default keeps the tail only (L3).
//!
//! Locally, without the venv, the test is skipped with a message; with `CI=true` a
//! missing venv fails.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;

use serde_json::{Value, json};
use support::Session;

const CAP: usize = 20_000;
const PAGE_LENGTH: usize = 100_000;

/// A loopback HTTP server that answers every request with a long plain-text page,
/// for `requests` requests; its URL.
fn serve_page(requests: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/page.txt", listener.local_addr().unwrap());
    let page: String = (1..=20_000)
        .map(|n| format!("line {n:05} of the page\n"))
        .collect();
    thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                page.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(page.as_bytes());
        }
    });
    url
}

/// The result of one `fetch` of `url`, through the proxy with `keep`.
fn fetch_through_proxy(python: &str, url: &str, keep: &[&str]) -> Value {
    let backstop = support::backstop();
    let cap = CAP.to_string();
    let mut command = vec![backstop.to_str().unwrap(), "proxy", "--max-bytes", &cap];
    command.extend_from_slice(keep);
    command.extend_from_slice(&[
        "--",
        python,
        "-m",
        "mcp_server_fetch",
        "--ignore-robots-txt",
        "--allow-private-ips",
    ]);
    Session::call_once(
        &command,
        "fetch",
        json!({"url": url, "max_length": PAGE_LENGTH}),
    )
}

#[test]
fn l16_fetch_keeps_its_first_line_and_its_pagination_hint_with_head_and_tail() {
    let Some(python) = support::venv_python("mcp_server_fetch") else {
        support::peer_missing(
            "l16_fetch_keeps_its_first_line_and_its_pagination_hint_with_head_and_tail",
            "mcp-server-fetch (PyPI, in target/fastmcp-venv)",
        );
        return;
    };
    let python = python.to_str().unwrap();
    let url = serve_page(2);
    let hint = format!("start_index of {PAGE_LENGTH}");

    let both = fetch_through_proxy(python, &url, &["--keep", "fetch=head+tail:0.5"]);
    assert!(serde_json::to_vec(&both).unwrap().len() <= CAP, "L4");
    assert_eq!(both["isError"], false, "L5");
    let text = both["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("Contents of {url}:\nline 00001 of the page\n")),
        "the head stays: {:.300}",
        text
    );
    assert!(
        text.trim_end().ends_with("</error>") && text.contains(&hint),
        "the tail stays"
    );
    let header = text
        .lines()
        .find(|line| line.starts_with("[... truncated "))
        .expect("a header line");
    assert!(
        header.ends_with(" bytes ...]"),
        "L16: on its own line: {header}"
    );
    let (head, tail) = text.split_once(header).unwrap();
    assert!(
        head.len() > 5_000 && tail.len() > 5_000,
        "both parts have room"
    );

    // The default keeps the tail: the hint, without the start it reads on from.
    let tail_only = fetch_through_proxy(python, &url, &[]);
    assert!(serde_json::to_vec(&tail_only).unwrap().len() <= CAP, "L4");
    let text = tail_only["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[... truncated ") && text.contains(&hint));
    assert!(!text.contains("Contents of"), "L3: the head goes");
}
