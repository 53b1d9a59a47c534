"""A small fastmcp server (fastmcp from PyPI) for scripts/test-packages: one tool whose
result grows with its argument, so that `backstop proxy --max-bytes N` has one to cut.

    python fastmcp_server.py   # stdio
"""

from fastmcp import FastMCP

mcp = FastMCP("package-test")


@mcp.tool
def tail_of_log(lines: int) -> str:
    """The last `lines` lines of a build log, then a prompt."""
    return "".join(f"log line {n}\n" for n in range(lines)) + "PROMPT $"


if __name__ == "__main__":
    mcp.run(show_banner=False)
