//! A response body the gateway writes from a task of its own, whose writing half
//! learns when the client is gone — even while it has nothing to send. A quiet stream
//! (the server's `GET` stream, a `subscriptions/listen`) is then closed upstream as
//! soon as its client leaves, not kept open until the server next speaks: the server
//! would otherwise refuse the client's next `GET` for its session with `409` (one
//! stream per session), and the gateway's upstream connections would pile up.
//!
//! A body can also be [aborted](BodySender::abort): one the upstream broke off after a
//! part of it went to the client is not ended as a whole body would be, so that the
//! client's HTTP stack sees it was cut off (SPEC B5).
//!
//! ```
//! use backstop::http::body_channel;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let (mut sender, body) = body_channel::channel();
//! sender.send_data("event".into()).await.unwrap();
//! drop(body); // the client went away
//! sender.closed().await;
//! assert!(sender.send_data("more".into()).await.is_err());
//! # });
//! ```

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};
use tokio::sync::mpsc;

/// How many pieces may wait for the client.
const WAITING: usize = 8;

/// A body and the sender that writes it.
pub fn channel() -> (BodySender, ChannelBody) {
    let (sender, receiver) = mpsc::channel(WAITING);
    (BodySender { sender }, ChannelBody { receiver })
}

/// The writing half of a [`ChannelBody`].
#[derive(Debug, Clone)]
pub struct BodySender {
    sender: mpsc::Sender<Piece>,
}

/// What the sender hands the body.
#[derive(Debug)]
enum Piece {
    Data(Bytes),
    Abort,
}

/// The error a [`ChannelBody`] ends with when its sender [aborted](BodySender::abort)
/// it: the body was cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted;

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the body was cut off: the MCP server broke off its answer")
    }
}

impl std::error::Error for Aborted {}

/// The client is gone: the body will not be read any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientGone;

impl BodySender {
    /// Send `bytes` once the client has room for them.
    pub async fn send_data(&mut self, bytes: Bytes) -> Result<(), ClientGone> {
        self.sender
            .send(Piece::Data(bytes))
            .await
            .map_err(|_| ClientGone)
    }

    /// End the body with an error ([`Aborted`]) after what was sent, instead of as a
    /// whole body: its client's connection is closed without the body's end.
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use backstop::http::body_channel;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (mut sender, body) = body_channel::channel();
    /// sender.send_data("half".into()).await.unwrap();
    /// sender.abort().await.unwrap();
    /// assert_eq!(body.collect().await.unwrap_err(), body_channel::Aborted);
    /// # });
    /// ```
    pub async fn abort(self) -> Result<(), ClientGone> {
        self.sender.send(Piece::Abort).await.map_err(|_| ClientGone)
    }

    /// Done when the client is gone (the body dropped), whether or not anything is
    /// being sent.
    pub async fn closed(&self) {
        self.sender.closed().await;
    }
}

/// A response body written by a [`BodySender`]; it ends when the sender is dropped,
/// or with [`Aborted`] when it aborts it.
#[derive(Debug)]
pub struct ChannelBody {
    receiver: mpsc::Receiver<Piece>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Aborted;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Aborted>>> {
        self.receiver.poll_recv(context).map(|piece| {
            piece.map(|piece| match piece {
                Piece::Data(bytes) => Ok(Frame::data(bytes)),
                Piece::Abort => Err(Aborted),
            })
        })
    }
}
