//! The shaper's own `tools/list` in both remote modes (SPEC E8): a `tools/call` that
//! comes before the session's tool catalog is complete makes the shaper list the tools
//! itself ([`backstop_jsonrpc::listing`]), so that an unknown tool gets `Did you mean …?` and a
//! capped structured result is cut within the tool's `outputSchema` (L15) from the
//! first call on.
//!
//! Over Streamable HTTP each request has an answer of its own, so the listing is done
//! *before* the client's POST is sent, not beside it: [`list_first`] POSTs each page
//! request with the call's own session headers, reads its answer (a JSON body, or the
//! events of an SSE stream, read whole: a tool list is small), hands every message to
//! the shaper, follows `nextCursor`, and only then returns. The call's answer therefore
//! never waits in the shaper for the listing (nothing is queued), and streams as usual.
//!
//! Bounds: the whole listing, every page from its request to the end of its answer,
//! has the first half of the call's own wait ([`RequestWait`]: `--timeout` from the
//! call's arrival), and the call the rest, so the client waits no longer than
//! `--timeout` for both (SPEC B5). Whatever goes wrong — refused, a status that is not a success, a timeout, a
//! broken or non-JSON answer, an error answer — ends the listing
//! ([`Shaper::abandon_listing`](backstop_jsonrpc::Shaper::abandon_listing): its answer cannot come
//! on any other stream) and the client's message is sent all the same: the call is
//! never failed because the shaper's own listing did. A session whose listing failed
//! does not list again until the server says its tool list changed.
//!
//! A `tools/call` that comes while another call's listing is still under way does not
//! wait for it: it is sent at once and shaped with what is known when its answer comes
//! (an unknown tool then passes as the server said it: E8 only against a complete
//! catalog, R5).

use std::time::Instant;

use backstop_core::ToolCatalog;
use backstop_jsonrpc::Route;
use backstop_jsonrpc::message::Envelope;
use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::Full;
use serde_json::Value;

use super::headers::{is_event_stream, set_post_headers};
use super::message_headers::mirror_message;
use super::sse::SseParser;
use super::upstream::{RequestWait, Upstream, UpstreamFailure};
use super::{Shaping, is_json, lock, request_ids, response_ids};

impl Shaping {
    /// A message (or batch) from the client, seen before it is sent on unchanged, for
    /// a mode that lists the tools itself: the shaper's own requests to send (and have
    /// answered, [`list_first`]) before it — none, most times.
    ///
    /// ```
    /// use backstop::http::Shaping;
    /// use backstop_jsonrpc::Shaper;
    /// let shaping = Shaping::new(Shaper::default(), false);
    /// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    /// let first = shaping.client_route(call);
    /// assert_eq!(first.len(), 1);
    /// assert!(first[0].starts_with(br#"{"jsonrpc":"2.0","id":"backstop/tools/list#1","method":"tools/list""#));
    /// ```
    pub fn client_route(&self, body: &[u8]) -> Vec<Vec<u8>> {
        lock(&self.shaper)
            .route_client_message(Instant::now(), body)
            .to_server
    }

    /// Start from a listing made for an earlier request (R5, the gateway's stateless
    /// requests: [`super::stateless_catalogs`]).
    pub fn set_catalog(&self, catalog: ToolCatalog) {
        lock(&self.shaper).set_catalog(catalog);
    }

    /// A request outside any session: the server takes backstop's listing without a
    /// handshake, as it took the request (R5, E8).
    pub fn set_outside_session(&self) {
        lock(&self.shaper).set_outside_session();
    }

    /// The input schema of the tool `body` calls, when it is a `tools/call` of a tool
    /// the listing knows: what its `Mcp-Param-*` headers come from
    /// ([`super::message_headers::mirror_arguments`]).
    pub fn called_tool_schema(&self, body: &[u8]) -> Option<Value> {
        let envelope = Envelope::parse(body)?;
        if !envelope
            .method
            .as_deref()
            .is_some_and(backstop_core::machine::is_tool_call)
        {
            return None;
        }
        let name = envelope.params().name?;
        lock(&self.shaper).catalog().input_schema(&name).cloned()
    }

    /// The session's listing, when it is complete.
    pub fn complete_catalog(&self) -> Option<ToolCatalog> {
        let shaper = lock(&self.shaper);
        shaper
            .catalog()
            .is_complete()
            .then(|| shaper.catalog().clone())
    }

    /// A server message on the stream of one of the shaper's own requests.
    fn listing_message(&self, message: &[u8]) -> Route {
        lock(&self.shaper).route_server_message(Instant::now(), message)
    }

