//! Close-name suggestions: edit distance and the closest candidate (SPEC E8, V4).
//!
//! Names are compared as sequences of `char`s (Unicode scalar values), so a
//! multi-byte character counts as one edit, not several.

/// How far a name may be from a candidate and still be suggested: edit distance ≤ 2
/// (E8, V4).
pub const MAX_SUGGESTION_DISTANCE: usize = 2;

/// The Levenshtein distance between `a` and `b`, counted over `char`s: the fewest
/// single-character insertions, deletions and substitutions that turn one into the
/// other.
///
/// ```
/// use backstop_core::call::edit_distance;
/// assert_eq!(edit_distance("kitten", "sitting"), 3);
/// assert_eq!(edit_distance("count", "coutn"), 2);
/// assert_eq!(edit_distance("é", "e"), 1); // one char, although two bytes
/// assert_eq!(edit_distance("", "abc"), 3);
/// ```
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Keep the shorter one in the row: memory is O(min(len a, len b)).
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut row: Vec<usize> = (0..=short.len()).collect();
    for (i, &lc) in long.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &sc) in short.iter().enumerate() {
            let substitution = diagonal + usize::from(lc != sc);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[short.len()]
}

/// The candidate closest to `given`, if one is within [`MAX_SUGGESTION_DISTANCE`].
///
/// See `closest_within` for the rules.
///
/// ```
/// use backstop_core::call::closest;
/// let tools = ["list_panes", "send_keys", "capture_pane"];
/// assert_eq!(closest("list_pane", &tools), Some("list_panes"));
/// assert_eq!(closest("delete_everything", &tools), None);
/// ```
pub fn closest<'a, I, T>(given: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a T>,
    T: AsRef<str> + ?Sized + 'a,
{
    closest_within(given, candidates, MAX_SUGGESTION_DISTANCE)
}

/// The candidate closest to `given` by [`edit_distance`], if one is at most
/// `max_distance` away.
///
/// The smallest distance wins; on a tie, the candidate that comes first. A candidate
/// equal to `given` is never suggested (suggesting a name to itself says nothing).
/// Candidates whose length in `char`s differs from `given`'s by more than
/// `max_distance` are skipped without computing the distance, so a very long `given`
/// costs little.
pub fn closest_within<'a, I, T>(given: &str, candidates: I, max_distance: usize) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a T>,
    T: AsRef<str> + ?Sized + 'a,
{
    let given_len = given.chars().count();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let candidate = candidate.as_ref();
        if candidate == given || candidate.chars().count().abs_diff(given_len) > max_distance {
            continue;
        }
        let distance = edit_distance(given, candidate);
        if distance <= max_distance && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A plain, obviously correct (and slow) Levenshtein: the full table.
    fn table_distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn known_distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "abd"), 1);
        assert_eq!(edit_distance("abc", "ab"), 1);
        assert_eq!(edit_distance("ab", "ba"), 2); // no transposition
        assert_eq!(edit_distance("flaw", "lawn"), 2);
        assert_eq!(edit_distance("👨‍👩‍👧", "👨‍👩"), 2); // ZWJ + girl: two chars
    }

    #[test]
    fn closest_prefers_smallest_then_first() {
        let c = ["abcd", "abce", "abc"];
        assert_eq!(closest("abcx", &c), Some("abcd"));
        assert_eq!(closest("abc", &c), Some("abcd"));
        assert_eq!(closest("zzzz", &c), None);
        let none: [&str; 0] = [];
        assert_eq!(closest("abc", &none), None);
    }

    #[test]
    fn closest_skips_far_lengths_and_itself() {
        let long = "x".repeat(10_000);
        assert_eq!(closest(&long, &["x"]), None);
        assert_eq!(closest("takes_int", &["takes_int"]), None);
        assert_eq!(closest_within("ab", &["abcd"], 2), Some("abcd"));
        assert_eq!(closest_within("ab", &["abcde"], 2), None);
    }

    proptest! {
        #[test]
        fn distance_is_levenshtein(a in "[a-c_é]{0,8}", b in "[a-c_é]{0,8}") {
            prop_assert_eq!(edit_distance(&a, &b), table_distance(&a, &b));
        }

        #[test]
        fn distance_is_symmetric_and_zero_only_for_equal(a in "\\PC{0,12}", b in "\\PC{0,12}") {
            let d = edit_distance(&a, &b);
            prop_assert_eq!(d, edit_distance(&b, &a));
            prop_assert_eq!(edit_distance(&a, &a), 0);
            prop_assert_eq!(d == 0, a == b);
            let (la, lb) = (a.chars().count(), b.chars().count());
            prop_assert!(d >= la.abs_diff(lb));
            prop_assert!(d <= la.max(lb));
        }

        #[test]
        fn distance_obeys_the_triangle_inequality(
            a in "[ab]{0,6}", b in "[ab]{0,6}", c in "[ab]{0,6}",
        ) {
            prop_assert!(edit_distance(&a, &c) <= edit_distance(&a, &b) + edit_distance(&b, &c));
        }

        #[test]
        fn closest_is_the_first_minimum(given in "[a-d]{0,5}", cands in prop::collection::vec("[a-d]{0,5}", 0..6)) {
            let expected = cands
                .iter()
                .filter(|c| **c != given)
                .map(|c| (edit_distance(&given, c), c.as_str()))
                .filter(|(d, _)| *d <= MAX_SUGGESTION_DISTANCE)
                .fold(None::<(usize, &str)>, |best, (d, c)| match best {
                    Some((bd, _)) if bd <= d => best,
                    _ => Some((d, c)),
                })
                .map(|(_, c)| c);
            prop_assert_eq!(closest(&given, &cands), expected);
        }
    }
}

/// The examples of this module's items (private: not run as doc tests).
#[cfg(test)]
mod examples {
    #[test]
    fn example_closest_within_1() {
        use crate::suggest::closest_within;
        let params = vec!["count".to_string(), "counts".to_string()];
        assert_eq!(closest_within("coun", &params, 2), Some("count")); // tie at 1 → first
        assert_eq!(closest_within("count", &params, 2), Some("counts")); // never itself
        assert_eq!(closest_within("cnt", &params, 1), None);
    }
}
