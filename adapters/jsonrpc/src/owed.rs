//! Which requests are still owed an answer when the stream that was to carry their
//! answers ends, and why (SPEC B5: every request gets exactly one answer): the one rule
//! both of `backstop`'s remote fronts keep for the server's answer to a POST — a JSON
//! body or an SSE stream, whatever its status.
//!
//! [`Owed`] holds the raw JSON ids of the requests one message (or batch) carried.
//! Each message of the answer strikes the ids it answered ([`Owed::answered`]); when
//! the answer ends, [`Owed::end`] says what becomes of the rest ([`Verdict`]):
//!
//! - none left: [`Verdict::Settled`];
//! - the server closed (ended or broke off) a stream that may be resumed (an event of
//!   it had an id, SEP-1699): [`Verdict::Resume`], still owed — the answers may come
//!   on the resumed stream, and no error is made up while resuming is possible;
//! - else [`Verdict::Answer`]: one error each, for the error status the answer came
//!   with when it had one (whatever else went wrong after), else for the failure it
//!   ended with (a timeout, a body that is no JSON-RPC answer), else because the server
//!   closed it before answering them ([`Cause::ClosedEarly`]). Nothing is owed after:
//!   a second end answers nothing.
//!
//! An answer the client's transport carries itself is no matter for this rule: a
//! `202 Accepted` (the answers come on another stream), an HTTP error status passed
//! to an HTTP client as it came. What a failure is (`F`) is the transport's.
//!
//! ```
//! use backstop_jsonrpc::owed::{Cause, End, Owed, Verdict};
//! let mut owed = Owed::<&str>::new(vec!["1".into(), "2".into()]);
//! owed.answered(&["2".to_owned()]);
//! assert_eq!(
//!     owed.end(End::Ended, false),
//!     Verdict::Answer { ids: vec!["1".into()], cause: Cause::ClosedEarly }
//! );
//! assert_eq!(owed.end(End::Ended, false), Verdict::Settled, "never twice");
//! ```

/// How an answer (a body, an SSE stream) stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End<F> {
    /// It came to its end.
    Ended,
    /// It broke off before its end: the connection closed under it.
    BrokenOff,
    /// It was given up, or what came was no answer: `F` says why (a timeout, a body
    /// that is not JSON-RPC).
    Failed(F),
}

impl<F> End<F> {
    /// Whether the server closed the answer — at its end, or broken off — which a
    /// client may resume; a failure is backstop's own decision to stop.
    ///
    /// ```
    /// use backstop_jsonrpc::owed::End;
    /// assert!(End::<()>::Ended.is_close() && End::<()>::BrokenOff.is_close());
    /// assert!(!End::Failed("timeout").is_close());
    /// ```
    pub fn is_close(&self) -> bool {
        matches!(self, Self::Ended | Self::BrokenOff)
    }
}

/// Why the requests still owed are answered with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause<F> {
    /// The error status the answer came with, or the failure it ended with.
    Failure(F),
    /// The server closed the answer (ended it, or broke it off) before answering them.
    ClosedEarly,
}

/// What becomes of the requests still owed when their answer ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<F> {
    /// Nothing is owed.
    Settled,
    /// A resumable stream was closed by the server: the requests are still owed, and
    /// their answers may come on the resumed stream (SEP-1699).
    Resume,
    /// Answer each of `ids` with one error for `cause`; they are owed nothing more.
    Answer {
        /// The raw JSON ids, in the order the client sent them.
        ids: Vec<String>,
        /// Why.
        cause: Cause<F>,
    },
}

/// The requests of one client message or batch not answered yet (see the [module
/// docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owed<F> {
    /// Raw JSON ids, in the order sent; one entry per request (a batch that repeats an
    /// id is owed an answer per request).
    ids: Vec<String>,
    /// The error status the answer came with.
    status: Option<F>,
}

impl<F> Default for Owed<F> {
    fn default() -> Self {
        Self {
            ids: Vec::new(),
            status: None,
        }
    }
}

impl<F> Owed<F> {
    /// The requests `ids` (raw JSON, as the client wrote them), each owed one answer.
    pub fn new(ids: Vec<String>) -> Self {
        Self { ids, status: None }
    }

    /// The same, their answer come with an error status (`status`): the cause of every
    /// error this answer leaves to make, however it ends.
    ///
    /// ```
    /// use backstop_jsonrpc::owed::{Cause, End, Owed, Verdict};
    /// let mut owed = Owed::new(vec!["1".into()]).with_error_status("HTTP 500");
    /// let verdict = owed.end(End::Failed("not JSON"), true);
    /// assert_eq!(verdict, Verdict::Answer { ids: vec!["1".into()], cause: Cause::Failure("HTTP 500") });
    /// ```
    pub fn with_error_status(mut self, status: F) -> Self {
        self.status = Some(status);
        self
    }

