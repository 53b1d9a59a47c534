//! One client request through the gateway (SPEC A5): the `Host` and `Origin` checks,
//! the body's limit, the session's shaper shown the client's POST (and its own
//! `tools/list` first when E8 needs it), the request sent on, and the upstream's
//! answer passed or shaped by its status and kind ([`super::gateway_body`]).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use backstop_jsonrpc::owed::End;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;

use super::body_channel;
use super::gateway_body::{Body, Sent, failed, fallible, full, json_body, plain, stream_events};
use super::gateway_sessions::Gateway;
use super::headers::{SESSION_ID, end_to_end, is_event_stream, is_json_content, to_upstream};
use super::listing::list_first;
use super::origin_guard;
use super::upstream::RequestWait;
use super::{Shaping, is_long_lived, lock};

/// Show a client's POST body to the session's shaper before it is sent on; when the
/// shaper asks to list the tools first (E8), do so ([`list_first`]) with the
/// client's own end-to-end headers (its session, revision and credentials). What the
/// listing leaves for the client is dropped: a response here answers the client's
/// request, and those messages concern none of the client's requests.
///
/// A request without a session (2026-07-28, stateless) has a shaper of its own for
/// that one request, which starts from the listing kept for its credential (R5,
/// [`super::stateless_catalogs`]), and lists as the server took the request — without
/// a handshake (a 2025 client of a stateless server sends its `initialize` and its
/// call in separate requests); a listing it makes is kept for the next. The listing
/// takes its time from the request's `wait` (B5).
async fn see_client_body(
    gateway: &Gateway,
    shaping: &Shaping,
    headers: &http::HeaderMap,
    in_session: bool,
    body: &[u8],
    wait: &mut RequestWait,
) {
    let credential = headers.get(header::AUTHORIZATION);
    if !in_session {
        shaping.set_outside_session();
    }
    if !in_session && let Some(catalog) = gateway.catalogs.for_request(credential, Instant::now()) {
        shaping.set_catalog(catalog);
    }
    let listing = shaping.client_route(body);
    if !listing.is_empty() {
        let headers = to_upstream(headers);
        let _ = list_first(&gateway.upstream, shaping, listing, &headers, wait).await;
        if !in_session && let Some(catalog) = shaping.complete_catalog() {
            gateway.catalogs.keep(credential, catalog);
        }
    }
}

