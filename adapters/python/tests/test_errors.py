"""Failures become tool results (SPEC E1–E9, V1–V6, P1, G1–G3) through backstop's fastmcp
middleware, on a real fastmcp server over its in-memory transport.

The scenarios of libtmux-mcp's middleware (the reference) are among them: chained
expected errors, suggestions, validation without the rejected values."""

from __future__ import annotations

import logging
from uuid import UUID

import pytest
from backstop.fastmcp import Backstop, ToolErrorResultMiddleware
from fastmcp import Client
from fastmcp.exceptions import McpError
from helpers import CLIENT, call, text, wire
from probe import SECRET, make_server
from pydantic import HttpUrl

pytestmark = pytest.mark.anyio


async def test_e1_e2_e3_unexpected_failure_is_a_result_with_the_message_as_written() -> None:
    result = await call(make_server(Backstop()), "fail_unexpected")
    assert result.is_error is True  # E1
    assert text(result) == "boom"  # E2: no "Error calling tool ...:" prefix
    assert result.meta["error_type"] == "RuntimeError"  # E3: the real type, not ToolError
    assert result.meta["expected"] is False  # E4
    assert "suggestion" not in result.meta  # E5


async def test_e3_e4_chained_expected_error_names_its_cause() -> None:
    """libtmux-mcp: an ExpectedToolError raised from PaneNotFound."""
    result = await call(make_server(Backstop()), "fail_expected_chained")
    assert text(result) == "Pane not found: %99"
    assert result.meta["error_type"] == "PaneNotFound"
    assert result.meta["expected"] is True


async def test_e2_e5_suggestion_on_its_own_line_and_in_meta() -> None:
    result = await call(make_server(Backstop()), "fail_expected_with_suggestion")
    assert text(result) == "Pane not found: %99\nCall list_panes to discover valid pane ids."
    assert result.meta["suggestion"] == "Call list_panes to discover valid pane ids."
    assert result.meta["error_type"] == "ExpectedToolError"


async def test_e4_expected_and_suggestion_attributes_on_any_exception() -> None:
    result = await call(make_server(Backstop()), "fail_denied")
    assert result.meta["error_type"] == "Denied"
    assert result.meta["expected"] is True
    assert text(result) == "read-only session\nAsk for read access first."


async def test_e3_implicit_cause_of_a_failure_raised_while_handling_another() -> None:
    """A failure raised inside ``except`` without ``from`` wraps its ``__context__``."""
    result = await call(make_server(Backstop()), "fail_while_handling")
    assert text(result) == "no such pane: %99"
    assert result.meta["error_type"] == "KeyError"


async def test_e3_suppressed_context_is_no_cause() -> None:
    """``raise ... from None`` suppresses the context: the failure's own type."""
    result = await call(make_server(Backstop()), "fail_cause_suppressed")
    assert result.meta["error_type"] == "RuntimeError"


async def test_e3_masked_details_keep_the_mask_and_get_the_type() -> None:
    result = await call(make_server(Backstop(), mask=True), "fail_unexpected")
    assert text(result) == "Error calling tool 'fail_unexpected'"
    assert result.meta["error_type"] == "RuntimeError"


async def test_e6_no_structured_content_on_an_error_result() -> None:
    # build_report advertises an outputSchema; its failure must not carry structuredContent.
    result = await call(make_server(Backstop()), "build_report", {"lines": "many"})
    assert result.is_error is True
    assert result.structured_content is None


async def test_e8_unknown_tool_is_a_protocol_error_with_a_suggestion() -> None:
    server = make_server(Backstop())
    async with Client(server, client_info=CLIENT) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool_mcp("takes_in", {})
    error = raised.value.error
    assert error.code == -32602
    assert error.message == "Unknown tool: takes_in"
    assert error.data == {"suggestion": "Did you mean 'takes_int'?"}


