"""Helpers of the Python tests: wire sizes and calls through fastmcp's in-memory client."""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from fastmcp import Client

CLIENT = mcp_types.Implementation(name="probe-client", version="9.9")


def wire(result: Any) -> dict[str, Any]:
    """A CallToolResult as the wire carries it: MCP's names, members the server sent."""
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def wire_size(result: Any) -> int:
    """The wire size of a result (SPEC Words): compact JSON, non-ASCII as UTF-8."""
    return len(json.dumps(wire(result), separators=(",", ":"), ensure_ascii=False).encode())


async def call(
    server: Any, name: str, arguments: dict[str, Any] | None = None, client: str | None = None
) -> Any:
    """One tools/call through fastmcp's in-memory client (named ``client``, or the probe
    client), the raw MCP result."""
    info = CLIENT if client is None else mcp_types.Implementation(name=client, version="1")
    async with Client(server, client_info=info) as session:
        return await session.call_tool_mcp(name, arguments or {})


def text(result: Any) -> str:
    return result.content[0].text
