//! `backstop gateway` (SPEC A5): Streamable HTTP on both sides, every JSON-RPC
//! message shaped on its way back.
//!
//! - `POST`: the body (at most [`Gateway::max_body`] bytes, else `413`) is shown to the
//!   session's shaper and sent on as it came; the answer — a JSON body, or an SSE
//!   stream whose events are shaped one by one as they arrive — comes back with the
//!   server's status and headers (hop-by-hop ones dropped, [`super::headers`]). A long
//!   body or event is shaped as it arrives, in memory bounded by the cap
//!   ([`super::shape`], B3): a JSON body past 4 MiB is streamed once its head is sent.
//! - E8 from the first call: a `tools/call` in a session whose tool catalog is not
//!   complete yet is preceded by the shaper's own `tools/list`, sent with the client's
//!   end-to-end headers (its session, revision, `Authorization`) and read before the
//!   call goes on ([`super::listing`]); a listing that fails is given up and never
//!   fails the call. A stateless request's shaper, which lives for that request,
//!   starts from the listing kept for its credential, and lists only when there is
//!   none or it went stale (R5, [`super::stateless_catalogs`]).
//! - `GET` (the server's own stream) and `DELETE` pass the same way; a `DELETE` the
//!   server accepts ends the session's state. Other methods pass untouched.
//! - Sessions: a shaper per `Mcp-Session-Id`, made when the server's answer to an
//!   `initialize` names the id, or on first sight of an id this gateway did not see
//!   begin (another gateway behind the same balancer began it: any gateway in front of
//!   the same server can carry any session, it only lacks the tool list until the
//!   client lists again). At most [`Gateway::max_sessions`] are kept (the least
//!   recently used goes first) and each expires after [`Gateway::session_idle`]
//!   without a request. A request without a session id (2026-07-28, stateless) gets a
//!   shaper of its own for that one request: no state outlives it.
//! - Failures: an upstream that cannot be reached, breaks the connection, times out,
//!   answers `5xx` or with a body that is not JSON answers each request of the POST
//!   with a JSON-RPC error naming the cause and the server's address
//!   ([`super::upstream::UpstreamFailure`]): a `200` JSON body, or, once an SSE
//!   stream has begun, one more event per request it left unanswered. A `5xx` whose
//!   body is the server's own JSON-RPC answer is that answer, shaped, on a `200`,
//!   the requests it left unanswered getting the status's error; a JSON body that
//!   ends without answering a request is followed by its error (one batch). Which
//!   requests are owed an error, and which, is [`backstop_jsonrpc::owed`]'s rule. A
//!   failed POST's requests are no longer pending in the session's shaper. A `4xx` is
//!   the client's to act on (authentication, an expired session) and passes as it
//!   came.
//! - Security: a request whose `Host` or `Origin` the gateway does not serve is
//!   answered `403` before anything else and never reaches the server (DNS
//!   rebinding, [`origin_guard`](super::origin_guard): loopback names only when listening on loopback,
//!   else [`Gateway::allowed`]); the client's `Host` goes on as `X-Forwarded-Host`.
//!   No CORS header is added, `Origin` and `Authorization` pass untouched, no header
//!   value is logged.
//! - Connections: at most [`Gateway::max_connections`] open at once; past it the
//!   oldest that has not sent a request head yet is closed for the new one, or, when
//!   all are serving, the new one is refused with `503` ([`super::connections`]).
//!
//! This file holds the serve loop; the [`Gateway`] type, its bounds and its sessions
//! are in `gateway_sessions` (re-exported here), one request's handling in
//! `gateway_request`, and the bodies of the answers in `gateway_body`.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::connections::{Connections, REFUSAL};
use super::gateway_request::handle;

pub use super::gateway_sessions::{
    DEFAULT_MAX_BODY, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, Gateway,
};

/// Serve `gateway` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, gateway: Arc<Gateway>) -> io::Result<()> {
    // Whether the listening address is a loopback one sets the `Host`/`Origin` rules.
    let listen = listener.local_addr()?.ip();
    let sweeper = Arc::clone(&gateway);
    tokio::spawn(async move {
        let every = (sweeper.session_idle / 4).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            sweeper.expire();
        }
    });
    let connections = Arc::new(Connections::new(gateway.max_connections));
    loop {
        let (mut stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors, a connection reset before it was taken: keep serving.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Some(admission) = connections.admit() else {
            tracing::warn!(
                max = gateway.max_connections,
                "a client connection refused with 503: every connection is serving"
            );
            tokio::spawn(async move {
                let _ = stream.write_all(REFUSAL).await;
                let _ = stream.shutdown().await;
            });
            continue;
        };
        let gateway = Arc::clone(&gateway);
        tokio::spawn(async move {
            let admission = Arc::new(admission);
            let serving = Arc::clone(&admission);
            let service = service_fn(move |request| {
                let serving = serving.serve();
                let gateway = Arc::clone(&gateway);
                async move {
                    let response = handle(&gateway, listen, request).await;
                    Ok::<_, Infallible>(response.map(|body| serving.body(body)))
                }
            });
            // A client that never finishes its headers does not hold a connection
            // forever, nor past a newer connection's need of its place.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(30))
                .serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = admission.evicted() => {}
            }
            // Its place was taken while it was not serving: closed at once — unless a
            // request reached the service since, which is answered first. (The service
            // runs inside `connection`, not polled meanwhile: this read is the last.)
            if admission.is_serving() {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        });
    }
}

/// Bind `listen` and serve `gateway` on a runtime of its own; returns only on error.
pub fn run(listen: SocketAddr, gateway: Gateway, quiet: bool) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(listen).await?;
        if !quiet {
            eprintln!(
                "backstop gateway: listening on http://{}, upstream {}",
                listener.local_addr()?,
                gateway.upstream.address()
            );
        }
        serve(listener, Arc::new(gateway)).await
    })
}
