//! SPEC A5, scale-out: two `backstop gateway`s behind nginx (Debian's package,
//! installed by `.ci/run`), with affinity on the `Mcp-Session-Id` header
//! (`hash $http_mcp_session_id consistent`), both in front of the same fastmcp
//! server. Sessions go through nginx from several threads at once; each one's every
//! response must come back, once, shaped.
//!
//! The `initialize` of every session has no session id yet, so nginx sends it to the
//! gateway the empty key hashes to; the session's later requests go to the gateway
//! its id hashes to, which may be the other one. That works because both gateways
//! front the same server: a gateway that sees a session id it did not see begin makes
//! the session's state then, and learns the tool list from the client's own
//! `tools/list` (which, carrying the id, reaches it). nginx passes on the client's
//! `Host` (`proxy_set_header Host $http_host`): the loopback gateways serve only
//! loopback names, and nginx's own default would be the name of its upstream group.
//!
//! nginx runs as this test's own process (`master_process off`, its config, logs and
//! temp files in a temp dir, loopback ports chosen free). Locally, without nginx or
//! the fastmcp venv, skipped with a message; with `CI=true` a failure.

mod http_support;
#[path = "support/nginx.rs"]
mod nginx;

use std::path::Path;
use std::process::Stdio;

use http_support::{Http, Spawned, call};
use serde_json::{Value, json};

const CAP: usize = 2000;
const THREADS: usize = 4;
const SESSIONS_PER_THREAD: usize = 4;

/// nginx on a free port in front of `gateways`; its URL.
fn start_nginx(nginx: &Path, dir: &Path, gateways: &[String]) -> (Spawned, String) {
    let port = http_support::free_port();
    let servers: String = gateways
        .iter()
        .map(|url| {
            let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
            format!("    server {authority};\n")
        })
        .collect();
    let http = format!(
        "  upstream gateways {{\n\
             hash $http_mcp_session_id consistent;\n\
         {servers}\
             keepalive 16;\n\
           }}\n\
           server {{\n\
             listen 127.0.0.1:{port};\n\
             location /mcp {{\n\
               proxy_pass http://gateways;\n\
               proxy_http_version 1.1;\n\
               proxy_set_header Connection \"\";\n\
               proxy_set_header Host $http_host;\n\
               proxy_buffering off;\n\
               proxy_read_timeout 300s;\n\
             }}\n\
           }}\n"
    );
    let config = nginx::config(dir, 512, &http);
    let mut child = nginx::spawn(nginx, dir, &config, Stdio::inherit()).expect("nginx starts");
    http_support::wait_for_port(port, &mut child);
    (Spawned(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// One session through `url`: every response by request id, the session's id.
fn session(http: &Http, url: &str) -> (String, Vec<Value>) {
    let (id, init) = http.initialize(url);
    let mut responses = vec![init.response()];
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        call(2, "big", json!({"lines": 1000})),
        call(3, "fail", json!({"message": "Pane not found: %99"})),
        call(4, "takes_int", json!({"count": 4})),
    ];
    for request in &requests {
        responses.push(http.post(url, Some(&id), request).response());
    }
    assert!(http.delete(url, &id).status.is_success());
    (id, responses)
}

#[test]
fn a5_two_gateways_behind_nginx_with_session_affinity() {
    let Some(nginx) = http_support::or_skip(
        nginx::binary(),
        "a5_two_gateways_behind_nginx_with_session_affinity",
        "nginx (apt-get install nginx-light)",
    ) else {
        return;
    };
    let Some(python) =
        http_support::python_or_skip("a5_two_gateways_behind_nginx_with_session_affinity")
    else {
        return;
    };
    let (_server, upstream) = http_support::start_fastmcp(&python, true);
    let cap = CAP.to_string();
    let dir = std::env::temp_dir().join(format!("backstop-nginx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let logs = [dir.join("one.log"), dir.join("two.log")];
    let options = ["--max-bytes", &cap];
    let (_one, one) = http_support::start_gateway_logging(&upstream, &options, Some(&logs[0]));
    let (_two, two) = http_support::start_gateway_logging(&upstream, &options, Some(&logs[1]));
    let (_nginx, url) = start_nginx(&nginx, &dir, &[one.clone(), two.clone()]);

    let sessions: Vec<(String, Vec<Value>)> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    let http = Http::new();
                    (0..SESSIONS_PER_THREAD)
                        .map(|_| session(&http, &url))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    // Both gateways carried sessions: each logged converted failures (G1), one per
    // session it served, and together one per session.
    let converted: Vec<usize> = logs
        .iter()
        .map(|log| {
            std::fs::read_to_string(log)
                .unwrap()
                .lines()
                .filter(|line| line.starts_with("backstop: {"))
                .count()
        })
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        converted.iter().sum::<usize>(),
        THREADS * SESSIONS_PER_THREAD
    );
    assert!(converted.iter().all(|&n| n > 0), "{converted:?}");

    assert_eq!(sessions.len(), THREADS * SESSIONS_PER_THREAD);
    for (id, responses) in &sessions {
        // None lost: every request answered, by its own id.
        let ids: Vec<_> = responses.iter().map(|r| r["id"].clone()).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4].map(|n| json!(n)), "session {id}");
        // Shaped, whichever gateway served the session.
        let text = responses[2]["result"]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.starts_with("[... truncated ") && text.ends_with("\nPROMPT $"),
            "session {id}: {text:.80}"
        );
        assert!(serde_json::to_vec(&responses[2]["result"]).unwrap().len() <= CAP);
        assert_eq!(responses[3]["result"]["isError"], true, "session {id}");
        assert_eq!(
            responses[3]["result"]["content"][0]["text"],
            "Pane not found: %99"
        );
        assert_eq!(responses[4]["result"]["content"][0]["text"], "got 4");
    }
}
