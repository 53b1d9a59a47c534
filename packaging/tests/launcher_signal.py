"""SIGTERM to the npm launcher reaches backstop and the server behind it.

    python3 launcher_signal.py LAUNCHER

Runs `LAUNCHER proxy -- sleep 300` in a session of its own, sends the launcher SIGTERM,
and checks that it ends with backstop's status for a server killed by SIGTERM (128 + 15,
passed on by the launcher) and that nothing of its session is left: neither backstop nor
the server. Exit status 0 when both hold.
"""

import os
import signal
import subprocess
import sys
import time


def main(launcher: str) -> int:
    process = subprocess.Popen(
        [launcher, "proxy", "--", "sleep", "300"], stdin=subprocess.PIPE, start_new_session=True
    )
    time.sleep(2)  # node starts, then backstop, then the server
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        status = None
    deadline = time.monotonic() + 5
    left = True
    while left and time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
            time.sleep(0.1)
        except ProcessLookupError:
            left = False
    if left:
        os.killpg(process.pid, signal.SIGKILL)
    if status not in (128 + signal.SIGTERM, -signal.SIGTERM) or left:
        print(f"  FAIL launcher status {status}, processes left in its session: {left}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
