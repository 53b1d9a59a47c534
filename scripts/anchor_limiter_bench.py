#!/usr/bin/env python3
"""Side-by-side benchmark of the *reference* ("anchor") response limiter.

What it measures
    The cost of one tools/call result going through libtmux-mcp's
    TailPreservingResponseLimitingMiddleware exactly as fastmcp runs it:
    the middleware is entered through fastmcp's Middleware.__call__ with a
    "tools/call" MiddlewareContext, its stub call_next hands back a prebuilt
    ToolResult holding one text block of `scrollback(size)` bytes, and the
    reference code then serializes the whole result (pydantic_core.to_json)
    to measure it, joins the text blocks and keeps the tail under the cap.
    Nothing of the limiter is reimplemented here; only the input is built
    and the clock is read.  Per size: one warm-up, then the median of N
    runs (time.perf_counter around the awaited middleware call).

    It also reports the wire size of the returned result (compact JSON,
    ensure_ascii=False, separators=(',', ':')) of the CallToolResult that
    fastmcp would hand to the MCP runner, shaped by mcp_types for a
    handshake-era protocol version, so the overshoot of the cap is visible.

Input (same as the Rust benchmark)
    scrollback(size) = "".join(f"line {n:010d} of output\\n"
                               for n in range(size // 26))
    (every line is exactly 26 bytes), sizes 1e6, 1e7, 1e8 by default.

Installing the reference (run the script with that venv's python):
    python3 -m venv /tmp/anchor && /tmp/anchor/bin/pip install \\
        libtmux-mcp==0.1.0a22 fastmcp==4.0.2 fastmcp-slim==4.0.2
    /tmp/anchor/bin/python scripts/anchor_limiter_bench.py

Output: one JSON object per line on stdout.  fastmcp's own WARNING log line
("response exceeds size limit") goes to stderr on every over-cap call, as in
a real server; pass --no-log to silence it and time the limiter without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import statistics
import sys
import time
from importlib import metadata

LINE_BYTES = 26
DEFAULT_SIZES = (1_000_000, 10_000_000, 100_000_000)
DEFAULT_RUNS = 5
DEFAULT_MAX_SIZE = 1_000_000
# The handshake-era revision the stdio wire captures in ANCHOR.md speak.
WIRE_PROTOCOL_VERSION = "2025-11-25"


def scrollback(size: int) -> str:
    """size // 26 lines of exactly 26 bytes each."""
    return "".join(f"line {n:010d} of output\n" for n in range(size // LINE_BYTES))


def parse_sizes(text: str) -> list[int]:
    sizes = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        value = int(float(part)) if ("e" in part.lower() or "." in part) else int(part)
        if value < LINE_BYTES:
            raise argparse.ArgumentTypeError(f"size {value} is below one line ({LINE_BYTES} bytes)")
        sizes.append(value)
    if not sizes:
        raise argparse.ArgumentTypeError("no sizes given")
    return sizes


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def load_reference():
    """Import the reference packages; fail with the install hint if absent."""
    try:
        import mcp_types
        from fastmcp.server.middleware.middleware import MiddlewareContext
        from fastmcp.server.mixins.mcp_operations import _normalize_call_tool_result
        from fastmcp.tools.base import ToolResult
        from libtmux_mcp.middleware import TailPreservingResponseLimitingMiddleware
        from mcp_types import methods as mcp_methods
    except ImportError as exc:  # pragma: no cover - environment problem
        sys.exit(
            f"cannot import the reference packages ({exc}).\n"
            "Install them and run this script with that interpreter:\n"
            "  python3 -m venv /tmp/anchor && /tmp/anchor/bin/pip install "
            "libtmux-mcp==0.1.0a22 fastmcp==4.0.2 fastmcp-slim==4.0.2\n"
            "  /tmp/anchor/bin/python scripts/anchor_limiter_bench.py"
        )
    # The tool list libtmux-mcp's own server hands to the limiter.
    try:
        from libtmux_mcp.server import _RESPONSE_LIMITED_TOOLS as limited_tools
    except Exception:  # pragma: no cover - server module changed
        limited_tools = ["capture_pane"]
    return {
        "mcp_types": mcp_types,
        "mcp_methods": mcp_methods,
        "MiddlewareContext": MiddlewareContext,
        "ToolResult": ToolResult,
        "Limiter": TailPreservingResponseLimitingMiddleware,
        "normalize": _normalize_call_tool_result,
        "limited_tools": list(limited_tools),
    }


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("fastmcp", "fastmcp-slim", "libtmux-mcp", "mcp", "mcp-types", "pydantic-core"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def wire_result(ref, result) -> dict:
    """The result object fastmcp's tools/call handler gives the MCP runner,
    dumped and shaped the way the runner does for a handshake-era client."""
    call_tool_result = ref["normalize"](result.to_mcp_result())
    dumped = call_tool_result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return ref["mcp_methods"].serialize_server_result("tools/call", WIRE_PROTOCOL_VERSION, dumped)


async def bench_one(ref, limiter, tool_name: str, size: int, runs: int) -> dict:
    text = scrollback(size)
    mt = ref["mcp_types"]
    inner = ref["ToolResult"](content=[mt.TextContent(type="text", text=text)])

    async def call_next(context):  # the tool body: returns the prebuilt result
        return inner

    context = ref["MiddlewareContext"](
        message=mt.CallToolRequestParams(name=tool_name, arguments={}),
        source="client",
        type="request",
        method="tools/call",
    )

    async def once():
        start = time.perf_counter()
        result = await limiter(context, call_next)
        return time.perf_counter() - start, result

    _, result = await once()  # warm-up
    timings = []
    for _ in range(runs):
        elapsed, result = await once()
        timings.append(elapsed)

    out_text = "".join(b.text for b in result.content if isinstance(b, mt.TextContent))
    wire = json.dumps(wire_result(ref, result), ensure_ascii=False, separators=(",", ":"))
    wire_bytes = len(wire.encode("utf-8"))
    return {
        "text_bytes": len(text.encode("utf-8")),
        # The limiter hands back a new ToolResult whenever the serialized
        # size was over max_size; the header is there only if text was cut.
        "rebuilt": result is not inner,
        "header": out_text.startswith("[... truncated "),
        "out_text_bytes": len(out_text.encode("utf-8")),
        "out_head": out_text[:60],
        "out_ends_with_last_line": out_text.endswith(text[-LINE_BYTES:]),
        "wire_bytes": wire_bytes,
        "median_s": statistics.median(timings),
        "runs": timings,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(
            "Time libtmux-mcp 0.1.0a22's TailPreservingResponseLimitingMiddleware "
            "(on fastmcp 4.0.2) on one text block of synthetic scrollback, "
            "called the way fastmcp calls a tools/call middleware."
        ),
        epilog=(
            "Install the reference: python3 -m venv /tmp/anchor && /tmp/anchor/bin/pip "
            "install libtmux-mcp==0.1.0a22 fastmcp==4.0.2 fastmcp-slim==4.0.2"
        ),
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=list(DEFAULT_SIZES),
        help="comma-separated output sizes in bytes (default: 1000000,10000000,100000000)",
    )
    parser.add_argument(
        "--runs", type=positive_int, default=DEFAULT_RUNS, help="timed runs per size (default: 5)"
    )
    parser.add_argument(
        "--max-size",
        type=positive_int,
        default=DEFAULT_MAX_SIZE,
        help="the limiter's max_size in bytes (default: 1000000)",
    )
    parser.add_argument(
        "--no-log",
        action="store_true",
        help="silence fastmcp's per-call WARNING (default: keep fastmcp's logging as configured)",
    )
    args = parser.parse_args(argv)

    ref = load_reference()
    if args.no_log:
        logging.getLogger("fastmcp.server.middleware.response_limiting").setLevel(logging.ERROR)

    limiter = ref["Limiter"](max_size=args.max_size, tools=ref["limited_tools"])
    tool_name = ref["limited_tools"][0]
    vers = versions()
    cap_mb = args.max_size / 1_000_000
    case = f"limit_{cap_mb:g}MB"

    for size in args.sizes:
        measured = asyncio.run(bench_one(ref, limiter, tool_name, size, args.runs))
        record = {
            "impl": "anchor",
            "case": case,
            "size_bytes": size,
            "median_s": measured["median_s"],
            "runs": measured["runs"],
            "max_size": args.max_size,
            "text_bytes": measured["text_bytes"],
            "rebuilt": measured["rebuilt"],
            "header": measured["header"],
            "out_text_bytes": measured["out_text_bytes"],
            "out_head": measured["out_head"],
            "out_ends_with_last_line": measured["out_ends_with_last_line"],
            "wire_bytes": measured["wire_bytes"],
            "wire_over_cap_bytes": measured["wire_bytes"] - args.max_size,
            "wire_over_cap_ratio": round(measured["wire_bytes"] / args.max_size, 4),
            "wire_protocol_version": WIRE_PROTOCOL_VERSION,
            "tool": tool_name,
            "logging": "off" if args.no_log else "fastmcp-default",
            "versions": vers,
        }
        print(json.dumps(record, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
