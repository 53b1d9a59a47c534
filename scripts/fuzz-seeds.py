#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets from the reference's wire capture.

Each seed is a JSON case the targets read directly (see fuzz/fuzz_targets/*.rs): the
reference's limiter cases rebuilt at its cap of 1,000 bytes, and its failure cases.

    python3 scripts/fuzz-seeds.py   # from the repository root; rewrites fuzz/seeds/
"""
import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEEDS = ROOT / "fuzz" / "seeds"
SUGGESTION = "Call list_panes to discover valid pane ids."
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"


def text_result(text, **members):
    return {"content": [{"type": "text", "text": text}], "isError": False, "_meta": {}, **members}


def limit_cases():
    # The reference's probe tools (ANCHOR.md), rebuilt from its own output lengths.
    yield text_result("line of output\n" * 2000 + "PROMPT $")
    yield text_result("\n" * 5000 + "PROMPT $")
    yield text_result("\x1b[31mred\x1b[0m\n" * 2000 + "PROMPT $")
    yield text_result(FAMILY * 3000 + "END")
    yield text_result("y" * 5000)
    yield {
        "content": [{"type": "text", "text": "Invalid name: '" + "x" * 1050 + "'\n" + SUGGESTION}],
        "isError": True,
        "_meta": {"error_type": "ExpectedToolError", "expected": True, "suggestion": SUGGESTION},
    }
    yield text_result("ok")
    # The defects of ANCHOR.md: the cap overshot by escapes and by _meta, cuts inside
    # an escape sequence, an emoji or a line; an error turned into a success.
    yield text_result("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\r\n" * 300)
    yield text_result("\u00e9\u65e5\U0001F1EF\U0001F1F5e\u0301" * 400, _meta={"trace": "t" * 3000})
    yield {"content": [{"type": "image", "data": "QUFB" * 2000, "mimeType": "image/png"}],
           "structuredContent": {"rows": list(range(300))}}


def error_cases():
    yield {"tool": "fail_expected_chained",
           "failure": {"message": "Pane not found: %99", "expected": True, "error_type": "PaneNotFound"}}
    yield {"tool": "fail_expected_with_suggestion",
           "failure": {"message": "Pane not found: %99", "expected": True, "suggestion": SUGGESTION}}
    yield {"tool": "fail_unexpected",
           "error": {"code": -32603, "message": "Internal error: Error calling tool 'fail_unexpected': boom"}}
    takes_int = {"tool": "takes_int", "parameters": ["count"], "required": ["count"],
                 "client": {"name": "probe-client", "version": "9.9"}}
    bad = "\u0416not-an-int\u0416"
    yield {**takes_int, "arguments": {"count": bad}, "error": {"code": -32602,
           "message": f'failed to deserialize parameters: invalid type: string "{bad}", expected i64'}}
    yield {**takes_int, "arguments": {"count": 1, "wait_for_previous": True}, "error": {"code": -32602,
           "message": "failed to deserialize parameters: unknown field `wait_for_previous`, expected `count`"}}
    yield {**takes_int, "arguments": {"count": 1, "bogus_flag": True, "other": 2}, "error": {"code": -32602,
           "message": "failed to deserialize parameters: unknown field `bogus_flag`, expected `count`"}}
    yield {**takes_int, "arguments": {}, "error": {"code": -32602,
           "message": "failed to deserialize parameters: missing field `count`"}}


def transcripts():
    """The reference's wire capture as shaper transcripts: a handshake, a tool list, then
    each call and the raw response line the reference wrote."""
    data = ROOT / "core" / "tests" / "data"
    entries = [json.loads(line) for name in ("anchor-wire.jsonl", "anchor-limits.jsonl")
               for line in (data / name).read_text().splitlines()]
    names = sorted({e["call"]["params"]["name"] for e in entries if "name" in e["call"]["params"]})
    head = [
        "#transcript",
        "C " + json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "probe-client", "version": "9.9"}}}),
        "S " + json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "1"}}}),
        "C " + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        "S " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": n, "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}
             if n == "takes_int" else {"type": "object"}} for n in names if n != "no_such_tool"]}}),
    ]
    everything = list(head)
    for entry in entries:
        raw = json.loads(entry["raw"])
        request = {"jsonrpc": "2.0", "id": raw["id"], **entry["call"]}
        pair = ["C " + json.dumps(request, ensure_ascii=False), "S " + entry["raw"]]
        everything += pair
        yield "\n".join(head + pair).encode()
    yield "\n".join(everything).encode()


def shaper_regressions():
    """Lines the shaper once rewrote although they are not JSON (SPEC B4; the crash
    "only JSON is rewritten"): bytes that are not UTF-8 or a surrogate escape that is not
    half of a pair, in a member the envelope reader skips, of a response it would rewrite."""
    call = b'C {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capture_pane"}}'
    big = b'"content":[{"type":"text","text":"' + b"line of output\\n" * 100 + b'PROMPT $"}]'
    over_the_cap = b'{"jsonrpc":"2.0","trace":"@","id":1,"result":{' + big + b"}}"
    lines = [b'S {"jsonrpc":"2.0\xff","id":1,"result":{' + big + b"}}"]
    lines += [b"S " + over_the_cap.replace(b"@", bad) for bad in
              (b"\xc0\xaf", b"\xed\xa0\x80", b"\\ud800", b"\\udc00\\ud800")]
    lines.append(b'S {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom","x":"\\ud83dx"}}')
    lines.append(b'S [{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}},'
                 b'{"jsonrpc":"2.0","method":"m","params":{"p":"\\udfff"}}]')
    for line in lines:
        yield b"\n".join([b"#transcript", call, line])


def structured_cases():
    """Results with structuredContent and the output schemas real servers advertise:
    fastmcp's pydantic model (and its `{"result": …}` wrapper for plain returns), rmcp's
    Json<T> with a list, constraints that forbid a cut, and L15 c."""
    log = "step ok\n" * 600 + "BUILD PASSED"
    report = {"type": "object", "required": ["summary", "lines", "log"], "properties": {
        "summary": {"type": "string"}, "lines": {"type": "integer"}, "log": {"type": "string"}}}
    value = {"summary": "build", "lines": 600, "log": log}
    yield {"cap": 1000, "schema": report, "result": {
        "content": [{"type": "text", "text": json.dumps(value, separators=(",", ":"))}],
        "structuredContent": value}}
    yield {"cap": 1000, "schema": report, "result": {
        "content": [{"type": "text", "text": json.dumps(value, indent=2, ensure_ascii=True)}],
        "structuredContent": value, "isError": True}}
    wrapped = {"type": "object", "properties": {"result": {"type": "string"}},
               "required": ["result"], "x-fastmcp-wrap-result": True}
    yield {"cap": 800, "schema": wrapped, "result": {
        "content": [{"type": "text", "text": log}], "structuredContent": {"result": log}}}
    entries = [{"level": "warn" if i % 7 == 0 else "info", "message": f"event {i} {FAMILY}"}
               for i in range(200)]
    listing = {"$defs": {"Entry": {"type": "object", "required": ["level", "message"],
                                   "properties": {"level": {"enum": ["info", "warn"]},
                                                  "message": {"type": "string", "minLength": 3}}}},
               "type": "object", "properties": {
                   "entries": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/Entry"}},
                   "next": {"anyOf": [{"type": "string", "pattern": "^c[0-9]+$"}, {"type": "null"}]}}}
    yield {"cap": 1500, "schema": listing, "result": {
        "structuredContent": {"entries": entries, "next": "c200"}, "_meta": {"trace": "t" * 300}}}
    pinned = {"type": "object", "properties": {"digest": {"type": "string", "format": "byte"}}}
    yield {"cap": 500, "schema": pinned, "result": {"structuredContent": {"digest": "QUJD" * 400}}}
    yield {"cap": 600, "schema": None, "result": {
        "content": [{"type": "text", "text": "\x1b[31m" + log}], "structuredContent": [log, [log]]}}


def stream_cases():
    # Two size bytes, then the server's lines: answers to the pending tools/call (id 1)
    # over the smallest cap, cut unheld (B3, B4) — plain text, then the same broken
    # inside its text by each kind of byte that is not JSON.
    answer = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"log: %s"}]}}'
    plain = b"line of output\\n" * 60
    yield b"\x07\x31" + answer % plain + b"\n"
    for bad in (b"\xff", b"\x01", b"\\q", b"\\ud800x", b"\xe2\x82x"):
        yield b"\x05\x40" + answer % (plain + bad + plain) + b"\n" + answer % plain + b"\n"


def write(target, cases):
    """One file a case, named by its hash; bytes are written as they are. Files named
    crash-… are inputs a fuzzer crashed on, kept as regression seeds as it wrote them."""
    folder = SEEDS / target
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if not old.name.startswith("crash-"):
            old.unlink()
    for case in cases:
        data = case if isinstance(case, bytes) else json.dumps(
            case, ensure_ascii=False, separators=(",", ":")).encode()
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


write("limit", ({"cap": 1000, "line_align": align, "result": r}
                for r in limit_cases() for align in (True, False)))
write("error_result", error_cases())
write("validation_text", [b"\x00" * 8, b"not-an-int", bytes(range(64))])
write("shaper", [*transcripts(), *shaper_regressions()])
write("structured", structured_cases())
write("stream", stream_cases())
