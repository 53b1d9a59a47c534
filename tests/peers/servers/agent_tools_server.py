"""A fastmcp server (from PyPI) whose tools an agent client calls in the reader-fit tests
(adapters/cli/tests/agent_codex.rs, agent_gemini.rs; SPEC L18, E12).

Run as `python agent_tools_server.py`: stdio. `scrollback(lines)` returns `lines` lines of
terminal output ending in a prompt; `fail()` fails as a tool whose pane is gone.
"""

from fastmcp import FastMCP

mcp = FastMCP("agent-tools")


@mcp.tool
def scrollback(lines: int) -> str:
    """The last `lines` lines of a terminal, the prompt last."""
    return "".join(f"line {n:06} of output\n" for n in range(1, lines + 1)) + "PROMPT $"


@mcp.tool
def fail() -> str:
    """Capture a pane that is gone."""
    raise RuntimeError("Pane not found: %5")


if __name__ == "__main__":
    mcp.run(show_banner=False)
