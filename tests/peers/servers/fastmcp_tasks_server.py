"""A fastmcp 4.x server whose tools run as background tasks through fastmcp-tasks
(the 2026-07-28 tasks extension, SEP-2663; in-memory backend), for the tests of a
task's state (SPEC L1, E11): adapters/cli/tests/proxy_fastmcp_tasks.rs and
http_fastmcp_tasks.rs behind the proxies, adapters/python/tests/test_tasks.py in
process. Run as `python fastmcp_tasks_server.py [--http PORT] [--backstop --max-bytes N]`:
stdio, or Streamable HTTP on 127.0.0.1 at /mcp; `--backstop` adds backstop's fastmcp
middleware with that cap.

- `scrollback(lines)`: `lines` numbered lines, the newest last (L1: the tail is kept).
- `explode(pane)`: raises; fastmcp-tasks reports the task `completed` with fastmcp's
  wrapped `isError` result (E2).
- `protocol_fail(pane)`: raises an MCP error; the task is `failed` with it (E11).
"""

import asyncio
import sys

from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError

mcp = FastMCP("tasks-probe")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=True)
async def scrollback(lines: int) -> str:
    await asyncio.sleep(0.1)
    return "\n".join(f"line {n}" for n in range(lines))


@mcp.tool(task=True)
async def explode(pane: str) -> str:
    await asyncio.sleep(0.1)
    raise ValueError(f"Pane not found: {pane}")


@mcp.tool(task=True)
async def protocol_fail(pane: str) -> str:
    await asyncio.sleep(0.1)
    raise MCPError(code=-32603, message=f"Internal error: Pane not found: {pane}")


if __name__ == "__main__":
    if "--backstop" in sys.argv:
        from backstop.fastmcp import Backstop

        max_bytes = int(sys.argv[sys.argv.index("--max-bytes") + 1])
        mcp.add_middleware(Backstop(max_bytes=max_bytes))
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        mcp.run(
            transport="http",
            host="127.0.0.1",
            port=port,
            show_banner=False,
            log_level="warning",
        )
    else:
        mcp.run(show_banner=False)
