"""A fastmcp server (from PyPI) whose tools an agent client calls in the reader-fit tests
(adapters/cli/tests/agent_codex.rs, agent_gemini.rs; SPEC L18, E12).

Run as `python agent_tools_server.py`: stdio. `scrollback(lines)` returns `lines` lines of
terminal output ending in a prompt; `fail()` fails as a tool whose pane is gone (fastmcp
answers an `isError` result), and `fail_rpc()` as a server that answers the call with a
JSON-RPC error `-32603` instead (which backstop converts, SPEC E2).
"""

from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from mcp.shared.exceptions import MCPError


class AnswerWithAnError(Middleware):
    """`fail_rpc` is answered with a JSON-RPC error: raised outside the tool, fastmcp
    sends it as it is instead of turning it into an `isError` result."""

    async def on_call_tool(self, context, call_next):
        if context.message.name == "fail_rpc":
            raise MCPError(-32603, "Pane not found: %5")
        return await call_next(context)


mcp = FastMCP("agent-tools", middleware=[AnswerWithAnError()])


@mcp.tool
def scrollback(lines: int) -> str:
    """The last `lines` lines of a terminal, the prompt last."""
    return "".join(f"line {n:06} of output\n" for n in range(1, lines + 1)) + "PROMPT $"


@mcp.tool
def fail() -> str:
    """Capture a pane that is gone."""
    raise RuntimeError("Pane not found: %5")


@mcp.tool
def fail_rpc() -> str:
    """Capture a pane that is gone, the server answering with an error."""
    return "never returned: the middleware answers first"


if __name__ == "__main__":
    mcp.run(show_banner=False)
