//! The bytes of one long message held while the shaper cannot decide yet (SPEC B3):
//! in memory up to [`HOLD_IN_MEMORY_BYTES`], then in an unnamed temporary file that
//! the system removes when it is closed.
//!
//! ```
//! use backstop_jsonrpc::held::HeldBytes;
//! let mut held = HeldBytes::default();
//! held.hold(b"abc");
//! held.hold(b"def");
//! assert_eq!(held.len(), 6);
//! assert_eq!(held.take().read_whole(), b"abcdef");
//! assert_eq!(held.len(), 0);
//! ```

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

/// Bytes held in memory before they go to a temporary file.
///
/// ```
/// assert_eq!(backstop_jsonrpc::held::HOLD_IN_MEMORY_BYTES, 4 << 20);
/// ```
pub const HOLD_IN_MEMORY_BYTES: usize = 4 << 20;

/// How much of a temporary file is read at a time when it is sent on.
const READ_BYTES: usize = 256 << 10;

/// Held bytes, in order: those in the file (if any) come first.
#[derive(Debug, Default)]
pub struct HeldBytes {
    memory: Vec<u8>,
    file: Option<File>,
    len: u64,
}

impl HeldBytes {
    /// Keep `bytes` after those kept before. If no temporary file can be made,
    /// memory it is: nothing is lost (B1).
    pub fn hold(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        let spills = self.file.is_some() || self.memory.len() + bytes.len() > HOLD_IN_MEMORY_BYTES;
        if spills
            && let Some(file) = self.spill()
            && file.write_all(bytes).is_ok()
        {
            return;
        }
        self.memory.extend_from_slice(bytes);
    }

    /// How many bytes are held.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Everything held, to be sent or read; nothing is held here after.
    pub fn take(&mut self) -> Self {
        std::mem::take(self)
    }

    /// The held bytes in pieces of at most 256 KiB, in order (a file is read as they
    /// are asked for): what sends them on needs no more memory than that.
    ///
    /// ```
    /// let mut held = backstop_jsonrpc::held::HeldBytes::default();
    /// held.hold(b"xy");
    /// assert_eq!(held.take().pieces().concat(), b"xy");
    /// ```
    pub fn pieces(mut self) -> impl Iterator<Item = Vec<u8>> {
        let mut file = self.file.take();
        if let Some(f) = file.as_mut()
            && f.seek(SeekFrom::Start(0)).is_err()
        {
            file = None;
        }
        let mut memory = Some(std::mem::take(&mut self.memory)).filter(|m| !m.is_empty());
        std::iter::from_fn(move || {
            if let Some(f) = file.as_mut() {
                let mut chunk = vec![0; READ_BYTES];
                match f.read(&mut chunk) {
                    Ok(n @ 1..) => {
                        chunk.truncate(n);
                        return Some(chunk);
                    }
                    _ => file = None,
                }
            }
            memory.take()
        })
    }

    /// All the held bytes, read whole.
    pub fn read_whole(self) -> Vec<u8> {
        let mut whole = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        for piece in self.pieces() {
            whole.extend(piece);
        }
        whole
    }

    /// The temporary file, made (and given what memory holds) on first use.
    fn spill(&mut self) -> Option<&mut File> {
        if self.file.is_none() {
            let mut file = tempfile::tempfile().ok()?;
            file.write_all(&self.memory).ok()?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        self.file.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b3_past_the_memory_bound_bytes_go_to_a_file_and_come_back_in_order() {
        let mut held = HeldBytes::default();
        let big = vec![b'a'; HOLD_IN_MEMORY_BYTES];
        held.hold(b"start");
        held.hold(&big);
        assert!(held.file.is_some() && held.memory.is_empty(), "spilled");
        held.hold(b"end");
        let pieces: Vec<Vec<u8>> = held.take().pieces().collect();
        assert!(pieces.iter().all(|p| p.len() <= READ_BYTES));
        let whole = pieces.concat();
        assert_eq!(whole.len(), HOLD_IN_MEMORY_BYTES + 8);
        assert!(whole.starts_with(b"starta") && whole.ends_with(b"aend"));
    }
}
