"""Drive an MCP server with the official Python client (`mcp` from PyPI), on stdio or
over Streamable HTTP:

    python python_client.py CALLS -- SERVER_COMMAND [ARG...]
    python python_client.py CALLS --url URL

CALLS is a JSON array of `{"name": ..., "arguments": {...}}`. The client starts the
server (with this process's environment), initializes, lists the tools, and makes each
call with `ClientSession.call_tool` — which validates a result against the tool's
advertised `outputSchema`. It prints one JSON object on stdout:

    {"client": "mcp <version>", "tools": [<tool>...],
     "calls": [{"result": <CallToolResult>} | {"error": "<ExceptionType>: <message>"}...]}

Results are dumped with the wire's member names and only the members the server sent.
"""

import asyncio
import json
import os
import sys
from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def as_wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def transport(target):
    """The client transport: the server command on stdio, or `--url URL`."""
    if target[0] == "--url":
        return streamable_http_client(target[1])
    server = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
    return stdio_client(server)


async def run(calls, target):
    answers = []
    async with transport(target) as (read, write):
        # A bound, not a measurement: a server that never answers fails the call.
        async with ClientSession(read, write, read_timeout_seconds=120) as session:
            await session.initialize()
            tools = [as_wire(tool) for tool in (await session.list_tools()).tools]
            for call in calls:
                try:
                    result = await session.call_tool(call["name"], call.get("arguments", {}))
                    answers.append({"result": as_wire(result)})
                except Exception as error:  # what the client raises is what is reported
                    answers.append({"error": f"{type(error).__name__}: {error}"})
    return {"client": f"mcp {version('mcp')}", "tools": tools, "calls": answers}


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "--url":
        target = sys.argv[2:]
    elif len(sys.argv) >= 4 and sys.argv[2] == "--":
        target = sys.argv[3:]
    else:
        sys.exit(__doc__)
    print(json.dumps(asyncio.run(run(json.loads(sys.argv[1]), target))))


if __name__ == "__main__":
    main()
