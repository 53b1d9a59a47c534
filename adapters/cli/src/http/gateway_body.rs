//! The bodies of the gateway's answers (SPEC A5, B3, B5): the upstream's JSON body or
//! SSE stream shaped on its way to the client as it arrives, and the JSON-RPC errors
//! that answer the requests of a POST the upstream failed or left unanswered.

use std::convert::Infallible;
use std::sync::Arc;

use backstop_jsonrpc::stream::Sink;
use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

use super::body_channel::{self, BodySender, ClientGone};
use super::gateway::Gateway;
use super::resumption::{Resumption, is_close};
use super::shape::{BodyShaper, EventShaper, Out, QueueSink, Queued};
use super::upstream::{Upstream, UpstreamFailure, Wait};
use super::{Shaping, is_answer, request_ids};

/// The body of every response the gateway sends.
pub(super) type Body = BoxBody<Bytes, BodyError>;

/// Why a response body failed: the upstream's broke, or the gateway aborted one it had
/// begun (B5); either way the client's connection closes without the body's end.
pub(super) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// A whole body.
pub(super) fn full(bytes: impl Into<Bytes>) -> Body {
    boxed(Full::new(bytes.into()))
}

/// A body that cannot fail, as the gateway's.
fn boxed(
    body: impl hyper::body::Body<Data = Bytes, Error = Infallible> + Send + Sync + 'static,
) -> Body {
    body.map_err(|never: Infallible| match never {}).boxed()
}

/// A body that may fail (the upstream's, passed on; one the gateway writes, which it
/// may abort), as the gateway's.
pub(super) fn fallible<E: Into<BodyError> + 'static>(
    body: impl hyper::body::Body<Data = Bytes, Error = E> + Send + Sync + 'static,
) -> Body {
    body.map_err(Into::into).boxed()
}

/// A response with `status` and a plain-text body.
pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// JSON-RPC messages as one JSON text: one object, or a batch of several.
fn one_json_text(messages: Vec<Vec<u8>>) -> Vec<u8> {
    if messages.len() == 1 {
        messages.into_iter().next().unwrap_or_default()
    } else {
        let mut body = b"[".to_vec();
        body.extend(messages.join(&b","[..]));
        body.push(b']');
        body
    }
}

