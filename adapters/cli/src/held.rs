//! The bytes of one long message held while the shaper cannot decide yet (SPEC B3):
//! in memory up to [`HOLD_IN_MEMORY_BYTES`], then in an unnamed temporary file that
//! the system removes when it is closed. When the file cannot be made or written (a
//! full disk), the bytes are *lost*, never doubled or kept in memory instead: the
//! message is then answered with an error for its id (B5).
//!
//! ```
//! use backstop::held::HeldBytes;
//! let mut held = HeldBytes::default();
//! held.hold(b"abc");
//! held.hold(b"def");
//! assert_eq!(held.len(), 6);
//! assert_eq!(held.take().read_whole(), b"abcdef");
//! assert_eq!(held.len(), 0);
//! ```

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

/// Bytes held in memory before they go to a temporary file.
///
/// ```
/// assert_eq!(backstop::held::HOLD_IN_MEMORY_BYTES, 4 << 20);
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
    /// A write failed: nothing is held any more (B5).
    lost: bool,
}

impl HeldBytes {
    /// Keep `bytes` after those kept before. If the temporary file cannot be made or
    /// written, everything held is [lost](Self::is_lost) — a failed write may have
    /// left part of `bytes` in it, and memory must not take a message it cannot hold
    /// (B3, B5).
    pub fn hold(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.lost {
            return;
        }
        if self.file.is_none() && self.memory.len() + bytes.len() <= HOLD_IN_MEMORY_BYTES {
            self.memory.extend_from_slice(bytes);
            return;
        }
        let written = self.spill().map(|file| file.write_all(bytes));
        if !matches!(written, Some(Ok(()))) {
            let cause = match written {
                Some(Err(error)) => error.to_string(),
                _ => "no temporary file could be made".to_owned(),
            };
            tracing::warn!(
                held = self.len,
                "the bytes of a long message are lost: {cause}"
            );
            self.lost = true;
            self.file = None;
            self.memory = Vec::new();
        }
    }

    /// Whether what was held is lost: a write failed (B5). Then
    /// [`pieces`](Self::pieces) gives nothing.
    ///
    /// ```
    /// assert!(!backstop::held::HeldBytes::default().is_lost());
    /// ```
    pub fn is_lost(&self) -> bool {
        self.lost
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
    /// let mut held = backstop::held::HeldBytes::default();
    /// held.hold(b"xy");
    /// assert_eq!(held.take().pieces().collect::<Vec<_>>().concat(), b"xy");
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
            #[cfg(test)]
            if tests::NO_FILE.with(std::cell::Cell::get) {
                return None;
            }
            let mut file = tempfile::tempfile().ok()?;
            file.write_all(&self.memory).ok()?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        self.file.as_mut()
    }
}

/// [`HeldBytes`] written by a thread of their own, for a caller that scans what it
/// holds: holding costs it a copy into a pooled buffer, not a write to the temporary
/// file, so that a long line's scan and the write of its bytes run at once on two
/// cores (B3). What is in flight is bounded: [`IN_FLIGHT_BUFFERS`] buffers of
/// [`BUFFER_BYTES`], and the caller waits when all are taken.
///
/// ```
/// use backstop::held::HeldInBackground;
/// let mut held = HeldInBackground::new();
/// held.hold(b"abc");
/// held.hold(b"def");
/// assert_eq!(held.take().read_whole(), b"abcdef");
/// held.hold(b"gone");
/// held.discard();
/// assert!(held.take().is_empty());
/// ```
#[derive(Debug)]
pub struct HeldInBackground {
    commands: SyncSender<WriterCommand>,
    /// Buffers the writer has emptied, to be filled again.
    spare: Receiver<Vec<u8>>,
    /// The buffer being filled.
    filling: Vec<u8>,
}

/// The bytes of one buffer handed to the writer.
pub const BUFFER_BYTES: usize = 256 << 10;

/// The most buffers on their way to the writer at once.
pub const IN_FLIGHT_BUFFERS: usize = 8;

/// What the writer thread of a [`HeldInBackground`] is told to do.
#[derive(Debug)]
enum WriterCommand {
    Hold(Vec<u8>),
    Take(Sender<HeldBytes>),
    Discard,
    IsLost(Sender<bool>),
}

impl Default for HeldInBackground {
    fn default() -> Self {
        Self::new()
    }
}

