#!/usr/bin/env python3
"""Run an MCP stdio server and log every line that passes each way.

    mcp_tee.py LOGFILE -- COMMAND [ARG...]

The host talks to this process as if it were the server: each line the host writes goes
to the server's stdin, each line the server writes goes back to the host, and both are
appended to LOGFILE as JSON lines ``{"t": seconds, "dir": "host->server"|"server->host",
"line": <the JSON-RPC message, parsed when it parses>}``. The server's stderr passes
through. Standard library only; ends when the server ends.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log_path, cmd = sys.argv[1], sys.argv[3:]
    lock = threading.Lock()
    t0 = time.time()
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115

    def note(direction: str, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\n")
        try:
            line: object = json.loads(text)
        except ValueError:
            line = text
        with lock:
            log.write(
                json.dumps({"t": round(time.time() - t0, 3), "dir": direction, "line": line}) + "\n"
            )
            log.flush()

    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout

    def pump_in() -> None:
        assert proc.stdin
        for raw in iter(sys.stdin.buffer.readline, b""):
            note("host->server", raw)
            try:
                proc.stdin.write(raw)
                proc.stdin.flush()
            except BrokenPipeError:
                break
        with lock:
            log.write(
                json.dumps(
                    {
                        "t": round(time.time() - t0, 3),
                        "dir": "host->server",
                        "event": "stdin closed",
                    }
                )
                + "\n"
            )
            log.flush()
        with contextlib.suppress(OSError):
            proc.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    for raw in iter(proc.stdout.readline, b""):
        note("server->host", raw)
        try:
            sys.stdout.buffer.write(raw)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            break
    rc = proc.wait()
    with lock:
        log.write(
            json.dumps({"t": round(time.time() - t0, 3), "event": f"server exited {rc}"}) + "\n"
        )
        log.close()
    return rc


if __name__ == "__main__":
    sys.exit(main())
