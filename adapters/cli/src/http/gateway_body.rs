//! The bodies of the gateway's answers (SPEC A5, B3, B5): the upstream's JSON body or
//! SSE stream shaped on its way to the client as it arrives, and the JSON-RPC errors
//! that answer the requests of a POST the upstream failed or left unanswered.

use std::convert::Infallible;
use std::sync::Arc;

use backstop_jsonrpc::owed::{End, Owed, Verdict};
use backstop_jsonrpc::stream::Sink;
use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

use super::body_channel::{self, BodySender, ClientGone};
use super::gateway_sessions::Gateway;
use super::resumption::Resumption;
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

/// The answer for a POST whose answer failed as `verdict` says ([`Owed::end`]): its
/// requests' errors, or `502` when it had none to answer. The requests are no longer
/// pending in the session's shaper.
pub(super) fn failed(
    gateway: &Gateway,
    shaping: &Shaping,
    verdict: Verdict<UpstreamFailure>,
) -> Response<Body> {
    let answers = shaping.settle(verdict, gateway.upstream.address());
    if answers.is_empty() {
        return plain(StatusCode::BAD_GATEWAY, "the MCP server did not answer\n");
    }
    json_messages(answers)
}

/// One JSON text of the server's `body` (one message or a batch, shaped) and, after
/// its messages, `answers` (the errors of the requests it left unanswered): the body
/// itself when there are none, else a batch.
fn with_answers(body: Vec<u8>, answers: Vec<Vec<u8>>) -> Vec<u8> {
    if answers.is_empty() {
        return body;
    }
    let text = body.trim_ascii();
    let mut batch = b"[".to_vec();
    match text.strip_prefix(b"[").and_then(|t| t.strip_suffix(b"]")) {
        Some(elements) if elements.trim_ascii().is_empty() => {}
        Some(elements) => {
            batch.extend_from_slice(elements);
            batch.push(b',');
        }
        None => {
            batch.extend_from_slice(text);
            batch.push(b',');
        }
    }
    batch.extend(answers.join(&b","[..]));
    batch.push(b']');
    batch
}

/// What the client sent, and the error status it was answered with: a POST's
/// requests' ids are read only when the answer needs them (an error for each, an SSE
/// stream, a long body, the end of a short one).
pub(super) struct Sent {
    pub(super) post: bool,
    pub(super) body: Bytes,
    /// The error status the server answered with, if it did.
    pub(super) error_status: Option<StatusCode>,
}

impl Sent {
    /// The requests sent (none but in a POST), each owed an answer; for the error
    /// status, if the server answered with one.
    pub(super) fn owed(&self) -> Owed<UpstreamFailure> {
        let ids = if self.post {
            request_ids(&self.body)
        } else {
            Vec::new()
        };
        let owed = Owed::new(ids);
        match self.error_status {
            Some(status) => owed.with_error_status(UpstreamFailure::Status(status)),
            None => owed,
        }
    }

    /// What becomes of the requests sent when their answer failed with `failure`.
    pub(super) fn failure(&self, failure: UpstreamFailure) -> Verdict<UpstreamFailure> {
        self.owed().end(UpstreamFailure::end(Some(failure)), false)
    }
}

/// The answer for a JSON body: shaped whole when it is short (and then, when it is
/// not JSON or breaks off, the requests' errors instead; when it leaves requests
/// unanswered, their errors after its messages, [`with_answers`]); streamed as it is
/// shaped when it is long (B3), once its status and headers have gone.
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
            Err(failure) => return failed(gateway, shaping, sent.failure(failure)),
            Ok(Some(data)) => {
                shaping.shape(|shaper| shaped.push(shaper, &data, &mut sink));
                if shaped.whole().is_none() {
                    break;
                }
            }
            Ok(None) => {
                let empty = shaped.whole().is_none_or(<[u8]>::is_empty);
                let mut owed = sent.owed();
                if empty && owed.is_empty() {
                    return Response::from_parts(head, full(Bytes::new()));
                }
                let ended = shaping.shape(|shaper| shaped.end(shaper, &mut sink));
                // A body that answers a request is an answer (B4, read as the shaper
                // decided); any other must be JSON. What was queued for one that is
                // neither is dropped.
                let answer =
                    !ended.answered.is_empty() || ended.whole.as_deref().is_some_and(is_answer);
                if !answer {
                    return failed(gateway, shaping, sent.failure(UpstreamFailure::NotJson));
                }
                owed.answered(&ended.answered);
                let answers =
                    shaping.settle(owed.end(End::Ended, false), gateway.upstream.address());
                let body = with_answers(sink.take_bytes(), answers);
                return Response::from_parts(head, full(body));
            }
        }
    }
    let (sender, channel) = body_channel::channel();
    let upstream = gateway.upstream.clone();
    let shaping = Arc::clone(shaping);
    let owed = sent.owed();
    tokio::spawn(async move {
        let _ = stream_body(
            &upstream,
            &shaping,
            body,
            wait,
            (shaped, sink),
            owed,
            sender,
        )
        .await;
    });
    Response::from_parts(head, fallible(channel))
}