async def test_v1_v2_v3_rejected_argument_without_its_value(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="backstop")
    result = await call(make_server(Backstop()), "takes_int", {"count": SECRET})
    assert result.meta["error_type"] == "ValidationError"  # V1
    assert result.meta["expected"] is True
    assert text(result) == (  # V2
        "1 validation error for takes_int\ncount\n  Input should be a valid integer [type=invalid_type]"
    )
    assert SECRET not in str(wire(result))  # V3: not in the text, not in _meta
    assert SECRET not in caplog.text  # V3: not in the logs


async def test_v2_url_and_uuid_problems_say_the_format_pydantic_named() -> None:
    server = make_server(Backstop())

    @server.tool
    def open_link(url: HttpUrl, request_id: UUID) -> str:
        """Take a URL and a UUID: pydantic checks their formats."""
        return f"{request_id}: {url}"

    result = await call(server, "open_link", {"url": f"not a url {SECRET}", "request_id": SECRET})
    assert result.meta["error_type"] == "ValidationError"
    assert text(result) == (  # V2: the caller sent strings; "a valid string" would contradict it
        "2 validation errors for open_link\n"
        "url\n  Input should be a valid URL [type=invalid_type]\n"
        "request_id\n  Input should be a valid UUID [type=invalid_type]"
    )
    assert SECRET not in str(wire(result))  # V3


async def test_v2_missing_argument() -> None:
    result = await call(make_server(Backstop()), "takes_int", {})
    assert text(result) == (
        "1 validation error for takes_int\ncount\n  Missing required argument [type=missing_argument]"
    )


async def test_v4_every_unrecognised_name_listed_with_a_close_match() -> None:
    result = await call(make_server(Backstop()), "takes_int", {"bogus_flag": True, "countt": 2})
    assert result.meta["suggestion"] == (
        "Remove or correct the unrecognized argument(s): bogus_flag, countt. "
        "Did you mean 'count' for 'countt'?"
    )
    assert text(result).startswith("3 validation errors for takes_int\n")
    assert text(result).endswith("\n" + result.meta["suggestion"])


async def test_v5_wait_for_previous_names_the_client() -> None:
    result = await call(make_server(Backstop()), "takes_int", {"count": 1, "wait_for_previous": True})
    assert result.meta["suggestion"] == (
        "Remove or correct the unrecognized argument(s): wait_for_previous. wait_for_previous is a "
        "scheduling flag your client (probe-client 9.9) can leak into batched tool calls; retry "
        "the call without it."
    )


async def test_body_validation_error_is_a_server_fault_without_input_values() -> None:
    """A pydantic error from a tool's body is not a rejected call (fastmcp tags it)."""
    result = await call(make_server(Backstop()), "fail_body_validation")
    assert result.meta["error_type"] == "ValidationError"
    assert result.meta["expected"] is False
    assert SECRET not in str(wire(result))
    assert "2 validation errors for BuildReport" in text(result)


async def test_g1_g2_levels_and_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="backstop")
    server = make_server(Backstop())
    await call(server, "fail_unexpected")
    await call(server, "fail_expected_chained")
    records = [r for r in caplog.records if r.name == "backstop"]
    assert [r.levelno for r in records] == [logging.ERROR, logging.WARNING]  # G1
    assert records[1].backstop_error_type == "PaneNotFound"  # G2
    assert records[1].backstop_tool == "fail_expected_chained"
    assert records[1].backstop_expected is True
    assert "Pane not found: %99" in records[1].getMessage()


async def test_g1_declared_level_and_validation_at_warning(caplog: pytest.LogCaptureFixture) -> None:
    """G1: a failure's own ``log_level`` wins; a rejected argument set is WARNING."""
    caplog.set_level(logging.DEBUG, logger="backstop")
    server = make_server(Backstop())
    await call(server, "fail_declared_info")
    await call(server, "fail_declared_critical")
    await call(server, "takes_int", {"count": "many"})
    await call(server, "fail_denied")
    records = [r for r in caplog.records if r.name == "backstop"]
    assert [(r.backstop_error_type, r.levelno) for r in records] == [
        ("Notice", logging.INFO),
        ("PaneCrashed", logging.CRITICAL),
        ("ValidationError", logging.WARNING),
        ("Denied", logging.WARNING),
    ]


