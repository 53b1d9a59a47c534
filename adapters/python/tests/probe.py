"""A fastmcp server with the probe tools of the reference's measurements (ANCHOR.md), for
backstop's Python tests: in-process (``make_server``) and over stdio (run this file).

    python probe.py [--backstop | --reference] [--max-bytes N] [--mask]

``--backstop`` adds :class:`backstop.fastmcp.Backstop`; ``--reference`` adds the reference
pair from libtmux-mcp (installed from PyPI into the test environment, never copied here).
"""

from __future__ import annotations

import argparse
import logging
from typing import Any, ClassVar

from fastmcp import FastMCP
from fastmcp.exceptions import NotFoundError, ResourceError, ToolError
from fastmcp.tools import ToolResult
from mcp_types import TextContent
from pydantic import BaseModel, Field, ValidationError

SECRET = "hunter2-secret-value"


class PaneNotFound(Exception):
    """The tmux-like cause of an expected failure."""


try:  # the reference's own class, so that the reference recognises it too
    from libtmux_mcp._utils import ExpectedToolError
except ImportError:  # an environment without the reference

    class ExpectedToolError(ToolError):  # type: ignore[no-redef]
        """An expected, agent-correctable failure, as libtmux-mcp declares them."""

        def __init__(self, *args: object, suggestion: str | None = None) -> None:
            super().__init__(*args, log_level=logging.WARNING)
            self.suggestion = suggestion


class Denied(Exception):
    """A failure that says it is expected by an attribute."""

    expected = True
    suggestion = "Ask for read access first."


class WithMeta(Exception):
    """A failure that carries `_meta` keys of its own (E7), one of them clashing."""

    meta: ClassVar[dict[str, str]] = {"pane": "%99", "expected": "not a bool"}


class Notice(Exception):
    """A failure that declares its own log level (G1)."""

    log_level = logging.INFO


class PaneCrashed(Exception):
    """A failure that declares CRITICAL, a level the core has no name of its own for (G1)."""

    log_level = logging.CRITICAL


class PathNotAllowed(NotFoundError):
    """A path-screening error: a not-found subclass (P1 by family)."""


class BuildReport(BaseModel):
    """The structured result of ``build_report``: its schema is the tool's outputSchema."""

    summary: str = Field(pattern=r"^build")
    lines: int
    log: str


LINE = "line of output with some words in it\n"


