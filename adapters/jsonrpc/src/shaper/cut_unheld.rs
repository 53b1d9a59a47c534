//! An answer cut without being held (SPEC B3, B4): the result of a pending
//! `tools/call`, already over the cap, is not kept whole on its way — a
//! [`Scan`](crate::scan::Scan) holds what the cut keeps, and at its end the core cuts
//! from that. What the kept parts cannot decide (the answer turned out not to be JSON,
//! or not a tool result) is answered with a JSON-RPC error for its id that says why and
//! how many bytes were dropped: its bytes were never kept, so they cannot be sent as
//! they came.
//!
//! ```
//! use backstop_core::Limit;
//! use backstop_jsonrpc::{Forward, Shaper, scan::Scan};
//! let now = std::time::Instant::now();
//! let mut shaper = Shaper::new(Limit::new(1_000).unwrap());
//! shaper.client_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logs"}}"#);
//! let mut scan = Scan::new(1_000);
//! scan.push(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#);
//! let past_hold = Some(2_000);
//! assert!(matches!(shaper.server_head(&scan, past_hold), backstop_core::machine::Disposition::CutUnheld(_)));
//! scan.push(&b"x".repeat(2 << 20));
//! scan.push(br#"\u0000"}]}}"#);
//! let route = shaper.cut_unheld(now, &scan.finish(), 2_097_222);
//! let Some(Forward::Rewritten(cut)) = route.forward else { panic!() };
//! assert!(cut.len() < 1_100, "the result cut to the cap, in its envelope");
//! ```

use std::time::Instant;

use backstop_core::ProtocolError;
use backstop_core::machine::{Answer, Disposition, ServerHead};
use backstop_core::protocol::code::INTERNAL_ERROR;
use backstop_core::{ToolResult, machine};
use serde_json::value::RawValue;

use super::{Forward, Route, Shaper, forward};
use crate::message::{Envelope, RequestId};
use crate::scan::Scanned;

impl Shaper {
    /// What to send for an answer [`server_head`](Self::server_head) said to cut
    /// ([`Disposition::CutUnheld`]), from
    /// what the scan held of it (`bytes` long in all): the cut, or an error for its id
    /// ([`unheld_answer_error`]) when it is not JSON or the kept parts cannot decide
    /// the cut. Nothing, when its request is no longer waiting for it (cancelled
    /// since, or answered already): at most one answer per id. The server messages
    /// that wait for backstop's listing go first, in the order they came (B1).
    pub fn cut_unheld(&mut self, now: Instant, scanned: &Scanned, bytes: u64) -> Route {
        let route = self.cut_unheld_alone(now, scanned, bytes);
        self.after_waiting(now, route)
    }

    fn cut_unheld_alone(&mut self, now: Instant, scanned: &Scanned, bytes: u64) -> Route {
        let id_json = scanned.id.as_deref().map(String::from_utf8_lossy);
        let Some(id_json) = id_json else {
            return Route::default();
        };
        let id = serde_json::from_str::<&RawValue>(&id_json)
            .ok()
            .and_then(RequestId::from_raw)
            .map(machine::RequestId::from);
        let Some(id) = &id else {
            return Route::default();
        };
        let head = ServerHead {
            id: Some(id),
            result: true,
            ended: true,
            ..ServerHead::default()
        };
        // Its bytes were not kept: an answer that needs nothing now (its request
        // cancelled since, or answered already) cannot pass, and gets nothing.
        match self.machine.server_head(head) {
            Disposition::Pass | Disposition::Drop => return Route::default(),
            Disposition::Read(_) | Disposition::CutUnheld(_) => {}
        }
        if !scanned.invalid && !scanned.dropped && scanned.holes.is_empty() {
            // Held whole after all (its strings short): the skeleton is the message.
            let mut route = self.route_server_message(now, &scanned.skeleton);
            if route.forward == Some(Forward::Unchanged) {
                route.forward = Some(Forward::Rewritten(scanned.skeleton.clone()));
            }
            return route;
        }
        let why = match self.cut_in_part(scanned, &id_json) {
            Ok(route) => return route,
            Err(why) => why,
        };
        let error = unheld_answer_error(bytes, self.machine.limit().max_bytes(), &why);
        Route {
            to_client: self.answer_requests(&[id_json.into_owned()], &error),
            ..Route::default()
        }
    }

    /// The cut of an answer from what the scan held, or why there is none.
    fn cut_in_part(&mut self, scanned: &Scanned, id_json: &str) -> Result<Route, String> {
        if let Some(broken) = scanned.broken {
            return Err(format!(
                "it stopped being JSON at byte {}: {}",
                broken.at, broken.why
            ));
        }
        if scanned.method.is_some() {
            return Err("it names a method, as a request does".into());
        }
        if scanned.overflowed {
            return Err("it is not a tool result a cut can read in part (its structure alone is over 8 MiB)".into());
        }
        if scanned.dropped {
            return Err("it holds a long string outside its content and structuredContent, which a cut cannot keep in part".into());
        }
        let envelope = scanned
            .envelope()
            .filter(Envelope::is_response)
            .ok_or("it is not JSON (outside its strings) or not a JSON-RPC answer")?;
        let id = envelope
            .request_id()
            .map(machine::RequestId::from)
            .ok_or("its id is not one a request can have")?;
        let result = envelope
            .result
            .ok_or("its result is null")?
            .to_value()
            .ok_or("its result is not JSON")?;
        let result = ToolResult::from_value(result)
            .map_err(|error| format!("its result is not a tool result ({error})"))?;
        let answer = scanned
            .held_in_part(&result)
            .and_then(|held| self.machine.server_result_in_part(&id, result, &held))
            .ok_or("a cut cannot be made from the parts of it that were kept")?;
        match answer {
            Answer::Unchanged => {
                Err("once read it fits the cap, but its bytes were not kept".into())
            }
            answer => Ok(Route::forward(forward(answer, id_json))),
        }
    }
}

/// The error that answers a request whose answer, `bytes` long and cut without being
/// held to a cap of `max_bytes`, could not be cut: `why` (B4).
///
/// ```
/// let error = backstop_jsonrpc::shaper::unheld_answer_error(5_000_000, 1_000_000, "it stopped being JSON at byte 70: bytes that are not UTF-8");
/// assert_eq!(error.code, -32603);
/// assert_eq!(error.message, "backstop dropped the MCP server's answer to this tools/call (5000000 bytes, cut to the 1000000-byte cap as it came, none of it sent): it stopped being JSON at byte 70: bytes that are not UTF-8");
/// ```
pub fn unheld_answer_error(bytes: u64, max_bytes: usize, why: &str) -> ProtocolError {
    ProtocolError::new(
        INTERNAL_ERROR,
        format!(
            "backstop dropped the MCP server's answer to this tools/call ({bytes} bytes, cut \
             to the {max_bytes}-byte cap as it came, none of it sent): {why}"
        ),
    )
}