async def test_g3_counts_and_callback_and_failing_callback() -> None:
    seen: list[str] = []

    def callback(record: dict, exc: BaseException) -> None:
        seen.append(record["count_key"])
        raise RuntimeError("callback bug")  # G3: logged, never propagated

    backstop = Backstop(on_error=callback)
    server = make_server(backstop)
    await call(server, "fail_unexpected")
    result = await call(server, "fail_unexpected")
    assert result.is_error is True
    assert seen == ["RuntimeError:tools/call"] * 2
    assert backstop.error_counts == {"RuntimeError:tools/call": 2}


async def test_p1_resource_not_found_by_family() -> None:
    """Defect 4 of the reference: a not-found handler error, and a not-found subclass,
    became -32603 "Internal error"; by family they are resource-not-found."""
    server = make_server(Backstop())
    async with Client(server, client_info=CLIENT) as client:
        for uri, message in [
            ("probe://sessions/missing", "Resource not found: Session not found: missing"),
            ("probe://sessions/forbidden", "Resource not found: Path not allowed: forbidden"),
        ]:
            with pytest.raises(McpError) as raised:
                await client.read_resource_mcp(uri)
            error = raised.value.error
            assert error.code == -32602  # R3: fastmcp's in-memory client speaks 2026-07-28
            assert error.message == message
            assert error.data == {"uri": uri}


@pytest.mark.parametrize("make", [Backstop, ToolErrorResultMiddleware])
async def test_p1_a_generic_resource_error_whose_message_says_not_found(make: type) -> None:
    """P1, A0: libtmux-mcp's ``tmux://`` handlers raise fastmcp's generic
    ``ResourceError("Session not found: …")`` with no cause; the family comes from the
    message (P1), as the shaper and rmcp read the same message."""
    async with Client(make_server(make()), client_info=CLIENT) as client:
        with pytest.raises(McpError) as raised:
            await client.read_resource_mcp("tmux://sessions/missing")
    error = raised.value.error
    assert (error.code, error.message) == (-32602, "Resource not found: Session not found: missing")
    assert error.data == {"uri": "tmux://sessions/missing"}


async def test_v3_an_error_result_the_tool_built_itself_loses_the_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """V3: a tool's own ``isError`` result quoting pydantic's
    ``input_value=…`` goes through the core's last-line redaction too (V3)."""
    caplog.set_level(logging.DEBUG, logger="backstop")
    backstop = Backstop()
    result = await call(make_server(backstop), "fail_own_result")
    assert result.is_error is True
    assert "validation error for BuildReport" in text(result)
    assert SECRET not in str(wire(result))
    assert SECRET not in caplog.text
    assert backstop.error_counts  # logged and counted as the failure it is (G1, G3)


async def test_e8_from_the_catalog_when_an_inner_layer_rejects_the_name() -> None:
    """E8 is the core's, from the complete catalog (fastmcp's listing): a misspelt name
    that an inner layer (access control) rejects with an error of its own is still an
    unknown tool, with a did-you-mean."""
    from fastmcp.exceptions import ToolError
    from fastmcp.server.middleware import Middleware

    class Gate(Middleware):
        async def on_call_tool(self, context, call_next):  # type: ignore[no-untyped-def]
            if context.message.name == "fail_unexpectd":
                raise ToolError("not allowed")
            return await call_next(context)

    async with Client(make_server(Backstop(), Gate()), client_info=CLIENT) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool_mcp("fail_unexpectd", {})
    error = raised.value.error
    assert (error.code, error.message) == (-32602, "Unknown tool: fail_unexpectd")
    assert error.data == {"suggestion": "Did you mean 'fail_unexpected'?"}


