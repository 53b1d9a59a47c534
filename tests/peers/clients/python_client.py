"""Drive an MCP server on stdio with the official Python client (`mcp` from PyPI).

    python python_client.py CALLS -- SERVER_COMMAND [ARG...]

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


def as_wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


async def run(calls, command):
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    answers = []
    async with stdio_client(server) as (read, write):
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
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    print(json.dumps(asyncio.run(run(json.loads(sys.argv[1]), sys.argv[3:]))))


if __name__ == "__main__":
    main()
