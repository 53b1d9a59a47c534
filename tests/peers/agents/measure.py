"""Measure the longest tool result an agent client passes to its model unchanged.

The numbers behind backstop's client profiles (SPEC L18): run the pinned client headless
(as adapters/cli/tests/agent_*.rs do) against a scripted model endpoint on loopback and a
minimal stdio MCP server whose one tool returns a single text block of exactly N
characters, and bisect N on whether the tool result the endpoint receives is that text
whole. Standard library only.

    python3 measure.py codex ascii 30000 60000
    python3 measure.py gemini cjk 30000 45000

CODEX_MODEL names the model Codex is configured with (gpt-5.5 by default: its limits
are the model's). Kinds: `ascii` (lines `line 000001 of output`), `cjk` (lines of `漢字`: 3 UTF-8 bytes,
1 UTF-16 unit each) and `emoji` (lines of `😀`: 4 UTF-8 bytes, 2 UTF-16 units, 1 code
point each), so a byte, UTF-16 or code-point count can be told apart. The clients come
from target/agent-peers (`.ci/run` installs them), or AGENT_PEERS.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve()
CODEX_MODEL = os.environ.get("CODEX_MODEL", "gpt-5.5")
LINES = {
    "ascii": "line {n:06} of output\n",
    "cjk": "漢字" * 10 + "\n",
    "emoji": "😀" * 10 + "\n",
}


def peers() -> Path:
    """Where the pinned clients are installed."""
    if "AGENT_PEERS" in os.environ:
        return Path(os.environ["AGENT_PEERS"])
    return HERE.parents[3] / "target" / "agent-peers"


def text_of(kind: str, chars: int) -> str:
    """A text of exactly `chars` code points of `kind`'s lines."""
    out, length, n = [], 0, 1
    while length < chars:
        line = LINES[kind].format(n=n)
        out.append(line)
        length += len(line)
        n += 1
    return "".join(out)[:chars]


def serve_mcp(kind: str, chars: int) -> None:
    """A stdio MCP server (one JSON-RPC message a line) with the one tool `text`."""
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "measure", "version": "1"},
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            result = {
                "tools": [
                    {"name": "text", "description": "A text.", "inputSchema": schema}
                ]
            }
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": text_of(kind, chars)}]}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {"code": -32601, "message": method},
            }
            print(json.dumps(reply), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)


def sse(events: list[tuple[str | None, dict]]) -> bytes:
    """An SSE body of `(event name, data)` pairs."""
    out = b""
    for name, data in events:
        if name:
            out += f"event: {name}\n".encode()
        out += f"data: {json.dumps(data)}\n\n".encode()
    return out


def codex_answer(body: dict) -> tuple[bytes, object]:
    """Codex: its tool search where it offers one (gpt-5.5), the call, a final message."""
    kinds = [item.get("type") for item in body.get("input", [])]
    output = next(
        (
            i["output"]
            for i in body.get("input", [])
            if i.get("type") == "function_call_output"
        ),
        None,
    )
    if output is not None:
        item = {
            "type": "message",
            "role": "assistant",
            "id": "m",
            "content": [{"type": "output_text", "text": "done"}],
        }
    elif "tool_search_output" in kinds or not any(
        tool.get("type") == "tool_search" for tool in body.get("tools", [])
    ):
        item = {
            "type": "function_call",
            "id": "fc",
            "call_id": "call-1",
            "name": "text",
            "namespace": "mcp__measure",
            "arguments": "{}",
        }
    else:
        item = {
            "type": "tool_search_call",
            "id": "ts",
            "call_id": "search-1",
            "execution": "client",
            "arguments": {"query": "text", "limit": 8},
        }
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    return sse(
        [
            ("response.created", {"type": "response.created", "response": {"id": "r"}}),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {"type": "response.completed", "response": {"id": "r", "usage": usage}},
            ),
        ]
    ), output


def gemini_answer(path: str, body: dict) -> tuple[bytes, object]:
    """Gemini CLI: the router's JSON, then the call, then a final text."""
    if ":countTokens" in path:
        return json.dumps({"totalTokens": 10}).encode(), None
    if ":generateContent" in path:
        choice = json.dumps({"reasoning": "one tool call", "model_choice": "flash"})
        content = {"role": "model", "parts": [{"text": choice}]}
        return json.dumps(
            {"candidates": [{"content": content, "finishReason": "STOP"}]}
        ).encode(), None
    responses = [
        part["functionResponse"]
        for content in body.get("contents", [])
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]
    if responses:
        parts, output = [{"text": "done"}], responses[0]["response"]
    else:
        parts, output = (
            [{"functionCall": {"name": "mcp_measure_text", "args": {}}}],
            None,
        )
    usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
    event = {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": usage,
    }
    return sse([(None, event)]), output


