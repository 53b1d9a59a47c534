//! Which headers the gateway passes (SPEC A5): every end-to-end header untouched —
//! `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`, `Authorization`,
//! `Origin` among them — and no hop-by-hop header (RFC 9110 §7.6.1: those of a
//! connection, and those the `Connection` header names). `Host` and `Content-Length`
//! are the new hop's own; the client's `Host` goes on as `X-Forwarded-Host`
//! ([`to_upstream`]). No header value is ever logged.

use http::header::{self, HeaderName};
use http::{HeaderMap, HeaderValue};

/// The session header of Streamable HTTP.
pub const SESSION_ID: &str = "mcp-session-id";
/// The revision header of Streamable HTTP (2025-06-18 on).
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// Headers that belong to one connection, never forwarded (`Keep-Alive` too, which
/// [`http`] has no constant for).
const HOP_BY_HOP: [HeaderName; 7] = [
    header::CONNECTION,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Whether `name` is a header of one connection ([`HOP_BY_HOP`], `Keep-Alive`), or
/// one `Host` and `Content-Length`, which each hop sets itself. A known name is
/// compared as what it is, not by its text.
fn is_this_hops(name: &HeaderName) -> bool {
    const KEEP_ALIVE: HeaderName = HeaderName::from_static("keep-alive");
    HOP_BY_HOP.contains(name)
        || name == header::HOST
        || name == header::CONTENT_LENGTH
        || name == KEEP_ALIVE
}

/// The headers of `incoming` to send on the next hop: hop-by-hop ones and those the
/// `Connection` header names dropped, and `Host` and `Content-Length` (the next hop's
/// own); everything else untouched, in order.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// let mut incoming = HeaderMap::new();
/// incoming.insert("connection", HeaderValue::from_static("keep-alive, x-hop"));
/// incoming.insert("x-hop", HeaderValue::from_static("1"));
/// incoming.insert("authorization", HeaderValue::from_static("Bearer t"));
/// incoming.insert("mcp-session-id", HeaderValue::from_static("s1"));
/// let sent = backstop::http::headers::end_to_end(&incoming);
/// assert_eq!(sent.len(), 2);
/// assert_eq!(sent["authorization"], "Bearer t");
/// assert!(sent.get("x-hop").is_none());
/// ```
pub fn end_to_end(incoming: &HeaderMap) -> HeaderMap {
    end_to_end_but(incoming, None)
}

/// [`end_to_end`], and without `also` if given.
fn end_to_end_but(incoming: &HeaderMap, also: Option<&HeaderName>) -> HeaderMap {
    let named: Vec<HeaderName> = incoming
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut out = HeaderMap::with_capacity(incoming.len() + 1);
    for (name, value) in incoming {
        let dropped = is_this_hops(name) || named.contains(name) || Some(name) == also;
        if !dropped {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// The name of the header that carries the client's own `Host` to the upstream.
pub const FORWARDED_HOST: &str = "x-forwarded-host";

/// The headers of a client's request to send to the upstream: [`end_to_end`], and
/// the client's `Host` (which the gateway replaced with the upstream's, and checked,
/// [`super::origin_guard`]) as `X-Forwarded-Host`, so that the upstream's own check
/// can see it. One the client sent itself is dropped: the upstream sees only a value
/// the gateway checked.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// let mut incoming = HeaderMap::new();
/// incoming.insert("host", HeaderValue::from_static("localhost:8808"));
/// incoming.insert("x-forwarded-host", HeaderValue::from_static("made-up.example"));
/// let sent = backstop::http::headers::to_upstream(&incoming);
/// assert_eq!(sent["x-forwarded-host"], "localhost:8808");
/// assert!(sent.get("host").is_none());
/// ```
pub fn to_upstream(incoming: &HeaderMap) -> HeaderMap {
    const NAME: HeaderName = HeaderName::from_static(FORWARDED_HOST);
    let mut out = end_to_end_but(incoming, Some(&NAME));
    if let Some(host) = incoming.get(header::HOST) {
        out.insert(NAME, host.clone());
    }
    out
}

/// Set the `Content-Type` and `Accept` of a Streamable HTTP client's POST (a JSON-RPC
/// message; a JSON body or an SSE stream taken in answer).
///
/// ```
/// let mut headers = http::HeaderMap::new();
/// backstop::http::headers::set_post_headers(&mut headers);
/// assert_eq!(headers["accept"], "application/json, text/event-stream");
/// assert_eq!(headers["content-type"], "application/json");
/// ```
pub fn set_post_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
}

/// Whether a response's `Content-Type` is an SSE stream.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", HeaderValue::from_static("text/event-stream; charset=utf-8"));
/// assert!(backstop::http::headers::is_event_stream(&headers));
/// ```
pub fn is_event_stream(headers: &HeaderMap) -> bool {
    media_type_is(headers, "text/event-stream")
}

/// Whether a response's `Content-Type` is JSON (`application/json`, with or without
/// parameters).
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", HeaderValue::from_static("application/json; charset=utf-8"));
/// assert!(backstop::http::headers::is_json_content(&headers));
/// ```
pub fn is_json_content(headers: &HeaderMap) -> bool {
    media_type_is(headers, "application/json")
}

fn media_type_is(headers: &HeaderMap, wanted: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(';')
                .next()
                .is_some_and(|kind| kind.trim().eq_ignore_ascii_case(wanted))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a5_the_headers_that_must_pass_pass_untouched() {
        let mut incoming = HeaderMap::new();
        for (name, value) in [
            ("mcp-session-id", "abc"),
            ("mcp-protocol-version", "2025-06-18"),
            ("last-event-id", "e-9"),
            ("authorization", "Bearer s3cr3t"),
            ("origin", "http://localhost:3000"),
            ("accept", "application/json, text/event-stream"),
        ] {
            incoming.append(name, HeaderValue::from_static(value));
        }
        for hop in HOP_BY_HOP.iter().chain(&[
            header::HOST,
            header::CONTENT_LENGTH,
            HeaderName::from_static("keep-alive"),
        ]) {
            incoming.append(hop, HeaderValue::from_static("x"));
        }
        let sent = end_to_end(&incoming);
        assert_eq!(sent.len(), 6);
        assert_eq!(sent["authorization"], "Bearer s3cr3t");
        assert_eq!(sent["origin"], "http://localhost:3000");
        assert_eq!(sent["last-event-id"], "e-9");
    }
}
