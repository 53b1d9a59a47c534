//! The requests backstop answered itself, so that a later answer from the server to
//! one of them is dropped: a request gets at most one answer, ever (SPEC B5).
//!
//! backstop answers a request itself when the transport that carried it failed or
//! timed out (an error for its id). Over HTTP the server's own answer may still come
//! after that, on a stream the client resumes (SEP-1699); it would be a second answer.
//! The newest [`ANSWERED_HERE_KEPT`] ids are kept; an id the client sends again in a
//! new request is forgotten here, since its new answer is the one that counts.
//!
//! ```
//! use backstop_core::machine::{AnsweredHere, RequestId};
//! let mut answered = AnsweredHere::default();
//! answered.insert(RequestId::Number("7".into()));
//! assert!(answered.contains(&RequestId::Number("7".into())));
//! assert!(!answered.contains(&RequestId::String("7".into())));
//! ```

use std::collections::{HashMap, VecDeque};

use super::pending::RequestId;

/// How many of the ids backstop answered itself are kept (the newest).
pub const ANSWERED_HERE_KEPT: usize = 4096;

/// The ids of the requests backstop answered itself, the newest
/// [`ANSWERED_HERE_KEPT`].
#[derive(Debug, Clone, Default)]
pub struct AnsweredHere {
    /// Each id, with the number of its insertion.
    ids: HashMap<RequestId, u64>,
    /// The insertions, oldest first. One whose id was removed or inserted again since
    /// lingers here, and is skipped when its turn to go comes.
    order: VecDeque<(u64, RequestId)>,
    inserted: u64,
}

impl AnsweredHere {
    /// backstop answered request `id` itself.
    pub fn insert(&mut self, id: RequestId) {
        if self.ids.contains_key(&id) {
            return;
        }
        self.inserted += 1;
        self.ids.insert(id.clone(), self.inserted);
        self.order.push_back((self.inserted, id));
        while self.ids.len() > ANSWERED_HERE_KEPT {
            let Some((number, oldest)) = self.order.pop_front() else {
                break;
            };
            if self.ids.get(&oldest) == Some(&number) {
                self.ids.remove(&oldest);
            }
        }
        if self.order.len() > 2 * ANSWERED_HERE_KEPT {
            let ids = &self.ids;
            self.order
                .retain(|(number, id)| ids.get(id) == Some(number));
        }
    }

    /// The client sent a new request `id`: its answer is the server's to give.
    pub fn remove(&mut self, id: &RequestId) {
        self.ids.remove(id);
    }

    /// Whether backstop answered request `id` itself (and it was not sent again).
    pub fn contains(&self, id: &RequestId) -> bool {
        self.ids.contains_key(id)
    }

    /// Whether no id is kept.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many ids are kept.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(n: usize) -> RequestId {
        RequestId::Number(n.to_string())
    }

    #[test]
    fn b5_the_newest_ids_are_kept_and_a_resent_id_is_forgotten() {
        let mut answered = AnsweredHere::default();
        for n in 0..ANSWERED_HERE_KEPT + 10 {
            answered.insert(id(n));
        }
        assert_eq!(answered.len(), ANSWERED_HERE_KEPT);
        assert!(!answered.contains(&id(9)), "the oldest went");
        assert!(answered.contains(&id(10)) && answered.contains(&id(ANSWERED_HERE_KEPT + 9)));
        answered.remove(&id(10));
        assert!(!answered.contains(&id(10)));
        answered.insert(id(10));
        assert!(answered.contains(&id(10)), "answered here again");
        // Inserted again after a removal, an id counts from its new insertion: the
        // next KEPT - 1 insertions leave it.
        for n in 0..ANSWERED_HERE_KEPT - 1 {
            answered.insert(id(100_000 + n));
        }
        assert!(answered.contains(&id(10)));
        answered.insert(id(200_000));
        assert!(!answered.contains(&id(10)), "now the oldest, gone");
    }

    #[test]
    fn b5_an_id_inserted_and_removed_over_and_over_keeps_the_order_bounded() {
        let mut answered = AnsweredHere::default();
        for _ in 0..10 * ANSWERED_HERE_KEPT {
            answered.insert(id(1));
            answered.remove(&id(1));
        }
        assert!(answered.is_empty());
        assert!(answered.order.len() <= 2 * ANSWERED_HERE_KEPT + 1);
    }

    /// Insertion takes constant time, amortized: the order is compacted only once
    /// it holds twice the kept ids, not at every insertion.
    #[test]
    fn b5_the_order_is_compacted_only_when_twice_the_kept() {
        let mut answered = AnsweredHere::default();
        for n in 0..2 * ANSWERED_HERE_KEPT {
            answered.insert(id(n));
            answered.remove(&id(n));
            assert_eq!(answered.order.len(), n + 1, "not compacted yet");
        }
        answered.insert(id(0));
        assert_eq!(answered.order.len(), 1, "compacted to the one id kept");
    }

    proptest! {
        /// B5: whatever the inserts and removals, the set is the inserted ids not
        /// removed since, and the order it keeps stays bounded (below the bound of
        /// ANSWERED_HERE_KEPT ids; what goes past it is the unit tests' above).
        #[test]
        fn b5_answered_here_is_the_newest_ids_not_sent_again(
            steps in proptest::collection::vec((any::<bool>(), 0usize..40), 0..400)
        ) {
            let mut answered = AnsweredHere::default();
            let mut model: Vec<usize> = Vec::new();
            for (insert, n) in steps {
                if insert {
                    answered.insert(id(n));
                    if !model.contains(&n) {
                        model.push(n);
                    }
                } else {
                    answered.remove(&id(n));
                    model.retain(|&m| m != n);
                }
                for n in 0..40 {
                    prop_assert_eq!(answered.contains(&id(n)), model.contains(&n));
                }
                prop_assert_eq!(answered.len(), model.len());
                prop_assert_eq!(answered.is_empty(), model.is_empty());
                prop_assert!(answered.order.len() <= 2 * ANSWERED_HERE_KEPT + 1);
            }
        }
    }
}
