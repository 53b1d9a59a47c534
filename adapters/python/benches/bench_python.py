#!/usr/bin/env python3
"""backstop for Python against the reference, in one process, on the same inputs.

    python bench_python.py [--runs 20] [--calls 2000]

Run it with a Python that has the backstop wheel, fastmcp 4.0.x (the last release line
the reference runs on) and libtmux-mcp 0.1.0a22 installed — scripts/test-python makes one
at target/py-fastmcp-4.0. It prints one JSON object per line:

- ``limit``: one tools/call result holding one text block of scrollback (1, 10, 100 MB;
  every line 26 bytes, as in scripts/anchor_limiter_bench.py) at a 1 MB cap, through each
  limiter *as fastmcp runs a middleware* (``Middleware.__call__`` with a tools/call
  context; ``call_next`` hands back the prebuilt ``ToolResult``): backstop's
  ``TailPreservingResponseLimitingMiddleware``, the reference's, and backstop's native
  ``Limit.limit`` alone on the result as a dict; and backstop's middleware on the result
  as fastmcp makes it of a tool returning ``str`` (the text block, and the text again as
  ``structuredContent.result``). Median of ``--runs`` after a warm-up.
- ``small_call``: the time of one small successful ``tools/call`` through fastmcp's
  in-memory client against the same server bare and with ``Backstop()``: ``--calls``
  calls each, alternating between the two servers, each timed alone; the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import time
from importlib import metadata

import mcp_types
from backstop import Limit
from backstop.fastmcp import Backstop, TailPreservingResponseLimitingMiddleware
from fastmcp import Client, FastMCP
from fastmcp.server.middleware import MiddlewareContext
from fastmcp.tools import ToolResult

LINE_BYTES = 26
CAP = 1_000_000


def scrollback(size: int) -> str:
    return "".join(f"line {n:010d} of output\n" for n in range(size // LINE_BYTES))


async def time_middleware(middleware, inner: ToolResult, runs: int) -> float:
    async def call_next(context):
        return inner

    context = MiddlewareContext(
        message=mcp_types.CallToolRequestParams(name="capture_pane", arguments={}),
        source="client",
        type="request",
        method="tools/call",
    )
    await middleware(context, call_next)  # warm-up
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        result = await middleware(context, call_next)
        timings.append(time.perf_counter() - start)
    assert result is not inner, "the limiter did not cut"
    return statistics.median(timings)


def time_native(text: str, runs: int) -> float:
    limit = Limit(CAP)
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    limit.limit("capture_pane", result)
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        limit.limit("capture_pane", result)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


async def bench_limit(runs: int) -> None:
    try:
        from libtmux_mcp.middleware import TailPreservingResponseLimitingMiddleware as Reference
    except ImportError:
        Reference = None
    for size in (1_000_000, 10_000_000, 100_000_000):
        text = scrollback(size)
        inner = ToolResult(content=[mcp_types.TextContent(type="text", text=text)])
        ours = await time_middleware(TailPreservingResponseLimitingMiddleware(max_size=CAP), inner, runs)
        wrapped = ToolResult(
            content=[mcp_types.TextContent(type="text", text=text)], structured_content={"result": text}
        )
        row = {
            "bench": "limit",
            "size_mb": size // 1_000_000,
            "runs": runs,
            "backstop_middleware_s": ours,
            "backstop_native_s": time_native(text, runs),
            "backstop_middleware_str_tool_s": await time_middleware(
                TailPreservingResponseLimitingMiddleware(max_size=CAP), wrapped, runs
            ),
        }
        del wrapped
        if Reference is not None:
            row["reference_s"] = await time_middleware(Reference(max_size=CAP), inner, runs)
        print(json.dumps(row), flush=True)


def small_server(*middleware) -> FastMCP:
    mcp = FastMCP("bench")
    for mw in middleware:
        mcp.add_middleware(mw)

    @mcp.tool
    def small(n: int) -> str:
        """A short answer."""
        return f"answer {n}"

    return mcp


async def bench_small_call(calls: int) -> None:
    servers = {"bare": small_server(), "backstop": small_server(Backstop())}
    per_call: dict[str, list[float]] = {name: [] for name in servers}
    async with Client(servers["bare"]) as bare, Client(servers["backstop"]) as wrapped:
        clients = {"bare": bare, "backstop": wrapped}
        for client in clients.values():  # warm-up
            for n in range(50):
                await client.call_tool("small", {"n": n})
        # Calls alternate between the two servers, so that the load of a shared machine
        # falls on both alike; each call is timed alone and the medians compared.
        for n in range(calls):
            for name, client in clients.items():
                start = time.perf_counter()
                await client.call_tool("small", {"n": n})
                per_call[name].append(time.perf_counter() - start)
    bare_s = statistics.median(per_call["bare"])
    ours = statistics.median(per_call["backstop"])
    print(
        json.dumps(
            {
                "bench": "small_call",
                "calls": calls,
                "bare_s": bare_s,
                "backstop_s": ours,
                "added_fraction": (ours - bare_s) / bare_s,
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    # fastmcp's and backstop's per-call log lines are not what is measured.
    logging.disable(logging.WARNING)
    print(json.dumps({"bench": "versions", **{d: metadata.version(d) for d in ("fastmcp", "backstop-mcp")}}))
    asyncio.run(bench_limit(args.runs))
    asyncio.run(bench_small_call(args.calls))


if __name__ == "__main__":
    main()