/// A `200` JSON body of JSON-RPC messages ([`one_json_text`]).
pub(super) fn json_messages(messages: Vec<Vec<u8>>) -> Response<Body> {
    let mut response = Response::new(full(one_json_text(messages)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The answer for a POST the upstream failed: its requests' errors, or `502` when it
/// had none to answer. The requests are no longer pending in the session's shaper.
pub(super) fn failed(
    gateway: &Gateway,
    shaping: &Shaping,
    ids: &[String],
    failure: &UpstreamFailure,
) -> Response<Body> {
    if ids.is_empty() {
        return plain(StatusCode::BAD_GATEWAY, "the MCP server did not answer\n");
    }
    let error = failure.to_error(gateway.upstream.address());
    json_messages(shaping.fail_requests(ids, &error))
}

/// What the client sent: a POST's requests' ids are read only when the answer needs
/// them (an error for each, an SSE stream, a long body), not for every short answer.
pub(super) struct Sent {
    pub(super) post: bool,
    pub(super) body: Bytes,
}

impl Sent {
    /// The raw JSON ids of the requests sent (none but in a POST).
    pub(super) fn ids(&self) -> Vec<String> {
        if self.post {
            request_ids(&self.body)
        } else {
            Vec::new()
        }
    }
}

/// The answer for a JSON body: shaped whole when it is short (and then, when it is
/// not JSON or breaks off, the requests' errors instead); streamed as it is shaped
/// when it is long (B3), once its status and headers have gone.
pub(super) async fn json_body(
    gateway: &Gateway,
    shaping: &Arc<Shaping>,
    head: http::response::Parts,
    mut body: Incoming,
    sent: &Sent,
) -> Response<Body> {
    let mut shaped = BodyShaper::new(Out::Http);
    let mut sink = QueueSink::default();
    let wait = gateway.upstream.wait(false);
    loop {
        match gateway.upstream.next_data(&mut body, wait).await {
            Err(failure) => return failed(gateway, shaping, &sent.ids(), &failure),
            Ok(Some(data)) => {
                shaping.shape(|shaper| shaped.push(shaper, &data, &mut sink));
                if shaped.whole().is_none() {
                    break;
                }
            }
            Ok(None) => {
                let empty = shaped.whole().is_none_or(<[u8]>::is_empty);
                if empty && sent.ids().is_empty() {
                    return Response::from_parts(head, full(Bytes::new()));
                }
                let ended = shaping.shape(|shaper| shaped.end(shaper, &mut sink));
                // A body that answers a request is an answer (B4, read as the shaper
                // decided); any other must be JSON. What was queued for one that is
                // neither is dropped.
                let answer =
                    !ended.answered.is_empty() || ended.whole.as_deref().is_some_and(is_answer);
                if !answer {
                    return failed(gateway, shaping, &sent.ids(), &UpstreamFailure::NotJson);
                }
                return Response::from_parts(head, full(sink.take_bytes()));
            }
        }
    }
    let (sender, channel) = body_channel::channel();
    let upstream = gateway.upstream.clone();
    let shaping = Arc::clone(shaping);
    let ids = sent.ids();
    tokio::spawn(async move {
        let _ = stream_body(&upstream, &shaping, body, wait, (shaped, sink), ids, sender).await;
    });
    Response::from_parts(head, fallible(channel))
}

/// The rest of a long JSON body, shaped into `sender` as it arrives. When the server
/// breaks off before anything was sent, the requests' errors are the body instead;
/// after a part of it was sent (passing as it came), the body is aborted: no error can
/// follow it in one JSON body, and it must not end as a whole one would (B5).
async fn stream_body(
    upstream: &Upstream,
    shaping: &Shaping,
    mut body: Incoming,
    wait: Wait,
    (mut shaped, mut sink): (BodyShaper, QueueSink),
    ids: Vec<String>,
    mut sender: BodySender,
) -> Result<(), ClientGone> {
    loop {
        send_queued(&mut sink, &mut sender).await?;
        match upstream.next_data(&mut body, wait).await {
            Ok(Some(data)) => shaping.shape(|shaper| shaped.push(shaper, &data, &mut sink)),
            Ok(None) => break,
            Err(failure) => {
                // The requests are answered here or not at all: none stays pending.
                let error = failure.to_error(upstream.address());
                let answers = shaping.fail_requests(&ids, &error);
                if sink.sent_some() {
                    return sender.abort().await;
                }
                if !ids.is_empty() {
                    sender
                        .send_data(Bytes::from(one_json_text(answers)))
                        .await?;
                }
                return Ok(());
            }
        }
    }
    shaping.shape(|shaper| shaped.end(shaper, &mut sink));
    send_queued(&mut sink, &mut sender).await
}

/// Send what `sink` queued, held bytes read back a piece at a time.
async fn send_queued(sink: &mut QueueSink, sender: &mut BodySender) -> Result<(), ClientGone> {
    let queued: Vec<Queued> = sink.drain().collect();
    for queued in queued {
        match queued {
            Queued::Bytes(bytes) => sender.send_data(Bytes::from(bytes)).await?,
            Queued::Held(held) => {
                for piece in held.pieces() {
                    sender.send_data(Bytes::from(piece)).await?;
                }
            }
        }
    }
    Ok(())
}

/// Shape an SSE stream as it arrives into `sender`; when it breaks off, times out or
/// ends, each request of `ids` it did not answer gets an error event — unless the
/// server closed a stream the client may resume (an event of it had an id,
/// SEP-1699): that close is passed on as it came, and the answers come on the
/// client's GET with `Last-Event-ID`, shaped there ([`super::resumption`], B5).
pub(super) async fn stream_events(
    upstream: &Upstream,
    shaping: &Shaping,
    body: &mut Incoming,
    mut ids: Vec<String>,
    patient: bool,
    mut sender: BodySender,
) -> Result<(), ClientGone> {
    let mut events = EventShaper::new(Out::Http);
    let mut sink = QueueSink::default();
    let wait = upstream.wait(patient);
    let mut stream = Resumption::default();
    let ended = loop {
        let next = tokio::select! {
            next = upstream.next_data(body, wait) => next,
            () = sender.closed() => return Err(ClientGone),
        };
        let data = match next {
            Ok(Some(data)) => data,
            Ok(None) => break None,
            Err(failure) => break Some(failure),
        };
        for event in shaping.shape(|shaper| events.push(shaper, &data, &mut sink)) {
            stream.saw(event.id.as_deref(), event.retry.as_deref());
            let answered = event
                .message
                .map(|message| message.answered)
                .unwrap_or_default();
            ids.retain(|id| !answered.contains(id));
        }
        send_queued(&mut sink, &mut sender).await?;
    };
    // An event cut off by the end of the stream is sent on as it came, unless error
    // events follow: a client would join them to it (and drops it at the end anyway).
    // One already on its way is ended first.
    let passed_on = stream.is_resumable() && is_close(ended.as_ref());
    let keep_cut_off = ids.is_empty() || passed_on;
    if shaping.shape(|shaper| events.finish(shaper, keep_cut_off, &mut sink)) {
        sink.send(b"\n\n");
    }
    send_queued(&mut sink, &mut sender).await?;
    if passed_on && !ids.is_empty() {
        tracing::debug!(
            requests = ids.len(),
            "the server closed a resumable stream before answering: passed on for the \
             client to resume (SEP-1699)"
        );
    }
    if !ids.is_empty() && !passed_on {
        let failure = ended.unwrap_or(UpstreamFailure::Broken);
        let error = failure.to_error(upstream.address());
        for answer in shaping.fail_requests(&ids, &error) {
            let mut event = b"event: message\ndata: ".to_vec();
            event.extend_from_slice(&answer);
            event.extend_from_slice(b"\n\n");
            sender.send_data(Bytes::from(event)).await?;
        }
    }
    Ok(())
}
