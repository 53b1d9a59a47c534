#!/usr/bin/env python3
"""Times the reference implementation's error-result build, beside our
`cargo bench -p backstop-core --bench error_result`.

The reference is `_error_tool_result` of libtmux-mcp 0.1.0a22 (on fastmcp 4.0.2), the
function its ToolErrorResultMiddleware calls for a failed tool call. Two cases, the same
as ours: an expected failure chained from a cause, with a suggestion; and an
argument-validation failure (pydantic) with an unrecognised `wait_for_previous`. Each
run builds the result and serializes it to its compact wire JSON.

Install the reference first (see shared/reference/ANCHOR.md):

    python3 -m venv /tmp/anchor && /tmp/anchor/bin/pip install libtmux-mcp==0.1.0a22 \\
        fastmcp==4.0.2 fastmcp-slim==4.0.2
    /tmp/anchor/bin/python scripts/anchor_error_bench.py

Prints one JSON object per case: {"impl", "case", "median_s", "runs"}; each run is the
mean over --loops builds.
"""
import argparse
import json
import statistics
import time

import pydantic
from libtmux_mcp._utils import ExpectedToolError
from libtmux_mcp.middleware import _error_tool_result


class PaneNotFound(Exception):
    pass


class TakesInt(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    count: int


def expected_with_cause():
    try:
        try:
            raise PaneNotFound("pane %99 does not exist")
        except PaneNotFound as cause:
            raise ExpectedToolError(
                "Pane not found: %99", suggestion="Call list_panes to discover valid pane ids."
            ) from cause
    except ExpectedToolError as error:
        return error


def validation_with_unknown_names():
    try:
        TakesInt.model_validate({"count": 1, "wait_for_previous": True, "bogus_flag": 2})
    except pydantic.ValidationError as error:
        return error


def wire(result):
    body = result.to_mcp_result()
    if isinstance(body, tuple):
        body = body[0]
    if hasattr(body, "model_dump"):
        body = body.model_dump(by_alias=True, mode="json", exclude_none=True)
    elif isinstance(body, list):
        body = {"content": [b.model_dump(by_alias=True, mode="json", exclude_none=True) for b in body]}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--loops", type=int, default=2000)
    args = parser.parse_args()
    for name, make in [("expected_with_cause_and_suggestion", expected_with_cause),
                       ("validation_with_unknown_names", validation_with_unknown_names)]:
        error = make()
        wire(_error_tool_result(error))  # warm-up
        runs = []
        for _ in range(args.runs):
            start = time.perf_counter()
            for _ in range(args.loops):
                wire(_error_tool_result(error))
            runs.append((time.perf_counter() - start) / args.loops)
        print(json.dumps({"impl": "anchor", "case": name, "median_s": statistics.median(runs),
                          "runs": runs, "sample": wire(_error_tool_result(error)).decode()}))


if __name__ == "__main__":
    main()
