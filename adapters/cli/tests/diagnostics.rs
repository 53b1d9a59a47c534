//! The diagnostic log on stderr (issue 20): warnings by default, more with `-v` or as
//! `RUST_LOG` says — and, at every level, no credential (A5: a `--header` value, a
//! URL's user info or query, a client's `Authorization`) and no argument value of the
//! server's command.

mod http_support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use http_support::{backstop, free_port, start_upstream, wait_for_port};

/// `backstop ARGS`, with `RUST_LOG` as given (unset for `None`), `input` on its stdin
/// and then its end.
fn run(args: &[&str], rust_log: Option<&str>, input: &str) -> Output {
    let mut command = Command::new(backstop());
    command.args(args).env_remove("RUST_LOG");
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const PING: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

#[test]
fn the_diagnostic_log_is_warnings_by_default_and_more_with_v_or_rust_log() {
    let server = ["--", "sh", "-c", "cat > /dev/null", "sh", "secret-arg-123"];
    let proxy = |verbose: &[&str], rust_log| {
        let args = [&["proxy", "--quiet"][..], verbose, &server].concat();
        stderr(&run(&args, rust_log, PING))
    };
    let quiet = proxy(&[], None);
    assert!(!quiet.contains("INFO"), "warnings only by default: {quiet}");
    let verbose = proxy(&["-v"], None);
    assert!(
        verbose.contains("INFO") && verbose.contains("the server started"),
        "{verbose}"
    );
    assert!(verbose.contains("program=\"sh\"") && verbose.contains("the server exited"));
    assert!(!verbose.contains("DEBUG"), "-v is info: {verbose}");
    let from_env = proxy(&[], Some("backstop=info"));
    assert!(from_env.contains("the server started"), "{from_env}");
    for log in [verbose, from_env, proxy(&["-vvv"], Some("trace"))] {
        assert!(!log.contains("secret-arg-123"), "an argument value: {log}");
    }
}

/// An upstream that answers every request with an empty result for its id.
async fn empty_results(
    request: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<http_support::TestBody>, std::convert::Infallible> {
    use http_body_util::BodyExt;
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
    let body = http_body_util::Full::new(bytes::Bytes::from(answer.to_string()))
        .map_err(|never| match never {})
        .boxed();
    Ok(http::Response::builder()
        .header("content-type", "application/json")
        .body(body)
        .unwrap())
}

#[test]
fn a5_no_credential_is_logged_at_any_level() {
    let (_runtime, upstream) = start_upstream(empty_results);
    let with_secrets = upstream.replace("http://", "http://user:pw-s3cr3t@") + "?key=q-s3cr3t";
    let unreachable = format!("http://user:pw-s3cr3t@127.0.0.1:{}/mcp", free_port());
    let session = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}\n\
                   {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n\
                   {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{\"password\":\"a-s3cr3t\"}}}\n";
    for url in [&with_secrets, &unreachable] {
        let args = [
            "proxy",
            "-vvv",
            "--url",
            url,
            "--header",
            "Authorization: Bearer h-s3cr3t",
        ];
        let output = run(&args, Some("trace"), session);
        let log = stderr(&output);
        assert!(log.contains("TRACE"), "every level on: {log}");
        assert!(!log.contains("s3cr3t"), "a credential in the log: {log}");
        assert!(log.contains("user info is not sent"), "said once: {log}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("\"id\":2"));
    }

    // The gateway, a client's `Authorization` and session id passing through it.
    let port = free_port();
    let log_path = std::env::temp_dir().join(format!("backstop-diagnostics-{port}.log"));
    let mut gateway = Command::new(backstop())
        .args(["gateway", "-vvv", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--upstream", &with_secrets])
        .env("RUST_LOG", "trace")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut gateway);
    let gateway = http_support::Spawned(gateway);
    let http = http_support::Http::new();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for line in session.lines() {
        let headers = [
            ("authorization", "Bearer c-s3cr3t"),
            ("mcp-session-id", "sid-s3cr3t"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        http.send(http::Method::POST, &url, &headers, line);
    }
    drop(gateway);
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_file(&log_path);
    assert!(log.contains("TRACE"), "every level on: {log}");
    assert!(!log.contains("s3cr3t"), "a credential in the log: {log}");
}
