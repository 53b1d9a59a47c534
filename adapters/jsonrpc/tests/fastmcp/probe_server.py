"""A small MCP server built with fastmcp (from PyPI), for backstop-jsonrpc's end-to-end test.

Run as `python probe_server.py [--middleware]`; `--middleware` adds fastmcp's stock
ErrorHandlingMiddleware, which turns tool errors into JSON-RPC errors
("Internal error: ...") instead of isError results.
"""

import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("probe")

if "--middleware" in sys.argv:
    from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

    mcp.add_middleware(ErrorHandlingMiddleware())


@mcp.tool
def takes_int(count: int) -> str:
    """Echo an integer."""
    return f"got {count}"


@mcp.tool
def fail(message: str) -> str:
    """Fail with the given message."""
    raise ToolError(message)


@mcp.tool
def big(lines: int) -> str:
    """Print many lines, then a prompt."""
    return "line of output\n" * lines + "PROMPT $"


@mcp.resource("probe://present")
def present() -> str:
    """A resource that exists."""
    return "here"


if __name__ == "__main__":
    mcp.run(show_banner=False)
