"""The middleware drives the core's session machine (SPEC A0): E8 and V6 are decided
before the tool runs, from the machine's own listing of the server's tools (E8, R5),
on a real fastmcp server over its in-memory transport; and the machine on its own
(``backstop._core.SessionMachine``), as the middleware drives it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from backstop import _core
from backstop.fastmcp import Backstop
from fastmcp import Client
from fastmcp.exceptions import McpError
from fastmcp.server.middleware import Middleware
from helpers import CLIENT, call, text
from probe import make_server

pytestmark = pytest.mark.anyio

NEWEST = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


class Audit(Middleware):
    """A layer inside backstop: the names of the calls that reach it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_call_tool(self, context, call_next):  # type: ignore[no-untyped-def]
        self.seen.append(context.message.name)
        return await call_next(context)


def _counting_listings(server: Any) -> list[int]:
    """Count the listings of the server's tools that run no middleware (backstop's own)."""
    listings: list[int] = []
    list_tools = server.list_tools

    async def counted(*, run_middleware: bool = True) -> Any:
        if not run_middleware:
            listings.append(1)
        return await list_tools(run_middleware=run_middleware)

    server.list_tools = counted
    return listings


async def test_e8_before_running_from_the_machines_own_listing() -> None:
    """E8 on a fresh server, before any listing by the client: the machine lists the
    tools itself and answers the misspelt name before the tool (or any layer inside
    backstop) runs, with a did-you-mean."""
    audit = Audit()
    server = make_server(Backstop(), audit)
    listings = _counting_listings(server)
    async with Client(server, client_info=CLIENT) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool_mcp("fail_unexpectd", {})
    error = raised.value.error
    assert (error.code, error.message) == (-32602, "Unknown tool: fail_unexpectd")
    assert error.data == {"suggestion": "Did you mean 'fail_unexpected'?"}
    assert audit.seen == []  # not run
    assert listings == [1]  # one listing of backstop's own


async def test_r5_the_catalog_follows_tools_added_and_removed() -> None:
    """R5: a tool added after the listing is called, not called unknown; a removed one
    is unknown (E8) once fastmcp says so. A client's own listing teaches the machine:
    no listing of backstop's own for a tool it returned."""
    server = make_server(Backstop())
    listings = _counting_listings(server)
    async with Client(server, client_info=CLIENT) as client:
        await client.list_tools()
        listings.clear()  # fastmcp's own handler lists so too
        assert text(await client.call_tool_mcp("small", {})) == "small and unchanged"
        assert listings == []  # the client's listing was learnt

        @server.tool
        def late() -> str:
            """A tool added while the server runs."""
            return "late but here"

        assert text(await client.call_tool_mcp("late", {})) == "late but here"
        server.local_provider.remove_tool("small")
        with pytest.raises(McpError) as raised:
            await client.call_tool_mcp("small", {})
    assert (raised.value.error.code, raised.value.error.message) == (-32602, "Unknown tool: small")


async def test_v6_strict_arguments_rejected_before_running() -> None:
    """V6 strict mode: an argument the tool's schema does not name is rejected before
    the tool runs, as an ``isError`` result naming it (V4)."""
    audit = Audit()
    result = await call(
        make_server(Backstop(strict_arguments=True), audit), "takes_int", {"count": 1, "cuont": 2}
    )
    assert result.is_error is True
    assert "cuont" in result.meta["suggestion"]
    assert audit.seen == []
    # Off by default: the tool's own validation decides, after it runs.
    audit = Audit()
    result = await call(make_server(Backstop(), audit), "takes_int", {"count": 1, "cuont": 2})
    assert result.is_error is True
    assert audit.seen == ["takes_int"]


def _machine(cap: int = 1000, tools: list[str] | None = None) -> Any:
    """A machine whose catalog a client's listing of ``tools`` taught."""
    machine = _core.SessionMachine(_core.Limit(cap))
    if tools is not None:
        machine.client_request(1, "tools/list", may_send=False)
        assert machine.server_response(1, {"tools": [{"name": name} for name in tools]}) == (None, None, None)
    return machine


def test_a0_e8_the_machine_asks_to_list_first() -> None:
    machine = _machine()
    own = machine.client_request(2, "tools/call", tool="ehco", arguments=[], meta=NEWEST)
    assert own == {"method": "tools/list", "params": {"_meta": NEWEST}}
    assert machine.own_listing_answer({"tools": [{"name": "echo"}]}) is None  # one page: complete
    result, error, truncation = machine.before_running(2)
    assert result is None and truncation is None
    assert error == {
        "code": -32602,
        "message": "Unknown tool: ehco",
        "data": {"suggestion": "Did you mean 'echo'?"},
    }
    assert len(machine) == 0  # answered: nothing pending


def test_a0_a_failed_listing_never_makes_a_tool_unknown() -> None:
    machine = _machine()
    assert machine.client_request(2, "tools/call", tool="echo") is not None
    assert machine.own_listing_answer(None) is None  # the listing failed
    assert machine.before_running(2) is None  # run it
    result, error, _ = machine.server_failure(2, {"type_name": "RuntimeError", "message": "boom"})
    assert error is None and result["isError"] is True
    assert machine.take_log_records()[0]["count_key"] == "RuntimeError:tools/call"
    assert machine.error_counts() == {"RuntimeError:tools/call": 1}
    assert machine.take_log_records() == []


