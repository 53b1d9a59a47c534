"""backstop's fastmcp middleware over stdio: the probe server as a child process, driven
by the official MCP Python client (``mcp``'s ClientSession, which validates a result's
``structuredContent`` against the tool's ``outputSchema``) and by raw JSON-RPC lines, to
measure the bytes on the wire (SPEC L4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.anyio

PROBE = str(Path(__file__).parent / "probe.py")
CAP = 2000


def server(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[PROBE, *args], env=dict(os.environ))


async def test_l15_official_client_accepts_the_cut_structured_result() -> None:
    """L15: the client validates `structuredContent` against the advertised schema; the
    cut value still validates, and keeps its tail."""
    async with (
        stdio_client(server("--backstop", "--max-bytes", str(CAP))) as (read, write),
        ClientSession(read, write, read_timeout_seconds=120) as session,
    ):
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["build_report"].output_schema is not None  # the schema is kept
        result = await session.call_tool("build_report", {"lines": 5000})
        assert result.is_error is not True
        assert result.structured_content["log"].endswith("BUILD DONE")
        assert result.structured_content["summary"] == "build finished: 0 errors"

        failed = await session.call_tool("fail_expected_with_suggestion", {})
        assert failed.is_error is True
        assert failed.meta["suggestion"] == "Call list_panes to discover valid pane ids."
        assert failed.content[0].text.endswith("\nCall list_panes to discover valid pane ids.")

        big = await session.call_tool("big", {"lines": 5000})
        assert big.content[0].text.endswith("PROMPT $")


def raw_calls(calls: list[tuple[str, dict]], *args: str) -> list[dict]:
    """The responses to `calls` (tool name and arguments, or a method name starting with
    its family, like ``resources/read``, and its params), after a 2025-11-25 handshake."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-client", "version": "1.0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for n, (name, arguments) in enumerate(calls, start=1):
        if "/" in name:
            lines.append({"jsonrpc": "2.0", "id": n, "method": name, "params": arguments})
            continue
        lines.append(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
    proc = subprocess.Popen(
        [sys.executable, PROBE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    answers: dict[int, dict] = {}
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        proc.stdin.flush()
        while len(answers) < len(calls) + 1:
            line = proc.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            if "id" in message and ("result" in message or "error" in message):
                answers[message["id"]] = message
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return [answers[n] for n in range(1, len(calls) + 1)]


def test_l4_wire_bytes_under_the_cap_through_stdio() -> None:
    """Defect 2 of the reference: 1113–1963 bytes at a 1000-byte cap. Measured on the
    bytes the server writes, `_meta` and all."""
    calls = [
        ("big", {"lines": 3000}),
        ("newlines", {"count": 9000}),
        ("ansi", {"lines": 3000}),
        ("emoji", {"count": 3000}),
        ("limited_fail", {"payload": "x" * 9000}),
    ]
    for answer in raw_calls(calls, "--backstop", "--max-bytes", "1000"):
        result = answer["result"]
        size = len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())
        assert size <= 1000, (size, result["content"][0]["text"][:60])
        assert result["content"][0]["text"].startswith("[... truncated ")
    assert answer["result"]["isError"] is True  # L5 through the wire
    assert answer["result"]["_meta"]["error_type"] == "ExpectedToolError"


def test_e8_unknown_tool_through_stdio() -> None:
    [answer] = raw_calls([("takes_in", {})], "--backstop")
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == "Unknown tool: takes_in"
    assert answer["error"]["data"] == {"suggestion": "Did you mean 'takes_int'?"}


def test_v5_client_named_from_the_handshake() -> None:
    [answer] = raw_calls([("takes_int", {"count": 1, "wait_for_previous": True})], "--backstop")
    assert "your client (raw-client 1.0)" in answer["result"]["_meta"]["suggestion"]


def test_r3_p1_resource_not_found_code_of_a_handshake_revision() -> None:
    """R3: up to 2025-11-25 resource-not-found is -32002 (2026-07-28: -32602, in-process)."""
    [answer] = raw_calls([("resources/read", {"uri": "probe://sessions/forbidden"})], "--backstop")
    assert answer["error"]["code"] == -32002
    assert answer["error"]["message"] == "Resource not found: Path not allowed: forbidden"
