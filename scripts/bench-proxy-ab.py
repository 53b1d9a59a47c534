#!/usr/bin/env python3
"""A small tools/call round trip straight to the fixture server and through two
`backstop` binaries (before and after a change), alternating, so that one run compares
them (BENCHMARKS.md). Build both first: `cargo build --release -p backstop --example
fixture_server` here, and the other tree's binary; pass BEFORE=path AFTER=path."""

import os
import statistics
import subprocess
import time

FIX = os.environ.get("FIXTURE", "target/release/examples/fixture_server")
BINS = {
    "before": os.environ.get("BEFORE", "/work/before/target/release/backstop"),
    "after": os.environ.get("AFTER", "target/release/backstop"),
}
HS = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'


def session(cmd):
    p = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
    )

    def ask(line):
        p.stdin.write((line + "\n").encode())
        return p.stdout.readline()

    ask(HS)
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    ask('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    return p, ask


def run(cmd, n=3000):
    p, ask = session(cmd)
    ts = []
    for i in range(n):
        line = (
            '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"PROMPT $"}}}'
            % (i + 10)
        )
        t = time.perf_counter()
        out = ask(line)
        ts.append(time.perf_counter() - t)
        assert b'"result"' in out, out[:200]
    p.stdin.close()
    p.wait()
    return statistics.median(ts) * 1e6


res = {k: [] for k in ["straight", *BINS]}
for r in range(3):
    res["straight"].append(run([FIX]))
    for k, b in BINS.items():
        res[k].append(run([b, "proxy", "--", FIX]))
for k, v in res.items():
    print(f"{k}: medians {[round(x, 1) for x in v]} µs")