def make_server(*middleware: object, mask: bool = False, **identity: Any) -> FastMCP:
    """The probe server with ``middleware`` (the first outermost); ``identity``: more of
    the server's identity (``version``, ``website_url``, ``icons``), which the SDK stamps
    into every result's ``_meta`` from MCP 2026-07-28 on."""
    mcp = FastMCP("probe", mask_error_details=mask, **identity)
    for mw in middleware:
        mcp.add_middleware(mw)  # type: ignore[arg-type]

    @mcp.tool
    def fail_expected_chained() -> str:
        """Expected error chained from a PaneNotFound cause."""
        try:
            raise PaneNotFound("%99")
        except PaneNotFound as cause:
            raise ExpectedToolError("Pane not found: %99") from cause

    @mcp.tool
    def fail_expected_with_suggestion() -> str:
        """Expected error with a suggestion."""
        raise ExpectedToolError(
            "Pane not found: %99", suggestion="Call list_panes to discover valid pane ids."
        )

    @mcp.tool
    def fail_unexpected() -> str:
        """A fault of the server."""
        raise RuntimeError("boom")

    @mcp.tool
    def fail_denied() -> str:
        """Expected by attribute, with a suggestion attribute."""
        raise Denied("read-only session")

    @mcp.tool
    def fail_with_meta() -> str:
        """A failure with its own `_meta` keys."""
        raise WithMeta("pane is gone")

    @mcp.tool
    def fail_declared_info() -> str:
        """A failure that declares INFO as its level."""
        raise Notice("pane already closed")

    @mcp.tool
    def fail_declared_critical() -> str:
        """A failure that declares CRITICAL as its level."""
        raise PaneCrashed("tmux server died")

    @mcp.tool
    def fail_while_handling() -> str:
        """A failure raised while handling another, without ``from``: an implicit cause."""
        try:
            {}["%99"]
        except KeyError:
            raise RuntimeError("no such pane: %99")  # the implicit chain is the case
        return "unreachable"

    @mcp.tool
    def fail_cause_suppressed() -> str:
        """A failure raised ``from None``: its context suppressed, its own type stays."""
        try:
            {}["%99"]
        except KeyError:
            raise RuntimeError("no such pane: %99") from None
        return "unreachable"

    @mcp.tool
    def fail_body_validation() -> str:
        """A pydantic error from the tool's body: a server fault, not a bad call."""
        BuildReport.model_validate({"summary": SECRET, "lines": "many", "log": ""})
        return "unreachable"

    @mcp.tool
    def takes_int(count: int) -> str:
        """Echo an integer."""
        return f"got {count}"

    @mcp.tool
    def limited_fail(payload: str) -> str:
        """Expected error that echoes a large argument, with a suggestion."""
        raise ExpectedToolError(f"Cannot send: {payload}", suggestion="Send less than 1 KB at a time.")

    @mcp.tool
    def big(lines: int) -> str:
        """Many lines, then a prompt."""
        return LINE * lines + "PROMPT $"

    @mcp.tool
    def newlines(count: int) -> str:
        """Bare newlines (2 wire bytes each), then a prompt."""
        return "\n" * count + "PROMPT $"

    @mcp.tool
    def ansi(lines: int) -> str:
        """ANSI-coloured lines (ESC is 6 wire bytes), then a prompt."""
        return "\x1b[31mred\x1b[0m line\n" * lines + "PROMPT $"

    @mcp.tool
    def emoji(count: int) -> str:
        """Emoji ZWJ families, then a prompt."""
        return "👨\u200d👩\u200d👧\u200d👦" * count + "\nPROMPT $"

    @mcp.tool
    def small() -> str:
        """A short answer."""
        return "small and unchanged"

    @mcp.tool
    def build_report(lines: int) -> BuildReport:
        """A build report whose log has ``lines`` lines, its last ``BUILD DONE``."""
        log = "".join(f"log line {n} of the build\n" for n in range(1, lines + 1))
        return BuildReport(summary="build finished: 0 errors", lines=lines, log=log + "BUILD DONE")

    @mcp.tool
    def fail_own_result() -> ToolResult:
        """An error result the tool builds itself, its text a pydantic error that quotes
        the rejected value (V3: redacted on the wire all the same)."""
        try:
            BuildReport.model_validate({"summary": SECRET, "lines": 1, "log": ""})
        except ValidationError as error:
            return ToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
        return ToolResult(content=[TextContent(type="text", text="unreachable")])

    @mcp.resource("tmux://sessions/{name}")
    def tmux_session(name: str) -> str:
        """libtmux-mcp's handlers: a generic ResourceError, no cause, its message says
        not-found (P1 by message)."""
        raise ResourceError(f"Session not found: {name}")

    @mcp.resource("probe://sessions/{name}")
    def session(name: str) -> str:
        """A session resource: missing and forbidden fail as not-found."""
        if name == "missing":
            raise ResourceError(f"Session not found: {name}") from NotFoundError(name)
        if name == "forbidden":
            raise PathNotAllowed(f"Path not allowed: {name}")
        return f"session {name}"

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backstop", action="store_true")
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--max-bytes", type=int, default=1_000_000)
    parser.add_argument("--mask", action="store_true")
    args = parser.parse_args()
    middleware: list[object] = []
    if args.backstop:
        from backstop.fastmcp import Backstop

        middleware.append(Backstop(max_bytes=args.max_bytes))
    if args.reference:
        from libtmux_mcp.middleware import (
            TailPreservingResponseLimitingMiddleware,
            ToolErrorResultMiddleware,
        )

        middleware += [
            TailPreservingResponseLimitingMiddleware(max_size=args.max_bytes),
            ToolErrorResultMiddleware(transform_errors=True),
        ]
    make_server(*middleware, mask=args.mask).run(show_banner=False)


if __name__ == "__main__":
    main()
