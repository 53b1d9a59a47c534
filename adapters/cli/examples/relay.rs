//! The smallest stdio relay: a server as a child, its stdin and stdout pumped to and
//! from this process's own by two threads, line by line, each line flushed —
//! `backstop proxy`'s plumbing without the shaper. The `proxy`
//! benchmark puts it beside the proxy, so that what the shaper adds to a round trip
//! shows apart from what any process in the middle costs (two more hops, each a
//! thread woken by a pipe).
//!
//! `cargo run -p backstop --example relay -- <server command…>`

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::thread;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let program = args.next().expect("usage: relay <server command…>");
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let to_server = child.stdin.take().expect("piped");
    let from_server = child.stdout.take().expect("piped");
    thread::spawn(move || pump(io::stdin().lock(), to_server));
    pump(BufReader::new(from_server), io::stdout().lock());
    let _ = child.wait();
}

/// Copy `from` to `to` line by line, each flushed.
fn pump(mut from: impl BufRead, to: impl Write) {
    let mut to = BufWriter::with_capacity(64 << 10, to);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            break;
        }
    }
}
