//! The plain-data entry points a binding (the Python package, SPEC A4) calls: they must
//! decide exactly as the entry points the Rust adapters call.

use backstop_core::testing::strategies::result_and_cap;
use backstop_core::{Content, Limit};
use proptest::prelude::*;

proptest! {
    /// L1–L13 through borrowed texts: `truncate_texts` with the texts held apart is
    /// `truncate` on the whole result, for every result and cap.
    #[test]
    fn truncate_texts_is_truncate((result, cap) in result_and_cap(), line_align in any::<bool>()) {
        let limit = Limit::new(cap).unwrap().line_aligned(line_align);
        let texts: Vec<String> = result.content.iter().filter_map(Content::as_text).map(str::to_owned).collect();
        let mut shell = result.clone();
        for block in &mut shell.content {
            if let Content::Text(block) = block {
                block.text.clear();
            }
        }
        let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
        prop_assert_eq!(limit.truncate_texts(&shell, &borrowed, None), limit.truncate(&result));
    }
}
