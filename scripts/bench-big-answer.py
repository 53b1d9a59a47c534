#!/usr/bin/env python3
"""One big `tools/call` answer in every mode, beside the straight path, in one run
(SPEC B3; issue 32): time to the answer's end and backstop's peak RSS (VmHWM) at a
1 MB cap, for a result of `--mib` MiB (default 1024) whose text's lines are 1 KiB,
`id` first, written by the server in 1 MiB pieces:

- `backstop gateway`: the answer as one SSE event of one `data:` line, in 1 MiB HTTP
  chunks; once in a session, and once while another call's listing of the tools is
  held by the server (backstop's own `tools/list` in flight: E8, R5);
- `backstop proxy --url`: the same upstream, the answer as one line on stdout;
- `backstop proxy -- <cmd>`: a stdio server writing the answer as one line.

The straight path is a client reading the same answer from the same server with no
backstop between. Linux only (/proc).

    cargo build --release -p backstop --bin backstop
    scripts/bench-big-answer.py target/release/backstop
    scripts/bench-big-answer.py target/release/backstop --mib 256
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CAP = 1_000_000
PIECE = 1 << 20
LINE = b"x" * 1022 + b"\\n"
TEXT = LINE * (PIECE // len(LINE))
TOOLS = {"tools": [{"name": "big", "inputSchema": {"type": "object"}}]}


def answer_pieces(request_id, mib):
    """The answer to `request_id`, `mib` MiB of text, in pieces."""
    yield b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % (
        json.dumps(request_id).encode()
    )
    for _ in range(mib):
        yield TEXT
    yield b'END OF SCROLLBACK $ "}]}}'


def rechunked(pieces, size):
    """The bytes of `pieces` in chunks of `size`."""
    pending = b""
    for piece in pieces:
        pending += piece
        while len(pending) >= size:
            yield pending[:size]
            pending = pending[size:]
    if pending:
        yield pending


def initialize_result(request_id):
    return {"jsonrpc": "2.0", "id": request_id, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "big", "version": "1"}}}


class Upstream(BaseHTTPRequestHandler):
    """Streamable HTTP: JSON for small answers, the big one as one SSE event."""

    protocol_version = "HTTP/1.1"
    mib = 1024
    listing_released = threading.Event()

    def log_message(self, *args):
        pass

    def json(self, message):
        body = json.dumps(message).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("mcp-session-id", "big-1")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["content-length"])))
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            return self.json(initialize_result(request_id))
        if request_id is None:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return None
        if method == "tools/list":
            Upstream.listing_released.wait()
            return self.json({"jsonrpc": "2.0", "id": request_id, "result": TOOLS})
        mib = message["params"]["arguments"].get("mib", Upstream.mib)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        event = [b"id: e-1\nevent: message\ndata: "]
        event += answer_pieces(request_id, mib)
        event.append(b"\n\n")
        for chunk in rechunked(event, PIECE):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
        return None


def serve_stdio(mib):
    """A stdio MCP server whose `tools/call` answers with one line of `mib` MiB."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            out.write(json.dumps(initialize_result(request_id)).encode() + b"\n")
        elif method == "tools/list":
            out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": TOOLS}).encode() + b"\n")
        else:
            for piece in answer_pieces(request_id, mib):
                out.write(piece)
            out.write(b"\n")
        out.flush()


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def started(command):
    """`command` on pipes; with `listening on <url>` on stderr for a gateway."""
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def post(port, body, session=None):
    """POST `body`; the time to the body's end, its size, the session id."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"content-type": "application/json",
               "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}
    if session:
        headers["mcp-session-id"] = session
    start = time.perf_counter()
    connection.request("POST", "/mcp", json.dumps(body), headers)
    response = connection.getresponse()
    size = 0
    while chunk := response.read1(PIECE):
        size += len(chunk)
    elapsed = time.perf_counter() - start
    session = response.getheader("mcp-session-id")
    connection.close()
    return elapsed, size, session


def call(request_id, **arguments):
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "big", "arguments": arguments}}


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def http_session(port):
    _, _, session = post(port, INITIALIZE)
    post(port, INITIALIZED, session)
    return session


def gateway(backstop, upstream_port):
    process = started([backstop, "gateway", "--listen", "127.0.0.1:0", "--upstream",
                       f"http://127.0.0.1:{upstream_port}/mcp", "--max-bytes", str(CAP)])
    line = process.stderr.readline().decode()
    port = int(line.split("listening on http://127.0.0.1:")[1].split(",")[0])
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, port


def line_client(process, message):
    """Send `message` on stdin; the time to the end of the next line and its size."""
    start = time.perf_counter()
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    size = 0
    while True:
        chunk = process.stdout.read1(PIECE)
        if not chunk:
            raise SystemExit("the line never ended")
        size += len(chunk)
        if chunk.endswith(b"\n"):
            return time.perf_counter() - start, size


def stdio_session(command):
    process = started(command)
    threading.Thread(target=process.stderr.read, daemon=True).start()
    line_client(process, INITIALIZE)
    process.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
    process.stdin.flush()
    return process


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backstop")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--serve-stdio", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_stdio:
        return serve_stdio(options.mib)
    Upstream.mib = options.mib
    Upstream.listing_released.set()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    upstream_port = server.server_address[1]
    rows = []

    straight, straight_size, _ = post(upstream_port, call(1))
    process, port = gateway(options.backstop, upstream_port)
    session = http_session(port)
    elapsed, size, _ = post(port, call(2), session)
    rows.append(("`backstop gateway` (SSE event)", straight, straight_size, elapsed, size,
                 peak_mib(process.pid)))
    process.kill()

    process, port = gateway(options.backstop, upstream_port)
    session = http_session(port)
    Upstream.listing_released.clear()
    first = threading.Thread(target=post, args=(port, call(3, mib=0), session))
    first.start()
    time.sleep(0.5)  # the first call's listing is in flight, held by the server
    elapsed, size, _ = post(port, call(4), session)
    rows.append(("`backstop gateway`, its own `tools/list` in flight", straight,
                 straight_size, elapsed, size, peak_mib(process.pid)))
    Upstream.listing_released.set()
    first.join()
    process.kill()

    process = stdio_session([options.backstop, "proxy", "--quiet", "--url",
                             f"http://127.0.0.1:{upstream_port}/mcp", "--max-bytes", str(CAP)])
    elapsed, size = line_client(process, call(5))
    rows.append(("`backstop proxy --url` (SSE event to a line)", straight, straight_size,
                 elapsed, size, peak_mib(process.pid)))
    process.kill()

    server_command = [sys.executable, os.path.abspath(__file__), "-", "--serve-stdio",
                      "--mib", str(options.mib)]
    process = stdio_session(server_command)
    straight_stdio, straight_stdio_size = line_client(process, call(6))
    process.kill()
    process = stdio_session([options.backstop, "proxy", "--max-bytes", str(CAP), "--"]
                            + server_command)
    elapsed, size = line_client(process, call(7))
    rows.append(("`backstop proxy -- <cmd>` (stdio line)", straight_stdio,
                 straight_stdio_size, elapsed, size, peak_mib(process.pid)))
    process.kill()
    server.shutdown()

    print(f"A {options.mib} MiB `tools/call` result, cut at {CAP:,} bytes\n")
    print("| mode | straight | through backstop | time ratio | backstop's peak RSS |")
    print("| --- | --- | --- | --- | --- |")
    for mode, straight_s, straight_bytes, backstop_s, backstop_bytes, peak in rows:
        print(f"| {mode} | {straight_s:.2f} s ({straight_bytes:,} bytes) "
              f"| {backstop_s:.2f} s ({backstop_bytes:,} bytes) "
              f"| {backstop_s / straight_s:.2f}× | {peak:.1f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
