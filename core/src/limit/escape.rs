//! Terminal escape sequences, so that a cut never lands inside one (SPEC L8).
//!
//! Recognised: CSI (`ESC [` parameters, intermediates, final byte), string sequences
//! (OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _`, ended by BEL or
//! `ESC \`), and the short `ESC` + intermediates + final forms (`ESC ( B`, `ESC 7`).
//! A sequence ends early at the first byte that cannot belong to it (a C0 control such
//! as `\n`, for instance), and none is longer than [`MAX_SEQUENCE`] bytes, so whether
//! a position lies inside one is decided by looking at most that far back.

const ESC: u8 = 0x1B;
const BEL: u8 = 0x07;

/// The longest escape sequence recognised; longer runs are text after that point.
pub(crate) const MAX_SEQUENCE: usize = 4096;

/// How far back from a position the start of a sequence enclosing it can lie, at
/// most: a sequence that starts at `s` ends by `s + MAX_SEQUENCE` (one byte later only
/// when its `ESC \` straddles that limit, and a position between those two bytes is
/// enclosed by the `ESC \` itself).
pub(crate) const LOOKBACK: usize = MAX_SEQUENCE;

/// The end (exclusive) of the escape sequence whose `ESC` is at `start`.
fn sequence_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let limit = bytes.len().min(start + MAX_SEQUENCE);
    let in_range = |i: usize, lo: u8, hi: u8| i < limit && (lo..=hi).contains(&bytes[i]);
    let mut i = start + 1;
    if i >= limit {
        return i.min(bytes.len());
    }
    match bytes[i] {
        b'[' => {
            i += 1;
            while in_range(i, 0x30, 0x3F) {
                i += 1;
            }
            while in_range(i, 0x20, 0x2F) {
                i += 1;
            }
            if in_range(i, 0x40, 0x7E) { i + 1 } else { i }
        }
        b']' | b'P' | b'X' | b'^' | b'_' => {
            // The scan starts on the introducer, which ends nothing.
            while i < limit {
                match bytes[i] {
                    BEL => return i + 1,
                    ESC if bytes.get(i + 1) == Some(&b'\\') => return i + 2,
                    b if b < 0x20 => return i,
                    _ => i += 1,
                }
            }
            // Over-long: the sequence ends at the limit, on a character boundary.
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        }
        0x20..=0x2F => {
            while in_range(i, 0x20, 0x2F) {
                i += 1;
            }
            if in_range(i, 0x30, 0x7E) { i + 1 } else { i }
        }
        0x30..=0x7E => i + 1,
        _ => i,
    }
}

/// If `pos` lies strictly inside an escape sequence of `text`, the end of that
/// sequence.
///
/// `text` must start at the start of the whole text, or at least [`LOOKBACK`] bytes
/// before `pos`.
pub(crate) fn enclosing_end(text: &str, pos: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let floor = pos.saturating_sub(LOOKBACK);
    let mut i = pos;
    while i > floor {
        i -= 1;
        match bytes[i] {
            ESC => {
                let end = sequence_end(text, i);
                return (end > pos).then_some(end);
            }
            // No sequence runs across another C0 control.
            b if b < 0x20 => return None,
            _ => {}
        }
    }
    None
}