async def test_o1_layers_added_after_backstop_see_the_failure() -> None:
    """O1: a middleware inside backstop (added after it) sees the exception."""
    from fastmcp.server.middleware import Middleware

    seen: list[str] = []

    class Audit(Middleware):
        async def on_call_tool(self, context, call_next):  # type: ignore[no-untyped-def]
            try:
                return await call_next(context)
            except Exception as exc:
                seen.append(type(exc).__name__)
                raise

    result = await call(make_server(Backstop(), Audit()), "fail_unexpected")
    assert result.is_error is True
    assert seen == ["ToolError"]


async def test_finer_grained_class_takes_the_reference_arguments() -> None:
    middleware = ToolErrorResultMiddleware(transform_errors=True)
    result = await call(make_server(middleware), "fail_expected_chained")
    assert result.meta["error_type"] == "PaneNotFound"
    assert middleware.error_counts == {"PaneNotFound:tools/call": 1}
    assert middleware.get_error_stats() == {"PaneNotFound:tools/call": 1}


async def test_g3_error_callback_called_as_fastmcp_and_the_reference_call_it() -> None:
    """``error_callback(exception, context)``, as fastmcp's ``ErrorHandlingMiddleware``
    (the reference's base class) calls it: a callback written for the reference works."""
    seen: list[tuple[object, object]] = []
    middleware = ToolErrorResultMiddleware(error_callback=lambda exc, context: seen.append((exc, context)))
    server = make_server(middleware)
    await call(server, "fail_unexpected")
    async with Client(server, client_info=CLIENT) as client:
        with pytest.raises(McpError):
            await client.read_resource_mcp("probe://sessions/missing")
    assert [type(exc).__name__ for exc, _ in seen] == ["ToolError", "ResourceError"]
    assert [context.method for _, context in seen] == ["tools/call", "resources/read"]  # type: ignore[attr-defined]
    assert middleware.error_counts == {"RuntimeError:tools/call": 1, "NotFoundError:resources/read": 1}


async def test_e9_cancellation_is_not_converted() -> None:
    """E9: a cancelled call stays cancelled (``CancelledError`` is not a failure)."""
    import asyncio

    import mcp_types
    from fastmcp.server.middleware import MiddlewareContext

    async def cancelled(context: object) -> object:
        raise asyncio.CancelledError

    backstop = Backstop()
    context = MiddlewareContext(
        message=mcp_types.CallToolRequestParams(name="small", arguments={}), method="tools/call"
    )
    with pytest.raises(asyncio.CancelledError):
        await backstop.on_call_tool(context, cancelled)
    assert backstop.error_counts == {}


async def test_e7_own_meta_kept_error_keys_win() -> None:
    result = await call(make_server(Backstop()), "fail_with_meta")
    assert result.meta["pane"] == "%99"
    assert result.meta["expected"] is False  # E3-E5 keys win on a clash
    assert result.meta["error_type"] == "WithMeta"


class _Broken:
    """A session machine whose decision of a result fails: a fault of backstop itself,
    not of the tool."""

    def __init__(self, machine: object) -> None:
        self._machine = machine

    def __getattr__(self, name: str) -> object:
        return getattr(self._machine, name)

    def server_result(self, *args: object) -> object:
        raise RuntimeError("backstop bug")


async def test_strict_off_passes_the_result_on_strict_on_raises() -> None:
    lenient = Backstop()
    lenient._machine = _Broken(lenient._machine)  # type: ignore[assignment]
    result = await call(make_server(lenient), "small")
    assert text(result) == "small and unchanged"

    strict = Backstop(strict=True)
    strict._machine = _Broken(strict._machine)  # type: ignore[assignment]
    async with Client(make_server(strict), client_info=CLIENT) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool_mcp("small", {})
    assert raised.value.error.code == -32603  # backstop's own fault, raised