    /// The listing's answer will not come.
    fn abandon_listing(&self) -> Vec<Vec<u8>> {
        lock(&self.shaper).abandon_listing(Instant::now())
    }
}

/// Send the shaper's own `requests` (from [`Shaping::client_route`]) to `upstream`,
/// each with `headers` (the session's, as the client's message will carry them) and
/// the content type and `Accept` of a Streamable HTTP client; feed the answers to the
/// shaper and follow its next pages, all by `wait`'s listing deadline (its time is
/// counted in `wait`, for the call's timeout error to say). On a failure
/// the listing is abandoned, and this returns all the same.
///
/// Returns the messages for the client: the ones the shaper held and released (none,
/// as it is used here), and any other message the server sent on a listing's stream
/// (a notification about the shaper's own request). The stdio front writes them; the
/// gateway has no answer to put them in and drops them, as they concern no request of
/// the client's.
pub async fn list_first(
    upstream: &Upstream,
    shaping: &Shaping,
    mut requests: Vec<Vec<u8>>,
    headers: &HeaderMap,
    wait: &mut RequestWait,
) -> Vec<Vec<u8>> {
    let mut for_client = Vec::new();
    // Dropped before the listing is over (the gateway's client went away and its
    // request with it): the listing is abandoned, not left in flight for ever.
    let mut unfinished = Unfinished(Some(shaping));
    let listed = tokio::time::timeout_at(wait.listing_deadline().into(), async {
        while let Some(request) = requests.pop() {
            let route = one_page(upstream, shaping, request, headers, &mut for_client).await?;
            requests.extend(route.to_server);
            for_client.extend(route.to_client);
        }
        Ok::<(), UpstreamFailure>(())
    })
    .await;
    let failed = match listed {
        Ok(Ok(())) => None,
        Ok(Err(failure)) => Some(failure.to_string()),
        Err(_) => Some("it timed out".to_owned()),
    };
    match failed {
        None => tracing::debug!("listed the tools before a call (E8)"),
        Some(cause) => {
            tracing::warn!("the tools could not be listed before a call: {cause}");
            for_client.extend(shaping.abandon_listing());
        }
    }
    unfinished.0 = None;
    wait.listed();
    for_client
}

/// Abandons the listing when dropped armed.
struct Unfinished<'a>(Option<&'a Shaping>);

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(shaping) = self.0 {
            // Nothing is held in these modes: there is nothing to lose here.
            let _ = shaping.abandon_listing();
        }
    }
}

/// POST one page request; the shaper's route for its answer. Other messages on its
/// stream go to `for_client`.
async fn one_page(
    upstream: &Upstream,
    shaping: &Shaping,
    request: Vec<u8>,
    headers: &HeaderMap,
    for_client: &mut Vec<Vec<u8>>,
) -> Result<Route, UpstreamFailure> {
    let id = request_ids(&request)
        .pop()
        .ok_or(UpstreamFailure::NotJson)?;
    let mut own_headers = headers.clone();
    set_post_headers(&mut own_headers);
    // Its own `Mcp-Method: tools/list`, never the call's headers (2026-07-28).
    mirror_message(&mut own_headers, &request);
    let mut post = Request::new(Full::new(Bytes::from(request)));
    *post.method_mut() = Method::POST;
    *post.uri_mut() = upstream.url().clone();
    *post.headers_mut() = own_headers;
    let (head, mut body) = upstream.send(post).await?.into_parts();
    if !head.status.is_success() {
        return Err(UpstreamFailure::Status(head.status));
    }
    if !is_event_stream(&head.headers) {
        let whole = upstream.whole(&mut body).await?;
        if !is_json(&whole) || !response_ids(&whole).contains(&id) {
            return Err(UpstreamFailure::NotJson);
        }
        return Ok(shaping.listing_message(&whole));
    }
    let mut parser = SseParser::default();
    let wait = upstream.wait(false);
    while let Some(data) = upstream.next_data(&mut body, wait).await? {
        for event in parser.feed(&data) {
            let Some(message) = event.data().filter(|data| !data.is_empty()) else {
                continue;
            };
            let answers = response_ids(&message).contains(&id);
            let mut route = shaping.listing_message(&message);
            if let Some(forward) = route.forward.take() {
                for_client.push(forward.bytes(&message).to_vec());
            }
            if answers {
                return Ok(route); // the rest of the stream is not read
            }
            for_client.append(&mut route.to_client);
        }
    }
    Err(UpstreamFailure::Broken)
}