/// The rest of a long JSON body, shaped into `sender` as it arrives. When the server
/// breaks off before anything was sent, the requests' errors are the body instead;
/// after a part of it was sent (passing as it came), the body is aborted: no error can
/// follow it in one JSON body, and it must not end as a whole one would (B5). A body
/// that ends leaving requests of `owed` unanswered (a server's answer to another id)
/// went as it came: no error can be added to it, and they are not pending any more.
async fn stream_body(
    upstream: &Upstream,
    shaping: &Shaping,
    mut body: Incoming,
    wait: Wait,
    (mut shaped, mut sink): (BodyShaper, QueueSink),
    mut owed: Owed<UpstreamFailure>,
    mut sender: BodySender,
) -> Result<(), ClientGone> {
    loop {
        send_queued(&mut sink, &mut sender).await?;
        match upstream.next_data(&mut body, wait).await {
            Ok(Some(data)) => shaping.shape(|shaper| shaped.push(shaper, &data, &mut sink)),
            Ok(None) => break,
            Err(failure) => {
                // The requests are answered here or not at all: none stays pending.
                let verdict = owed.end(UpstreamFailure::end(Some(failure)), false);
                let answers = shaping.settle(verdict, upstream.address());
                if sink.sent_some() {
                    return sender.abort().await;
                }
                if !answers.is_empty() {
                    sender
                        .send_data(Bytes::from(one_json_text(answers)))
                        .await?;
                }
                return Ok(());
            }
        }
    }
    let ended = shaping.shape(|shaper| shaped.end(shaper, &mut sink));
    owed.answered(&ended.answered);
    let unanswered = shaping.settle(owed.end(End::Ended, false), upstream.address());
    if !unanswered.is_empty() {
        tracing::warn!(
            requests = unanswered.len(),
            "a long JSON body the server sent left requests unanswered: it went as it \
             came, and their errors cannot follow it"
        );
    }
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
/// ends, each request of `owed` it did not answer gets an error event — unless the
/// server closed a stream the client may resume (an event of it had an id,
/// SEP-1699): that close is passed on as it came, and the answers come on the
/// client's GET with `Last-Event-ID`, shaped there ([`super::resumption`], B5).
pub(super) async fn stream_events(
    upstream: &Upstream,
    shaping: &Shaping,
    body: &mut Incoming,
    mut owed: Owed<UpstreamFailure>,
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
            if let Some(message) = event.message {
                owed.answered(&message.answered);
            }
        }
        send_queued(&mut sink, &mut sender).await?;
    };
    // An event cut off by the end of the stream is sent on as it came, unless error
    // events follow: a client would join them to it (and drops it at the end anyway).
    // One already on its way is ended first.
    let requests = owed.ids().len();
    let verdict = owed.end(UpstreamFailure::end(ended), stream.is_resumable());
    let keep_cut_off = !matches!(verdict, Verdict::Answer { .. });
    if shaping.shape(|shaper| events.finish(shaper, keep_cut_off, &mut sink)) {
        sink.send(b"\n\n");
    }
    send_queued(&mut sink, &mut sender).await?;
    if verdict == Verdict::Resume {
        tracing::debug!(
            requests,
            "the server closed a resumable stream before answering: passed on for the \
             client to resume (SEP-1699)"
        );
    }
    for answer in shaping.settle(verdict, upstream.address()) {
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(&answer);
        event.extend_from_slice(b"\n\n");
        sender.send_data(Bytes::from(event)).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b5_the_errors_of_requests_a_body_left_unanswered_follow_its_messages() {
        let error = br#"{"id":2,"error":{}}"#.to_vec();
        let cases: [(&[u8], &[u8]); 4] = [
            (br#"{"id":9}"#, br#"[{"id":9},{"id":2,"error":{}}]"#),
            (br#" [{"id":1}] "#, br#"[{"id":1},{"id":2,"error":{}}]"#),
            (b"[ ]", br#"[{"id":2,"error":{}}]"#),
            (
                b"\n{\"id\":\"\xff\"}\n",
                b"[{\"id\":\"\xff\"},{\"id\":2,\"error\":{}}]",
            ),
        ];
        for (body, joined) in cases {
            let got = with_answers(body.to_vec(), vec![error.clone()]);
            assert_eq!(got, joined, "{}", String::from_utf8_lossy(body));
        }
        let two = with_answers(b"{}".to_vec(), vec![error.clone(), error.clone()]);
        assert_eq!(two, br#"[{},{"id":2,"error":{}},{"id":2,"error":{}}]"#);
        let body = br#"{"id":1,"result":{}}"#.to_vec();
        assert_eq!(
            with_answers(body.clone(), Vec::new()),
            body,
            "none: as it came"
        );
    }
}