def endpoint(client: str) -> tuple[ThreadingHTTPServer, list]:
    """The scripted model endpoint on a loopback port of the kernel's choosing; the
    list gets the tool result the client sends."""
    received: list = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = json.loads(
                self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}"
            )
            if client == "codex":
                answer, output = codex_answer(body)
                kind = "text/event-stream"
            else:
                answer, output = gemini_answer(self.path, body)
                kind = (
                    "text/event-stream"
                    if "alt=sse" in self.path
                    else "application/json"
                )
            if output is not None:
                received.append(output)
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received


def run_client(client: str, kind: str, chars: int) -> object:
    """One headless run; what the model read of the tool's result."""
    server, received = endpoint(client)
    port = server.server_address[1]
    mcp = [sys.executable, str(HERE), "serve", kind, str(chars)]
    with tempfile.TemporaryDirectory(prefix=f"measure-{client}-") as home:
        work = Path(home) / "work"
        work.mkdir()
        env = dict(os.environ)
        if client == "codex":
            (Path(home) / "config.toml").write_text(
                # Nothing leaves loopback: no update check, no metrics export, no plugin sync.
                f'model = "{CODEX_MODEL}"\nmodel_provider = "scripted"\napproval_policy = "never"\n'
                "check_for_update_on_startup = false\n"
                f'[model_providers.scripted]\nname = "scripted"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                f"[mcp_servers.measure]\ncommand = {json.dumps(mcp[0])}\n"
                f"args = {json.dumps(mcp[1:])}\nrequired = true\n"
                'default_tools_approval_mode = "approve"\n'
                "[analytics]\nenabled = false\n[features]\nplugins = false\n"
            )
            env.update(CODEX_HOME=home, OPENAI_API_KEY="scripted")
            argv = [
                str(peers() / "node_modules/.bin/codex"),
                "exec",
                "--skip-git-repo-check",
                "--json",
                "Use the tool.",
            ]
        else:
            (Path(home) / ".gemini").mkdir()
            settings = {
                "mcpServers": {
                    "measure": {"command": mcp[0], "args": mcp[1:], "trust": True}
                },
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": False},
            }
            (Path(home) / ".gemini/settings.json").write_text(json.dumps(settings))
            env.update(
                HOME=home,
                GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}",
                GEMINI_API_KEY="scripted",
                GEMINI_CLI_TRUST_WORKSPACE="true",
            )
            argv = [
                "node",
                str(peers() / "node_modules/@google/gemini-cli/bundle/gemini.js"),
                "-p",
                "Use the tool.",
                "--yolo",
                "--output-format",
                "json",
            ]
        ran = subprocess.run(
            argv,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=180,
            check=False,
        )
    server.shutdown()
    if ran.returncode != 0 or not received:
        sys.exit(f"{client} exited {ran.returncode}: {ran.stderr.decode()[-2000:]}")
    return received[0]


def read_text(client: str, output: object) -> tuple[str, str]:
    """Codex: (its frame, the text after it); Gemini: ("", the text in its wrapper)."""
    if client == "codex":
        if isinstance(output, str):
            frame, _, text = output.partition("Output:\n")
            return frame + "Output:", text
        texts = [item.get("text", "") for item in output]
        return texts[0], "\n".join(texts[1:])
    inner = output.get("output", json.dumps(output))
    inner = inner.removeprefix("<untrusted_context>\n").removesuffix(
        "\n</untrusted_context>"
    )
    return "", inner


def passes(client: str, kind: str, chars: int) -> bool:
    """Whether a text of `chars` characters of `kind` reaches the model whole."""
    frame, text = read_text(client, run_client(client, kind, chars))
    whole = text == text_of(kind, chars)
    print(
        f"{client} {kind} {chars} chars ({len(text_of(kind, chars).encode())} bytes): "
        f"{'whole' if whole else 'cut'}; frame {frame!r}; read {len(text)} chars",
        flush=True,
    )
    return whole


def main() -> None:
    if sys.argv[1] == "serve":
        serve_mcp(sys.argv[2], int(sys.argv[3]))
        return
    client, kind, low, high = (
        sys.argv[1],
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    if not passes(client, kind, low) or passes(client, kind, high):
        sys.exit(f"the limit is not between {low} and {high}")
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if passes(client, kind, middle) else (low, middle)
    print(
        f"{client} {kind}: {low} characters pass whole "
        f"({len(text_of(kind, low).encode())} UTF-8 bytes, "
        f"{len(text_of(kind, low).encode('utf-16-le')) // 2} UTF-16 units); {high} are cut"
    )


if __name__ == "__main__":
    main()