def test_a0_e8_the_machine_lists_again_when_a_failure_means_the_tool_is_gone() -> None:
    """E8, R5: the machine, not the middleware, reads fastmcp's ``NotFoundError("Unknown
    tool: 'x'")`` for the tool called as the server's word that its tools changed: its
    answer is its own listing to make first, once per call; then the call is decided
    against the new catalog (``test_r5_the_catalog_follows_tools_added_and_removed``
    drives it through fastmcp)."""
    gone = {"type_name": "NotFoundError", "message": "Unknown tool: 'small'"}
    for other in (
        {**gone, "message": "Unknown tool: 'large'"},
        {"type_name": "PaneNotFound", "message": "Pane not found: %9"},
    ):
        machine = _machine(tools=["small", "large"])
        machine.client_request(2, "tools/call", tool="small")
        result, error, _ = machine.server_failure(2, other)
        assert error is None and result["isError"] is True, other  # converted (E1)
    machine = _machine(tools=["small", "large"])
    assert machine.client_request(2, "tools/call", tool="small") is None  # known
    own = machine.server_failure(2, gone)
    assert own == {"method": "tools/list", "params": {}}
    assert machine.own_listing_answer({"tools": [{"name": "large"}]}) is None
    result, error, _ = machine.before_running(2)
    assert result is None and error["message"] == "Unknown tool: small"
    # Listed once for a call: the same failure again is converted, not listed for.
    machine.client_request(3, "tools/call", tool="large")
    assert isinstance(machine.server_failure(3, {**gone, "message": "Unknown tool: 'large'"}), dict)
    machine.own_listing_answer({"tools": [{"name": "large"}]})
    assert machine.before_running(3) is None
    result, error, _ = machine.server_failure(3, {**gone, "message": "Unknown tool: 'large'"})
    assert error is None and result["isError"] is True


def test_b3_e2_a_failure_text_the_core_can_recognise_is_handed_over_whole() -> None:
    """B3, E2: a framework's failure text longer than the tail a cut needs, but short
    enough for the core to recognise (``HeldEnds::held_whole_up_to``), is handed over
    whole: it is converted at any cap (its wrapper goes; logged and counted), not cut
    from its tail as a text of the tool's own."""
    text = "Error calling tool 'logs': " + "boom " * 40_000
    failed = {"content": [{"type": "text", "text": text}], "isError": True}
    for cap in (1000, 300_000):
        machine = _machine(cap, tools=["logs"])
        machine.client_request(2, "tools/call", tool="logs")
        result, error, _ = machine.server_result(2, failed)
        assert error is None and result["_meta"]["error_type"] == "InternalError", cap
        assert machine.error_counts() == {"InternalError:tools/call": 1}


def _wire_size(result: dict[str, Any]) -> int:
    return len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())


def test_r4_l4_a_result_of_2026_07_28_carries_result_type_and_the_stamp_counted() -> None:
    """R4, L4: on 2026-07-28 the SDK adds ``resultType`` and its identity stamp after
    the middleware; the machine counts both, so a result that fits without them is cut
    to fit with them, and carries them."""
    stamp = {"name": "a-server-with-a-long-name", "version": "1.2.3"}
    bare = {"content": [{"type": "text", "text": ""}], "isError": False}
    fits_bare = "x" * (1000 - _wire_size(bare))
    result = {"content": [{"type": "text", "text": fits_bare}], "isError": False}
    assert _wire_size(result) == 1000
    machine = _machine(tools=["logs"])
    machine.set_server_stamp(stamp)
    machine.client_request(2, "tools/call", tool="logs", meta=NEWEST)
    assert machine.before_running(2) is None
    sent, error, truncation = machine.server_result(2, result)
    assert error is None and truncation is not None
    assert sent["resultType"] == "complete"
    assert sent["_meta"]["io.modelcontextprotocol/serverInfo"] == stamp
    assert _wire_size(sent) <= 1000
    # On 2025-11-25 nothing is added: it fits, and passes as it is.
    machine.client_request(3, "tools/call", tool="logs", handshake={"protocolVersion": "2025-11-25"})
    assert machine.server_result(3, result) == (None, None, None)


def test_v6_strict_machine_rejects_before_running() -> None:
    machine = _core.SessionMachine(_core.Limit(1000), strict=True)
    assert machine.strict is True
    machine.client_request(1, "tools/list", may_send=False)
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    machine.server_response(1, {"tools": [{"name": "takes_int", "inputSchema": schema}]})
    machine.client_request(2, "tools/call", tool="takes_int", arguments=["count"])
    assert machine.before_running(2) is None
    machine.client_request(3, "tools/call", tool="takes_int", arguments=["count", "cuont"])
    result, error, _ = machine.before_running(3)
    assert error is None and result["isError"] is True
    assert "cuont" in result["_meta"]["suggestion"]


def test_forget_leaves_nothing_pending() -> None:
    machine = _machine(tools=["t"])
    machine.client_request(2, "tools/call", tool="t")
    assert len(machine) == 1
    assert machine.forget(2) is True
    assert machine.forget(2) is False
    assert machine.server_result(2, {"content": []}) == (None, None, None)
