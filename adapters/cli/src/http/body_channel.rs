//! A response body the gateway writes from a task of its own, whose writing half
//! learns when the client is gone — even while it has nothing to send. A quiet stream
//! (the server's `GET` stream, a `subscriptions/listen`) is then closed upstream as
//! soon as its client leaves, not kept open until the server next speaks: the server
//! would otherwise refuse the client's next `GET` for its session with `409` (one
//! stream per session), and the gateway's upstream connections would pile up.
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

use std::convert::Infallible;
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
    sender: mpsc::Sender<Bytes>,
}

/// The client is gone: the body will not be read any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientGone;

impl BodySender {
    /// Send `bytes` once the client has room for them.
    pub async fn send_data(&mut self, bytes: Bytes) -> Result<(), ClientGone> {
        self.sender.send(bytes).await.map_err(|_| ClientGone)
    }

    /// Done when the client is gone (the body dropped), whether or not anything is
    /// being sent.
    pub async fn closed(&self) {
        self.sender.closed().await;
    }
}

/// A response body written by a [`BodySender`]; it ends when the sender is dropped.
#[derive(Debug)]
pub struct ChannelBody {
    receiver: mpsc::Receiver<Bytes>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.receiver
            .poll_recv(context)
            .map(|bytes| bytes.map(|bytes| Ok(Frame::data(bytes))))
    }
}
