"""A small MCP server built with fastmcp (from PyPI), for the `backstop` crate's end-to-end test.

Run as `python probe_server.py [--middleware] [--http PORT [--stateless]]`; `--middleware` adds fastmcp's stock
ErrorHandlingMiddleware, which turns tool errors into JSON-RPC errors
("Internal error: ...") instead of isError results.
"""

import sys
from uuid import UUID

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from pydantic import BaseModel, Field, HttpUrl

mcp = FastMCP("probe")

if "--middleware" in sys.argv:
    from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware

    mcp.add_middleware(ErrorHandlingMiddleware())


@mcp.tool
def takes_int(count: int) -> str:
    """Echo an integer."""
    return f"got {count}"


@mcp.tool
def open_link(url: HttpUrl, request_id: UUID) -> str:
    """Take a URL and a UUID: pydantic checks their formats (V2)."""
    return f"{request_id}: {url}"


@mcp.tool
def fail(message: str) -> str:
    """Fail with the given message."""
    raise ToolError(message)


@mcp.tool
def big(lines: int) -> str:
    """Print many lines, then a prompt."""
    return "line of output\n" * lines + "PROMPT $"


class BuildReport(BaseModel):
    """The structured result of `structured_log`: its schema is the tool's outputSchema."""

    summary: str
    lines: int
    log: str


@mcp.tool
def structured_log(lines: int) -> BuildReport:
    """A build report whose log has `lines` lines, its last `BUILD DONE`."""
    log = "".join(f"log line {n} of the build\n" for n in range(1, lines + 1)) + "BUILD DONE"
    return BuildReport(summary="build finished: 0 errors", lines=lines, log=log)


class Digest(BaseModel):
    """The structured result of `digest`: its `hex` may not be cut (a `pattern`, L15)."""

    algorithm: str
    hex: str = Field(pattern="^[0-9a-f]*$")


@mcp.tool
def digest(length: int) -> Digest:
    """A digest of `length` hex digits, which no cut can shorten within the schema."""
    return Digest(algorithm="probe", hex="0123456789abcdef" * (length // 16))


@mcp.tool
async def progress(steps: int, ctx: Context) -> str:
    """Report progress `steps` times, then answer."""
    for step in range(1, steps + 1):
        await ctx.report_progress(progress=step, total=steps)
    return f"done after {steps} steps"


@mcp.resource("probe://present")
def present() -> str:
    """A resource that exists."""
    return "here"


if __name__ == "__main__":
    if "--http" in sys.argv:
        # Streamable HTTP on 127.0.0.1, at the port after `--http`, path /mcp.
        port = int(sys.argv[sys.argv.index("--http") + 1])
        # `--stateless`: no sessions, each request on its own (fastmcp's stateless_http).
        mcp.run(
            transport="http",
            host="127.0.0.1",
            port=port,
            show_banner=False,
            log_level="warning",
            stateless_http="--stateless" in sys.argv,
        )
    else:
        mcp.run(show_banner=False)
