"""backstop beside the reference pair (libtmux-mcp 0.1.0a22, installed from PyPI into the
test environment; never copied here), on the fastmcp release under test.

Defect 1 of the reference (ANCHOR.md): it overrides fastmcp's private
``_truncate_to_result``, whose signature gained ``is_error`` in fastmcp 4.1, so from 4.1 on
every over-cap result raises. backstop uses only the public Middleware API (SPEC A4)."""

from __future__ import annotations

import inspect
import os
from importlib.metadata import version

import pytest
from backstop.fastmcp import Backstop, TailPreservingResponseLimitingMiddleware
from fastmcp.exceptions import McpError
from helpers import call, text, wire_size
from probe import make_server

if os.environ.get("CI") == "true":  # CI installs the reference: missing is a failure
    import libtmux_mcp.middleware as reference
else:
    reference = pytest.importorskip("libtmux_mcp.middleware")

pytestmark = pytest.mark.anyio

FASTMCP = tuple(int(part) for part in version("fastmcp").split(".")[:2])
CAP = 1000


def test_the_private_signature_the_reference_overrides() -> None:
    from fastmcp.server.middleware.response_limiting import ResponseLimitingMiddleware

    base = inspect.signature(ResponseLimitingMiddleware._truncate_to_result).parameters
    override = inspect.signature(
        reference.TailPreservingResponseLimitingMiddleware._truncate_to_result
    ).parameters
    assert "is_error" not in override
    assert ("is_error" in base) == (FASTMCP >= (4, 1))


async def test_an_oversized_result_under_the_reference_and_under_backstop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """From fastmcp 4.1 on, the reference's override raises ``TypeError`` (its private
    ``_truncate_to_result`` lacks ``is_error``) and the client gets JSON-RPC -32603
    instead of the output; on 4.0 it answers. backstop caps the result on every release."""
    ref = make_server(reference.TailPreservingResponseLimitingMiddleware(max_size=CAP))
    if FASTMCP >= (4, 1):
        with pytest.raises(McpError) as raised:
            await call(ref, "big", {"lines": 2000})
        assert raised.value.error.code == -32603
        crashes = [r.exc_info[1] for r in caplog.records if r.exc_info is not None]
        assert any(isinstance(e, TypeError) and "is_error" in str(e) for e in crashes), crashes
    else:
        result = await call(ref, "big", {"lines": 2000})
        assert result.is_error is not True
        assert text(result).endswith("PROMPT $")

    ours = await call(make_server(Backstop(max_bytes=CAP)), "big", {"lines": 2000})
    assert ours.is_error is not True
    assert text(ours).endswith("PROMPT $")
    assert wire_size(ours) <= CAP


async def test_same_constructor_arguments_as_the_reference_pair() -> None:
    """Replacing libtmux-mcp's middleware is a one-line import change."""
    ours = make_server(
        TailPreservingResponseLimitingMiddleware(max_size=CAP, tools=["big"]),
        __import__("backstop.fastmcp", fromlist=["x"]).ToolErrorResultMiddleware(transform_errors=True),
    )
    result = await call(ours, "big", {"lines": 2000})
    assert wire_size(result) <= CAP
    failed = await call(ours, "fail_expected_chained")
    assert failed.meta["error_type"] == "PaneNotFound"


async def test_same_texts_as_the_reference_for_chained_and_suggested_errors() -> None:
    """What the reference does well is kept: the message verbatim, the cause's type, the
    suggestion on its own line and in `_meta`."""
    for tool in ["fail_expected_chained", "fail_expected_with_suggestion"]:
        theirs = await call(make_server(reference.ToolErrorResultMiddleware(transform_errors=True)), tool)
        ours = await call(make_server(Backstop()), tool)
        assert text(ours) == text(theirs)
        for key in ["error_type", "expected", "suggestion"]:
            assert ours.meta.get(key) == theirs.meta.get(key)
