"""The glances' figures: ``status``, the session-start brief and the MCP server's first answer.

Each run is a fresh process of the vaultkeeper beside this interpreter (a plain install:
bench/clean-run.sh), on a copy of the seeded vault (bench/gen.py) after one ``scan --force``
and one ``lint`` (status reads the figures they saved):

- ``status`` (with ``--json`` too), whole process;
- ``report --brief --cwd`` and the session-start hook (``hooks/session-start.sh VAULT PROG``
  with the host's JSON on stdin), whole process;
- ``vaultkeeper mcp``, each round a new server process (a cold start: the server keeps
  nothing between starts): from the process's start to its ``initialize`` answer at
  2025-06-18, as Codex opens, and to the answer of its first request after it
  (``tools/list``; and, separately, a first ``recall`` tool call, which waits for the
  SDK); and with a 2026-07-28 opening as Claude Code's: to the answer of its
  ``server/discover`` probe, and to its ``tools/list`` (after the probe,
  ``subscriptions/listen`` and a second ``server/discover``, as it sends them).

    python bench/glance.py [--size 10000] [--rounds 20]

Prints p50 / p95 / max wall time and the median CPU time (user + system, children
included: os.wait4) in milliseconds, one markdown row a figure. The CPU time moves less
than the wall time when other work shares the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import vault_for  # noqa: E402
from measure import child_env  # noqa: E402

BIN = Path(sys.executable).parent
PROG = str(BIN / "vaultkeeper")
HOOK = Path(__file__).resolve().parent.parent / "hooks" / "session-start.sh"
CWD = "/home/me/src/p004"  # a project of the generated vault (its lessons come first)


def timed(argv: list[str], stdin: bytes = b"") -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and the children it waited for)."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"exit {proc.returncode}: {argv}")
    return took, usage.ru_utime + usage.ru_stime


def _send(proc: subprocess.Popen[bytes], msg: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes], want: int | str) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        got = json.loads(line)
        if got.get("id") == want:
            return got


def _mcp(vault: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [PROG, "mcp", "--vault", vault],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
        cwd=vault,
    )


def _done(proc: subprocess.Popen[bytes]) -> float:
    """The CPU seconds of the whole run, its exit included."""
    assert proc.stdin is not None
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def mcp_first(vault: str, call: str) -> tuple[float, float]:
    """Seconds from the server's start to its answer to the first request after initialize."""
    began = time.perf_counter()
    proc = _mcp(vault)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    }
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    _answer(proc, 1)
    if call == "initialize":
        return time.perf_counter() - began, _done(proc)
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    if call == "tools/list":
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    else:
        params = {"name": call, "arguments": {"cwd": CWD}}
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    got = _answer(proc, 2)
    took = time.perf_counter() - began
    if "error" in got:
        raise RuntimeError(f"mcp {call}: {got['error']}")
    return took, _done(proc)


MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def mcp_modern(vault: str, call: str) -> tuple[float, float]:
    """Seconds from the start to the answer of the server/discover probe, or of the
    tools/list a 2026-07-28 host sends after it (Claude Code's order)."""
    began = time.perf_counter()
    proc = _mcp(vault)
    meta = {"_meta": MODERN}
    _send(proc, {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": meta})
    _answer(proc, "probe")
    took = time.perf_counter() - began
    if call == "tools/list":
        listen = {**meta, "notifications": {"toolsListChanged": True}}
        _send(proc, {"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
                     "params": listen})  # fmt: skip
        _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": meta})
        _answer(proc, 0)
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta})
        got = _answer(proc, 1)
        took = time.perf_counter() - began
        if "error" in got:
            raise RuntimeError(f"mcp 2026-07-28 {call}: {got['error']}")
    return took, _done(proc)


def row(label: str, samples: list[tuple[float, float]]) -> str:
    ms = sorted(wall * 1000 for wall, _ in samples)
    cpu = statistics.median(used * 1000 for _, used in samples)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    median = statistics.median(ms)
    return f"| {label} | {median:.0f} | {p95:.0f} | {ms[-1]:.0f} | {cpu:.0f} | {len(ms)} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--only", choices=("status", "brief", "mcp"), action="append")
    args = parser.parse_args(argv)
    only = set(args.only or ("status", "brief", "mcp"))
    work = Path(tempfile.mkdtemp(prefix="vk-glance-"))
    try:
        vault = str(work / "vault")
        shutil.copytree(vault_for(args.size), vault, symlinks=True)
        base = [PROG, "--vault", vault]
        subprocess.run([*base, "scan", "--force"], capture_output=True, env=child_env())
        subprocess.run([*base, "lint"], capture_output=True, env=child_env())
        sides: dict[str, list[str]] = {}
        stdin: dict[str, bytes] = {}
        if "status" in only:
            sides["`status`"] = [*base, "status"]
            sides["`status --json`"] = [*base, "status", "--json"]
        if "brief" in only:
            sides["`report --brief --cwd`"] = [*base, "report", "--brief", "--cwd", CWD]
            sides["session-start hook"] = ["sh", str(HOOK), vault, PROG]
            stdin["session-start hook"] = json.dumps({"cwd": CWD}).encode()
        got: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
        mcp_runs = {
            "`mcp` 2025-06-18: start to `initialize` answer": (mcp_first, "initialize"),
            "`mcp` 2025-06-18: start to first `tools/list` answer": (mcp_first, "tools/list"),
            "`mcp` 2025-06-18: start to first `recall` answer": (mcp_first, "recall"),
            "`mcp` 2026-07-28: start to `server/discover` answer": (mcp_modern, "discover"),
            "`mcp` 2026-07-28: start to first `tools/list` answer": (mcp_modern, "tools/list"),
        }
        if "mcp" not in only:
            mcp_runs = {}
        for label in mcp_runs:
            got[label] = []
        for n in range(args.rounds + 1):  # round 0 warms up (the .pyc files)
            for label, cmd in sides.items():
                took = timed(cmd, stdin.get(label, b""))
                if n:
                    got[label].append(took)
            for label, (measure, call) in mcp_runs.items():
                took = measure(vault, call)
                if n:
                    got[label].append(took)
        print(f"{args.size} entries, {args.rounds} runs each, load {os.getloadavg()[0]:.1f}")
        print("| figure | p50 ms | p95 ms | max ms | p50 CPU ms | runs |")
        print("| --- | --- | --- | --- | --- | --- |")
        for label, samples in got.items():
            print(row(label, samples))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
