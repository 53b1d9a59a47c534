"""A small MCP server on the official Python SDK (`mcp` from PyPI, `MCPServer`), for
the `backstop` crate's end-to-end test `proxy_mcp_sdk.rs`.

Run as `python probe_server.py`; it speaks MCP over stdio.
"""

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("sdk-probe")


@mcp.tool()
def takes_int(count: int) -> str:
    """Echo an integer."""
    return f"got {count}"


@mcp.tool()
def small() -> str:
    """A short answer."""
    return "small and unchanged"


@mcp.tool()
def big(lines: int) -> str:
    """Print many lines, then a prompt."""
    return "line of output\n" * lines + "PROMPT $"


if __name__ == "__main__":
    mcp.run()
