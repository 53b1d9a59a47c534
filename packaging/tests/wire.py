"""Drives one MCP session over stdio and checks backstop's answers at the wire.

Used by scripts/test-packages on the installed packages (stdlib only, any Python 3.8+):

    python3 wire.py PROFILE [--cap N] -- COMMAND [ARGS...]

COMMAND is run as an MCP server (normally `backstop proxy ... -- <real server>`, in any
of its installed forms). PROFILE names the real server behind it — `everything` (the
reference server from npm) or `fastmcp` (packaging/tests/fastmcp_server.py) — and so
which tool gives a long result and which near-miss name is asked for. Checked:

- an unknown tool close to a real one is answered `-32602 Unknown tool: <name>` with
  `data.suggestion` "Did you mean '<tool>'?" (SPEC E8, which the bare servers do not say);
- with `--cap N`: a long result comes back cut from its head under N bytes, its tail kept
  (L2), the cut announced and reported in `_meta["backstop/truncation"]`;
- without it: a short result passes whole.

Exit status 0 when every check passed; the failures are printed.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

TAIL = "the last line of a long result: PROMPT $"
TIMEOUT_SECONDS = 60

PROFILES = {
    # The reference server's echo returns "Echo: <message>".
    "everything": {
        "tool": "echo",
        "near_miss": "echoo",
        "long": {"message": "0123456789abcdef" * 20_000 + TAIL},
        "short": {"message": "hello"},
    },
    "fastmcp": {
        "tool": "tail_of_log",
        "near_miss": "tail_of_logs",
        "long": {"lines": 20_000},
        "short": {"lines": 2},
    },
}


class Session:
    """A server process spoken to in newline-delimited JSON-RPC."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, request_id: int, method: str, params: dict | None = None) -> tuple[dict, int]:
        """The response to one request and its line's length in bytes."""
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            line = self.lines.get(timeout=TIMEOUT_SECONDS)
            if not line:
                raise RuntimeError(f"the server closed its output before answering {method}")
            answer = json.loads(line)
            if answer.get("id") == request_id and "method" not in answer:
                return answer, len(line.rstrip(b"\n"))

    def close(self) -> int:
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def check(profile_name: str, cap: int | None, command: list[str]) -> list[str]:
    """The failed checks of one session (empty when all passed)."""
    profile = PROFILES[profile_name]
    failures = []
    session = Session(command)
    try:
        init, _ = session.request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "backstop-package-test", "version": "1"},
            },
        )
        if "result" not in init:
            return [f"initialize failed: {init}"]
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listing, _ = session.request(1, "tools/list")
        names = [tool["name"] for tool in listing.get("result", {}).get("tools", [])]
        if profile["tool"] not in names:
            failures.append(f"tools/list lacks {profile['tool']}: {names}")

        unknown, _ = session.request(2, "tools/call", {"name": profile["near_miss"], "arguments": {}})
        error = unknown.get("error", {})
        expected = f"Unknown tool: {profile['near_miss']}"
        suggestion = f"Did you mean '{profile['tool']}'?"
        if error.get("code") != -32602 or error.get("message") != expected:
            failures.append(f"E8: expected -32602 {expected!r}, got {unknown}")
        elif (error.get("data") or {}).get("suggestion") != suggestion:
            failures.append(f"E8: expected the suggestion {suggestion!r}, got {error}")

        arguments = profile["long"] if cap else profile["short"]
        answer, line_bytes = session.request(
            3, "tools/call", {"name": profile["tool"], "arguments": arguments}
        )
        result = answer.get("result")
        if not result or result.get("isError"):
            failures.append(f"{profile['tool']} failed: {str(answer)[:500]}")
        elif cap:
            wire = len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())
            text = result["content"][0].get("text", "")
            if wire > cap:
                failures.append(f"L2: the result is {wire} bytes on the wire, over the cap {cap}")
            if line_bytes > cap + 200:
                failures.append(f"the response line is {line_bytes} bytes for a cap of {cap}")
            if not text.startswith("[... truncated ") or not text.endswith(TAIL_OF[profile_name]):
                failures.append(f"L2: not cut from the head with its tail kept: {text[:80]!r}…{text[-60:]!r}")
            if "backstop/truncation" not in (result.get("_meta") or {}):
                failures.append(f"the cut is not reported in _meta: {result.get('_meta')}")
        elif "backstop/truncation" in (result.get("_meta") or {}):
            failures.append("a short result was cut")
    finally:
        status = session.close()
    if status != 0:
        failures.append(f"the proxy exited with {status}")
    return failures


# How each profile's long result ends.
TAIL_OF = {"everything": TAIL, "fastmcp": "PROMPT $"}


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    profile = options[0]
    cap = int(options[options.index("--cap") + 1]) if "--cap" in options else None
    try:
        failures = check(profile, cap, command)
    except Exception as error:  # a dead or silent server is a failed check, said as one
        failures = [f"{type(error).__name__}: {error}"]
    for failure in failures:
        print(f"  FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
