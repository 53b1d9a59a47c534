//! SPEC P1, A0: a failure whose type says nothing gets its family from its message —
//! the same family, and on `resources/*` the same code, whether an adapter sees it as
//! an exception (the Python binding: `foreign_error::classify`) or as a JSON-RPC error
//! a server already sent (the shaper and rmcp: `shape_request_error`).

use backstop_core::call::shape_request_error;
use backstop_core::call::{ForeignError, classify};
use backstop_core::{
    Failure, ProtocolError,
    call::Family,
    protocol::{Revision, Session},
};
use proptest::prelude::*;

/// fastmcp's generic resource error, as the Python binding describes it.
fn resource_error(message: &str) -> ForeignError {
    ForeignError {
        type_name: "ResourceError".into(),
        ancestors: [
            "ResourceError",
            "FastMCPError",
            "Exception",
            "BaseException",
            "object",
        ]
        .map(String::from)
        .to_vec(),
        message: message.into(),
        ..ForeignError::default()
    }
}

fn session(revision: Revision) -> Session {
    Session {
        revision: Some(revision),
        ..Session::default()
    }
}

#[test]
fn session_not_found_is_resource_not_found_on_every_path() {
    let uri = "tmux://sessions/missing";
    for revision in Revision::ALL {
        let raised = classify(&resource_error("Session not found: missing"));
        assert_eq!(raised.family(), Family::NotFound);
        let from_exception =
            ProtocolError::from_failure(&raised, "resources/read", revision, Some(uri));
        let sent = ProtocolError::new(-32603, "Session not found: missing");
        let from_server =
            shape_request_error(&sent, "resources/read", &session(revision), Some(uri)).error;
        assert_eq!(from_exception, from_server, "{revision}");
        assert_eq!(from_server.code, revision.resource_not_found_code());
        assert_eq!(
            from_server.message,
            "Resource not found: Session not found: missing"
        );
        assert_eq!(from_server.data.unwrap()["uri"], uri);
    }
}

#[test]
fn a_message_that_says_nothing_stays_internal_and_passes_unchanged() {
    let raised = classify(&resource_error("tmux server is gone"));
    assert_eq!(raised.family(), Family::Internal);
    let sent = ProtocolError::new(-32603, "tmux server is gone");
    let shaped = shape_request_error(&sent, "resources/read", &Session::default(), Some("x"));
    assert_eq!(shaped.error, sent, "P2");
}

#[test]
fn a_code_that_says_a_family_wins_over_the_message() {
    let sent = ProtocolError::new(-32602, "Session not found: bad cursor");
    assert_eq!(
        Failure::from_protocol_error(&sent).family(),
        Family::InvalidParams
    );
}

/// First clauses built of words that do and do not name a family.
fn message() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "Session",
        "not",
        "found",
        "no",
        "such",
        "file",
        "does",
        "exist",
        "Permission",
        "denied",
        "Access",
        "forbidden",
        "timed",
        "out",
        "timeout",
        "boom",
        "Internal",
        "error:",
        "Not",
        "found:",
        "x",
    ]);
    (
        prop::collection::vec(word, 0..6),
        prop::option::of("[a-z%0-9 ]{0,12}"),
    )
        .prop_map(|(words, rest)| match rest {
            Some(rest) => format!("{}: {rest}", words.join(" ")),
            None => words.join(" "),
        })
}

proptest! {
    /// The family a message says is the same through both paths, whatever it says.
    #[test]
    fn the_same_message_gives_the_same_family(message in message()) {
        let raised = classify(&resource_error(&message));
        let sent = Failure::from_protocol_error(&ProtocolError::new(-32603, message.clone()));
        prop_assume!(!sent.is_validation());
        prop_assert_eq!(raised.family(), sent.family(), "{}", message);
        // And where it is not-found, the same answer on resources/read.
        if raised.family() == Family::NotFound {
            let uri = Some("probe://x");
            for revision in Revision::ALL {
                let from_exception = ProtocolError::from_failure(&raised, "resources/read", revision, uri);
                let from_server = shape_request_error(
                    &ProtocolError::new(-32603, message.clone()), "resources/read", &session(revision), uri);
                prop_assert_eq!(&from_exception, &from_server.error);
            }
        }
    }
}

#[test]
fn a_stock_prefix_is_not_said_twice_on_either_path() {
    // Found by the proptest below: an exception's "Not found: Session" kept its prefix,
    // the same words sent as a server's error did not.
    let message = "Not found: Session";
    let raised = classify(&resource_error(message));
    for revision in Revision::ALL {
        let uri = Some("probe://x");
        let from_exception = ProtocolError::from_failure(&raised, "resources/read", revision, uri);
        let sent = ProtocolError::new(-32603, message);
        let from_server = shape_request_error(&sent, "resources/read", &session(revision), uri);
        assert_eq!(from_exception, from_server.error, "{revision}");
        assert_eq!(from_exception.message, "Resource not found: Session");
    }
}
