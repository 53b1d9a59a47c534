"""Tasks of the 2026-07-28 tasks extension in process (SPEC L1, E11): a fastmcp server
whose tools run through fastmcp-tasks (``tests/peers/servers/fastmcp_tasks_server.py``,
the server the proxies' tests use too), as a child process driven by
raw JSON-RPC lines. The handle passes untouched; the task's state in ``tasks/get`` has
the outcome of the call that created it shaped as that call's: its result cut for the
tool, a failure made a ``completed`` task with the call's ``isError`` result. Skipped on
a fastmcp line fastmcp-tasks is not published for (4.2)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastmcp_tasks", reason="fastmcp-tasks is published for fastmcp 4.0 and 4.1 only")

PROBE = str(Path(__file__).parents[3] / "tests/peers/servers/fastmcp_tasks_server.py")
CAP = 2000
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1.0"},
}


class Client:
    """A stateless 2026-07-28 client over the probe's stdio."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, PROBE, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        request = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": {**params, "_meta": META},
        }
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def run(self, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The handle's answer and the task's last state's answer."""
        handle = self.ask("tools/call", {"name": tool, "arguments": arguments})
        task_id = handle["result"]["taskId"]
        for _ in range(300):
            state = self.ask("tasks/get", {"taskId": task_id})
            if state["result"]["status"] != "working":
                return handle, state
            time.sleep(0.1)
        raise AssertionError(f"task {task_id} still working after 30 s")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def both_ways(tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The last state without backstop; the handle and last state with it."""
    direct = Client()
    try:
        _, plain = direct.run(tool, arguments)
    finally:
        direct.close()
    shaped = Client("--backstop", "--max-bytes", str(CAP))
    try:
        handle, state = shaped.run(tool, arguments)
    finally:
        shaped.close()
    return plain, handle, state


def test_l1_a_task_s_result_in_tasks_get_is_cut_for_its_tool() -> None:
    plain, handle, state = both_ways("scrollback", {"lines": 3000})
    assert handle["result"]["resultType"] == "task"  # the handle passes untouched
    assert len(json.dumps(plain["result"]["result"], separators=(",", ":"))) > CAP
    task = state["result"]
    assert task["status"] == "completed"
    result = task["result"]
    assert len(json.dumps(result, separators=(",", ":")).encode()) <= CAP
    assert result["content"][0]["text"].endswith("line 2999")  # L2: the tail
    assert result["structuredContent"]["result"].endswith("line 2999")  # L15
    assert "backstop/truncation" in result["_meta"]  # L12


def test_e11_a_failed_task_becomes_completed_with_the_call_s_error_result() -> None:
    plain, _, state = both_ways("protocol_fail", {"pane": "%6"})
    assert plain["result"]["status"] == "failed"
    task = state["result"]
    assert task["status"] == "completed"
    assert "error" not in task
    assert task["result"]["isError"] is True
    assert task["result"]["content"] == [{"type": "text", "text": "Pane not found: %6"}]