    /// A message of the answer answered the requests `answered` (raw JSON ids): each
    /// settles one request of its id, if one is owed.
    ///
    /// ```
    /// let mut owed = backstop_jsonrpc::owed::Owed::<()>::new(vec!["1".into(), "\"a\"".into()]);
    /// owed.answered(&["\"a\"".to_owned(), "9".to_owned()]);
    /// assert_eq!(owed.ids(), ["1"]);
    /// ```
    pub fn answered(&mut self, answered: &[String]) {
        for id in answered {
            if let Some(at) = self.ids.iter().position(|owed| owed == id) {
                self.ids.remove(at);
            }
        }
    }

    /// The raw JSON ids still owed, in the order sent.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Whether nothing is owed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The answer ended as `end` says, on a stream that may be resumed when
    /// `resumable` (an event of it had an id): what becomes of the requests still owed
    /// (see the [module docs](self)). After [`Verdict::Answer`] nothing is owed; after
    /// [`Verdict::Resume`] the same requests are, for the resumed stream's answers and
    /// its own end.
    pub fn end(&mut self, end: End<F>, resumable: bool) -> Verdict<F> {
        if self.ids.is_empty() {
            return Verdict::Settled;
        }
        let cause = match (self.status.take(), end) {
            (Some(status), _) => Cause::Failure(status),
            (None, end) if resumable && end.is_close() => return Verdict::Resume,
            (None, End::Failed(failure)) => Cause::Failure(failure),
            (None, End::Ended | End::BrokenOff) => Cause::ClosedEarly,
        };
        Verdict::Answer {
            ids: std::mem::take(&mut self.ids),
            cause,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    fn owed(ids: &[&str]) -> Owed<&'static str> {
        Owed::new(ids.iter().map(|id| id.to_string()).collect())
    }

    fn answer(ids: &[&str], cause: Cause<&'static str>) -> Verdict<&'static str> {
        Verdict::Answer {
            ids: ids.iter().map(|id| id.to_string()).collect(),
            cause,
        }
    }

    #[test]
    fn b5_each_way_an_answer_ends_has_its_cause() {
        let cases = [
            (End::Ended, Cause::ClosedEarly),
            (End::BrokenOff, Cause::ClosedEarly),
            (End::Failed("timeout"), Cause::Failure("timeout")),
        ];
        for (end, cause) in cases {
            assert_eq!(owed(&["1"]).end(end, false), answer(&["1"], cause));
        }
    }

    #[test]
    fn b5_an_error_status_is_the_cause_whatever_else_ends_the_answer() {
        for end in [End::Ended, End::BrokenOff, End::Failed("timeout")] {
            for resumable in [false, true] {
                let mut owed = owed(&["1", "2"]).with_error_status("HTTP 500");
                owed.answered(&["1".to_owned()]);
                assert_eq!(
                    owed.end(end.clone(), resumable),
                    answer(&["2"], Cause::Failure("HTTP 500"))
                );
            }
        }
    }

    #[test]
    fn b5_only_a_close_by_the_server_of_a_resumable_stream_is_resumed() {
        assert_eq!(owed(&["1"]).end(End::Ended, true), Verdict::Resume);
        assert_eq!(owed(&["1"]).end(End::BrokenOff, true), Verdict::Resume);
        assert_eq!(
            owed(&["1"]).end(End::Failed("timeout"), true),
            answer(&["1"], Cause::Failure("timeout")),
            "a timeout is backstop's own: answered, not resumed"
        );
        // Resumed, the same requests are owed: the resumed stream answers one, and its
        // end (not resumable any more) answers the other.
        let mut owed = owed(&["1", "2"]);
        assert_eq!(owed.end(End::Ended, true), Verdict::Resume);
        assert_eq!(owed.ids(), ["1", "2"]);
        owed.answered(&["1".to_owned()]);
        assert_eq!(
            owed.end(End::Failed("refused"), false),
            answer(&["2"], Cause::Failure("refused"))
        );
    }

    #[test]
    fn b5_nothing_owed_is_settled_and_nothing_is_answered_twice() {
        assert_eq!(owed(&[]).end(End::Failed("x"), false), Verdict::Settled);
        let mut all = owed(&["1"]);
        all.answered(&["1".to_owned()]);
        assert_eq!(all.end(End::Ended, false), Verdict::Settled);
        let mut once = owed(&["1"]);
        assert_eq!(
            once.end(End::BrokenOff, false),
            answer(&["1"], Cause::ClosedEarly)
        );
        assert_eq!(once.end(End::BrokenOff, false), Verdict::Settled);
        assert!(once.is_empty());
    }

    #[test]
    fn b5_an_answer_settles_one_request_of_its_id_and_no_other() {
        let mut owed = owed(&["1", "1", "\"1\""]);
        owed.answered(&["1".to_owned(), "2".to_owned()]);
        assert_eq!(owed.ids(), ["1", "\"1\""], "a string id is another id");
        assert_eq!(
            owed.end(End::Ended, false),
            answer(&["1", "\"1\""], Cause::ClosedEarly)
        );
    }

    /// One step of the server's answer to a POST, as the proptest plays it.
    #[derive(Debug, Clone)]
    enum Step {
        /// A message answering these ids (posted or not).
        Answers(Vec<u8>),
        /// The stream stopped so, resumable or not.
        Stops(u8, bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => proptest::collection::vec(0u8..6, 0..3).prop_map(Step::Answers),
            1 => (0u8..3, any::<bool>()).prop_map(|(end, resumable)| Step::Stops(end, resumable)),
        ]
    }

    fn end_of(code: u8) -> End<&'static str> {
        match code {
            0 => End::Ended,
            1 => End::BrokenOff,
            _ => End::Failed("timeout"),
        }
    }

    /// Check one verdict of the proptest and count the errors it makes: whether the
    /// requests are settled (nothing owed any more).
    fn settle(
        verdict: Verdict<&'static str>,
        status: bool,
        answers: &mut HashMap<String, usize>,
        outstanding: &mut HashMap<String, usize>,
    ) -> Result<bool, TestCaseError> {
        match verdict {
            Verdict::Settled => {
                prop_assert!(outstanding.values().all(|n| *n == 0));
                Ok(true)
            }
            Verdict::Resume => {
                prop_assert!(!status, "an error status is never resumed");
                prop_assert!(outstanding.values().any(|n| *n > 0));
                Ok(false)
            }
            Verdict::Answer { ids, cause } => {
                if status {
                    prop_assert_eq!(cause, Cause::Failure("HTTP 500"));
                }
                for id in ids {
                    let Some(left) = outstanding.get_mut(&id).filter(|n| **n > 0) else {
                        return Err(TestCaseError::fail(format!("{id}: not owed")));
                    };
                    *left -= 1;
                    *answers.entry(id).or_default() += 1;
                }
                prop_assert!(outstanding.values().all(|n| *n == 0));
                Ok(true)
            }
        }
    }

    proptest! {
        /// B5: whatever the interleaving of answers (of posted ids, of others, of ids
        /// already answered) and ends (resumed any number of times, then not), every
        /// posted request gets exactly one answer: the server's or one error, never
        /// both, never two errors; an error only for a posted id, only when the
        /// stream is not resumed, and for the status when there was one.
        #[test]
        fn b5_every_posted_request_is_answered_exactly_once(
            posted in proptest::collection::vec(0u8..4, 0..6),
            steps in proptest::collection::vec(step(), 0..12),
            status in any::<bool>(),
        ) {
            let ids: Vec<String> = posted.iter().map(u8::to_string).collect();
            let mut owed = Owed::new(ids.clone());
            if status {
                owed = owed.with_error_status("HTTP 500");
            }
            let mut outstanding: HashMap<String, usize> = HashMap::new();
            for id in &ids {
                *outstanding.entry(id.clone()).or_default() += 1;
            }
            let mut answers: HashMap<String, usize> = HashMap::new();
            let mut ended = false;
            for step in steps {
                match step {
                    Step::Answers(answered) => {
                        let answered: Vec<String> = answered.iter().map(u8::to_string).collect();
                        owed.answered(&answered);
                        if !ended {
                            for id in answered {
                                if let Some(left) = outstanding.get_mut(&id).filter(|n| **n > 0) {
                                    *left -= 1;
                                    *answers.entry(id).or_default() += 1;
                                }
                            }
                        }
                    }
                    Step::Stops(end, resumable) => {
                        let verdict = owed.end(end_of(end), resumable);
                        if ended {
                            prop_assert_eq!(verdict, Verdict::Settled, "never twice");
                        } else {
                            ended = settle(verdict, status, &mut answers, &mut outstanding)?;
                        }
                    }
                }
                let owed_now: usize = outstanding.values().sum();
                prop_assert_eq!(owed.ids().len(), if ended { 0 } else { owed_now });
            }
            // The last stream's end, which cannot be resumed any more.
            let verdict = owed.end(End::Ended, false);
            if !ended {
                settle(verdict, status, &mut answers, &mut outstanding)?;
            } else {
                prop_assert_eq!(verdict, Verdict::Settled);
            }
            for id in &ids {
                let posted = ids.iter().filter(|other| *other == id).count();
                prop_assert_eq!(answers.get(id).copied().unwrap_or(0), posted, "{}", id);
            }
            prop_assert!(answers.keys().all(|id| ids.contains(id)));
        }
    }
}