/// If `pos` lies strictly inside an escape sequence of `text`, where that sequence
/// starts (its `ESC`): the largest allowed position at or before `pos` outside it.
///
/// `text` must start as for [`enclosing_end`] and run at least [`MAX_SEQUENCE`] + 1
/// bytes past `pos`, or to the end of the whole text.
pub(crate) fn enclosing_start(text: &str, pos: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let floor = pos.saturating_sub(LOOKBACK);
    let mut i = pos;
    while i > floor {
        i -= 1;
        match bytes[i] {
            ESC => return (sequence_end(text, i) > pos).then_some(i),
            b if b < 0x20 => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(text: &str) -> Vec<usize> {
        (0..=text.len())
            .filter(|&p| text.is_char_boundary(p) && enclosing_end(text, p).is_some())
            .collect()
    }

    #[test]
    fn enclosing_start_is_the_esc_of_the_enclosing_sequence() {
        let text = "a\u{1b}[38;5;196mb";
        for pos in 0..=text.len() {
            let expected = enclosing_end(text, pos).map(|_| 1);
            assert_eq!(enclosing_start(text, pos), expected, "pos {pos}");
        }
    }

    #[test]
    fn csi_sgr_is_one_unit() {
        let text = "a\u{1b}[38;5;196mb";
        assert_eq!(inside(text), (2..=11).collect::<Vec<_>>());
        assert_eq!(enclosing_end(text, 5), Some(12));
    }

    #[test]
    fn osc_hyperlink_ends_at_st_or_bel() {
        let st = "\u{1b}]8;;http://x\u{1b}\\link";
        assert_eq!(enclosing_end(st, 3), Some(st.find("link").unwrap()));
        assert_eq!(enclosing_end(st, st.find("link").unwrap()), None);
        let bel = "\u{1b}]0;title\u{7}$ ";
        assert_eq!(enclosing_end(bel, 4), Some(bel.find('$').unwrap()));
    }

    #[test]
    fn sequences_end_at_control_characters() {
        let text = "\u{1b}]0;unterminated\nnext";
        assert_eq!(enclosing_end(text, 5), Some(text.find('\n').unwrap()));
        assert_eq!(enclosing_end(text, text.find("next").unwrap()), None);
        let csi = "\u{1b}[12\nx";
        assert_eq!(enclosing_end(csi, 3), Some(4));
        assert_eq!(enclosing_end(csi, 4), None);
    }

    #[test]
    fn short_forms_and_lone_esc() {
        assert_eq!(enclosing_end("\u{1b}(Bx", 1), Some(3));
        assert_eq!(enclosing_end("\u{1b}7x", 1), Some(2));
        assert_eq!(enclosing_end("\u{1b}", 1), None);
        assert_eq!(enclosing_end("\u{1b}\u{1b}[m", 1), None);
        assert_eq!(enclosing_end("\u{1b}\u{1b}[m", 2), Some(4));
    }

    #[test]
    fn an_esc_inside_a_string_not_followed_by_a_backslash_starts_a_new_sequence() {
        let text = "\u{1b}]0;title\u{1b}[31mred";
        let csi = text.rfind('\u{1b}').unwrap();
        assert_eq!(enclosing_end(text, 3), Some(csi));
        assert_eq!(enclosing_end(text, csi), None);
        assert_eq!(enclosing_end(text, csi + 1), Some(csi + 5));
        assert_eq!(enclosing_end(text, csi + 5), None);
    }

    #[test]
    fn spaces_belong_to_strings_and_to_intermediates() {
        let osc = "\u{1b}]0;my title\u{7}$";
        assert_eq!(
            enclosing_end(osc, osc.find("title").unwrap()),
            osc.find('$')
        );
        // DECSCUSR: CSI 2 SP q, a parameter, an intermediate, a final byte.
        let csi = "\u{1b}[2 qX";
        assert_eq!(sequence_end(csi, 0), 5);
        assert_eq!(enclosing_end(csi, 4), Some(5));
        // ESC SP F (S7C1T): an intermediate then a final byte.
        assert_eq!(sequence_end("\u{1b} Fx", 0), 3);
    }

    #[test]
    fn a_control_byte_ends_any_sequence() {
        let csi = "\u{1b}[1\u{7}x";
        assert_eq!(sequence_end(csi, 0), 3);
        assert_eq!(enclosing_end(csi, 3), None);
        let short = "\u{1b}(\nB";
        assert_eq!(sequence_end(short, 0), 2);
        assert_eq!(enclosing_end(short, 2), None);
    }

    #[test]
    fn over_long_csi_ends_at_the_limit() {
        let text = format!("\u{1b}[{}m", "1;".repeat(3000));
        assert_eq!(sequence_end(&text, 0), MAX_SEQUENCE);
        assert_eq!(enclosing_end(&text, MAX_SEQUENCE - 1), Some(MAX_SEQUENCE));
        assert_eq!(enclosing_end(&text, MAX_SEQUENCE), None);
    }

    #[test]
    fn over_long_string_ends_at_the_limit_or_the_char_boundary_before_it() {
        let ascii = format!("\u{1b}]{}", "a".repeat(5000));
        assert_eq!(sequence_end(&ascii, 0), MAX_SEQUENCE);
        // é at odd offsets: the limit falls inside one, the end is the byte before.
        let text = format!("\u{1b}]a{}", "é".repeat(3000));
        assert!(!text.is_char_boundary(MAX_SEQUENCE));
        assert_eq!(sequence_end(&text, 0), MAX_SEQUENCE - 1);
    }

    #[test]
    fn the_farthest_enclosing_esc_is_found() {
        let start = 10;
        let text = format!("{}\u{1b}]{}", "b".repeat(start), "a".repeat(5000));
        let end = start + MAX_SEQUENCE;
        assert_eq!(sequence_end(&text, start), end);
        assert_eq!(enclosing_end(&text, end - 1), Some(end));
        assert_eq!(enclosing_end(&text, end), None);
        // An ST straddling the limit: the position between its bytes is inside it.
        let st = format!("\u{1b}]{}\u{1b}\\z", "a".repeat(MAX_SEQUENCE - 3));
        assert_eq!(sequence_end(&st, 0), MAX_SEQUENCE + 1);
        assert_eq!(enclosing_end(&st, MAX_SEQUENCE), Some(MAX_SEQUENCE + 1));
        assert_eq!(enclosing_end(&st, MAX_SEQUENCE + 1), None);
    }

    #[test]
    fn over_long_string_sequence_stops_at_a_char_boundary() {
        let text = format!("\u{1b}]{}", "é".repeat(MAX_SEQUENCE));
        let end = sequence_end(&text, 0);
        assert!(end <= MAX_SEQUENCE && text.is_char_boundary(end));
    }
}