impl HeldInBackground {
    /// Held bytes with a writer thread of their own (it ends when they are dropped).
    pub fn new() -> Self {
        let (commands, received) = mpsc::sync_channel::<WriterCommand>(IN_FLIGHT_BUFFERS);
        let (emptied, spare) = mpsc::channel();
        std::thread::spawn(move || {
            let mut held = HeldBytes::default();
            for command in received {
                match command {
                    WriterCommand::Hold(mut buffer) => {
                        held.hold(&buffer);
                        buffer.clear();
                        let _ = emptied.send(buffer);
                    }
                    WriterCommand::Take(answer) => {
                        let _ = answer.send(held.take());
                    }
                    // Dropped here: closing a big temporary file takes time too.
                    WriterCommand::Discard => held = HeldBytes::default(),
                    WriterCommand::IsLost(answer) => {
                        let _ = answer.send(held.is_lost());
                    }
                }
            }
        });
        Self {
            commands,
            spare,
            filling: Vec::new(),
        }
    }

    /// Keep `bytes` after those kept before.
    pub fn hold(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.filling.capacity() == 0 {
                self.filling = self
                    .spare
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BUFFER_BYTES));
            }
            let room = BUFFER_BYTES.saturating_sub(self.filling.len()).max(1);
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.filling.extend_from_slice(now);
            bytes = rest;
            if self.filling.len() >= BUFFER_BYTES {
                self.hand_over();
            }
        }
    }

    /// Everything held, in order; nothing is held here after.
    pub fn take(&mut self) -> HeldBytes {
        self.hand_over();
        let (answer, taken) = mpsc::channel();
        self.send(WriterCommand::Take(answer));
        taken.recv().unwrap_or_default()
    }

    /// Whether what was held is lost (see [`HeldBytes::is_lost`]), once everything
    /// handed over so far is written.
    pub fn is_lost(&mut self) -> bool {
        self.hand_over();
        let (answer, lost) = mpsc::channel();
        self.send(WriterCommand::IsLost(answer));
        lost.recv().unwrap_or(true)
    }

    /// Forget everything held.
    pub fn discard(&mut self) {
        self.filling.clear();
        self.send(WriterCommand::Discard);
    }

    /// Send the buffer being filled to the writer.
    fn hand_over(&mut self) {
        if !self.filling.is_empty() {
            let buffer = std::mem::take(&mut self.filling);
            self.send(WriterCommand::Hold(buffer));
        }
    }

    fn send(&self, command: WriterCommand) {
        // The writer ends only when `commands` is dropped, with `self`.
        let _ = self.commands.send(command);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Make no temporary file on this thread (a full disk).
        pub(super) static NO_FILE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    #[test]
    fn b5_bytes_that_cannot_be_written_are_lost_not_doubled_or_kept_in_memory() {
        NO_FILE.with(|no| no.set(true));
        let mut held = HeldBytes::default();
        held.hold(b"start");
        assert!(!held.is_lost(), "in memory");
        held.hold(&vec![b'a'; HOLD_IN_MEMORY_BYTES]);
        assert!(held.is_lost());
        assert!(
            held.memory.is_empty() && held.file.is_none(),
            "nothing kept"
        );
        held.hold(b"end");
        assert_eq!(held.len(), HOLD_IN_MEMORY_BYTES as u64 + 8, "counted");
        assert!(held.take().pieces().next().is_none(), "nothing to send");
        NO_FILE.with(|no| no.set(false));
    }

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

    #[test]
    fn b3_bytes_held_in_the_background_come_back_in_order_past_the_memory_bound() {
        let mut held = HeldInBackground::new();
        let mut expected = Vec::new();
        // Pieces of every size around a buffer's, 9 MB in all: through the file.
        for (i, size) in [1, BUFFER_BYTES - 1, 2, BUFFER_BYTES, 3 * BUFFER_BYTES + 7]
            .iter()
            .cycle()
            .take(20)
            .enumerate()
        {
            let piece: Vec<u8> = (0..*size).map(|j| (i * 31 + j) as u8).collect();
            held.hold(&piece);
            expected.extend_from_slice(&piece);
        }
        let taken = held.take();
        assert!(taken.file.is_some(), "past the memory bound: a file");
        assert_eq!(taken.read_whole(), expected);
        held.hold(b"next");
        assert_eq!(
            held.take().read_whole(),
            b"next",
            "nothing left from before"
        );
    }
}