/// The `403` of a request whose `refused` header the gateway does not serve
/// ([`origin_guard`]): a JSON-RPC error, and the request goes no further.
fn forbidden(refused: origin_guard::Refused, headers: &http::HeaderMap) -> Response<Body> {
    // The header's name only: its value is the client's (an attacker's) text.
    tracing::warn!("a request refused with 403: its {refused} header is not served");
    let value = headers
        .get(match refused {
            origin_guard::Refused::Host => header::HOST,
            origin_guard::Refused::Origin => header::ORIGIN,
        })
        .map(HeaderValue::as_bytes);
    let mut response = Response::new(full(origin_guard::refusal_body(refused, value)));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One request from a client, to a gateway listening on `listen`.
pub(super) async fn handle(
    gateway: &Gateway,
    listen: IpAddr,
    request: Request<Incoming>,
) -> Response<Body> {
    let mut wait = gateway.upstream.request_wait();
    let (parts, body) = request.into_parts();
    if let Err(refused) = origin_guard::check_headers(listen, &gateway.allowed, &parts.headers) {
        return forbidden(refused, &parts.headers);
    }
    let too_long = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|length| length > gateway.max_body as u64);
    if too_long {
        return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n");
    }
    let body = match Limited::new(body, gateway.max_body).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n");
        }
        Err(_) => return plain(StatusCode::BAD_REQUEST, "the request body broke off\n"),
    };
    let session_id = parts
        .headers
        .get(SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let (shaping, kept) = match &session_id {
        Some(id) => gateway.session(id),
        None => (gateway.fresh(), false),
    };
    if parts.method == Method::POST {
        see_client_body(
            gateway,
            &shaping,
            &parts.headers,
            session_id.is_some(),
            &body,
            &mut wait,
        )
        .await;
    }

    let mut sent = Sent {
        post: parts.method == Method::POST,
        body: body.clone(),
        error_status: None,
    };
    let mut upstream_request = Request::new(Full::new(body));
    *upstream_request.method_mut() = parts.method.clone();
    *upstream_request.uri_mut() = gateway.upstream.url().clone();
    *upstream_request.headers_mut() = to_upstream(&parts.headers);
    let response = match gateway.upstream.send_within(upstream_request, &wait).await {
        Ok(response) => response,
        Err(failure) => return failed(gateway, &shaping, sent.failure(failure)),
    };
    let (mut head, mut body) = response.into_parts();
    let status = head.status;
    head.headers = end_to_end(&head.headers);

    if parts.method == Method::DELETE
        && status.is_success()
        && let Some(id) = &session_id
    {
        lock(&gateway.sessions).remove(id);
    }
    if status.is_server_error() {
        sent.error_status = Some(status);
        let mut owed = sent.owed();
        if !owed.is_empty() {
            // The server's own JSON-RPC answer on an error status is its word (A5): it
            // passes, shaped as any, on a `200`; the requests it leaves unanswered get
            // the status's error. Any other body is no answer.
            if !is_json_content(&head.headers) {
                return failed(gateway, &shaping, owed.end(End::Ended, false));
            }
            head.status = StatusCode::OK;
            return json_body(gateway, &shaping, head, body, &sent).await;
        }
    }
    if !status.is_success() || !matches!(parts.method, Method::POST | Method::GET) {
        return Response::from_parts(head, fallible(body));
    }
    // The upstream issued this id, or served a request of one it knows.
    let served = match &session_id {
        None => head.headers.get(SESSION_ID).and_then(|v| v.to_str().ok()),
        Some(id) => (!kept).then_some(id.as_str()),
    };
    if let Some(id) = served {
        let mut sessions = lock(&gateway.sessions);
        gateway.keep(&mut sessions, id, Arc::clone(&shaping), Instant::now());
    }
    if is_event_stream(&head.headers) {
        let patient = parts.method == Method::GET || is_long_lived(&sent.body);
        let owed = sent.owed();
        let (sender, channel) = body_channel::channel();
        let upstream = gateway.upstream.clone();
        tokio::spawn(async move {
            // Returns when the client is gone too: the upstream stream is dropped,
            // closed, with it.
            let _ = stream_events(&upstream, &shaping, &mut body, owed, patient, sender).await;
        });
        return Response::from_parts(head, fallible(channel));
    }
    if parts.method == Method::GET || status == StatusCode::ACCEPTED {
        return Response::from_parts(head, fallible(body));
    }
    json_body(gateway, &shaping, head, body, &sent).await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use tokio::net::TcpListener;

    use super::super::gateway::serve;
    use super::super::gateway_sessions::gateway_to;
    use super::super::upstream::Upstream;
    use super::*;

    #[test]
    fn b1_a_post_the_upstream_refused_leaves_nothing_pending_in_its_session() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // The upstream: a port nobody listens on; session "s1" one it issued earlier.
        let gateway = Arc::new(gateway_to(&format!("http://127.0.0.1:{}/mcp", free_port())));
        let s1 = gateway.fresh();
        gateway.keep(
            &mut lock(&gateway.sessions),
            "s1",
            Arc::clone(&s1),
            Instant::now(),
        );
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            tokio::spawn(serve(listener, Arc::clone(&gateway)));
            let client = Upstream::new(url.parse().unwrap(), Duration::from_secs(5)).unwrap();
            let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t"}}"#;
            let mut request = Request::new(Full::new(Bytes::from_static(call.as_bytes())));
            *request.method_mut() = Method::POST;
            *request.uri_mut() = client.url().clone();
            request
                .headers_mut()
                .insert(SESSION_ID, HeaderValue::from_static("s1"));
            request.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            let (head, mut body) = client.send(request).await.unwrap().into_parts();
            assert_eq!(head.status, StatusCode::OK);
            let answer: serde_json::Value =
                serde_json::from_slice(&client.whole(&mut body).await.unwrap()).unwrap();
            assert_eq!(answer["id"], "c");
            assert!(
                answer.to_string().contains("could not be reached"),
                "{answer}"
            );
        });
        let (session, kept) = gateway.session("s1");
        assert!(kept && Arc::ptr_eq(&session, &s1));
        assert_eq!(s1.pending(), 0, "A5/B1: the failed request is not pending");
    }

    /// A port nobody listens on.
    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port()
    }
}
