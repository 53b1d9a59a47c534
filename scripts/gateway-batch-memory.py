#!/usr/bin/env python3
"""The gateway's memory under concurrent batches to an upstream that is down (SPEC B1,
B3; issue 20's "batch answers bounded"): each batch request is as large as the
gateway takes (4 MiB of small `tools/call`s, ~47,800 of them), sent by several clients
at once, round after round. Each request gets one error for each call (B1). Printed
per round: the answers' status and size, the gateway's peak RSS (VmHWM) and its RSS
half a second after the round.

    scripts/gateway-batch-memory.py target/release/backstop
    scripts/gateway-batch-memory.py target/release/backstop --rounds 4 --clients 8
    MALLOC_MMAP_THRESHOLD_=131072 scripts/gateway-batch-memory.py target/release/backstop

The environment passes to the gateway (glibc's allocator reads its `MALLOC_*`
tunables from it). Linux only (/proc).
"""

import argparse
import http.client
import json
import socket
import subprocess
import threading
import time

BODY_BYTES = 4 << 20  # the gateway's default --max-body


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def status_mib(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) // 1024
    return None


def batch_body():
    calls, size, n = [], 2, 0
    while True:
        call = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "x", "arguments": {}},
            },
            separators=(",", ":"),
        )
        if size + len(call) + 1 > BODY_BYTES - 200:
            break
        calls.append(call)
        size += len(call) + 1
        n += 1
    return ("[" + ",".join(calls) + "]").encode(), n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the backstop binary")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()

    port = free_port()
    dead = free_port()  # nothing listens there: every POST fails to connect
    gateway = subprocess.Popen(
        [
            args.binary,
            "gateway",
            "--quiet",
            "--listen",
            f"127.0.0.1:{port}",
            "--upstream",
            f"http://127.0.0.1:{dead}/mcp",
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        body, calls = batch_body()
        print(
            f"batch: {len(body)} bytes, {calls} calls; {args.clients} clients at once; "
            f"gateway RSS before: {status_mib(gateway.pid, 'VmRSS:')} MiB"
        )
        answers = []

        def post():
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            connection.request(
                "POST",
                "/mcp",
                body,
                {
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
            )
            response = connection.getresponse()
            answers.append((response.status, len(response.read())))

        for round_ in range(args.rounds):
            clients = [threading.Thread(target=post) for _ in range(args.clients)]
            for client in clients:
                client.start()
            for client in clients:
                client.join()
            time.sleep(0.5)
            print(
                f"round {round_}: answers {sorted(set(answers[-args.clients :]))}, "
                f"peak {status_mib(gateway.pid, 'VmHWM:')} MiB, "
                f"after {status_mib(gateway.pid, 'VmRSS:')} MiB"
            )
    finally:
        gateway.kill()
        gateway.wait()


if __name__ == "__main__":
    main()
