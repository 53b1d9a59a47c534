"""A fastmcp server whose tools run as background tasks through fastmcp-tasks (the
2026-07-28 tasks extension, SEP-2663; in-memory backend), for test_tasks.py. Run as
``python task_probe.py [--backstop] [--max-bytes N]``: ``--backstop`` adds backstop's
middleware.

- ``scrollback(lines)``: ``lines`` numbered lines, the newest last.
- ``protocol_fail(pane)``: raises an MCP error; the task is ``failed`` with it.
"""

from __future__ import annotations

import asyncio
import sys

from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError

mcp = FastMCP("task-probe")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=True)
async def scrollback(lines: int) -> str:
    await asyncio.sleep(0.1)
    return "\n".join(f"line {n}" for n in range(lines))


@mcp.tool(task=True)
async def protocol_fail(pane: str) -> str:
    await asyncio.sleep(0.1)
    raise MCPError(code=-32603, message=f"Internal error: Pane not found: {pane}")


if __name__ == "__main__":
    if "--backstop" in sys.argv:
        from backstop.fastmcp import Backstop

        max_bytes = int(sys.argv[sys.argv.index("--max-bytes") + 1])
        mcp.add_middleware(Backstop(max_bytes=max_bytes))
    mcp.run(show_banner=False)
