"""`vaultkeeper mcp` at a terminal: Ctrl-C (SIGINT) ends it with exit 130 and one line,
and the server says its version in the handshake."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pty_helper import vaultkeeper_argv

from vaultkeeper import __version__

pytest.importorskip("mcp")
BOUND = 60.0  # a safety bound for a loaded machine, not a timing check

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def _started(
    vault: Path, tmp_path: Path, plain: bool = False
) -> tuple[subprocess.Popen[bytes], int, dict[str, Any]]:
    """The server with stdin on a terminal (a pty), once it answered the handshake."""
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["VAULTKEEPER_MCP_PLAIN"] = "1" if plain else "0"
    env.pop("VAULTKEEPER_VAULT", None)
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [*vaultkeeper_argv(), "--vault", str(vault), "mcp"],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    os.close(slave)
    os.write(master, (json.dumps(INITIALIZE) + "\n").encode())
    assert proc.stdout is not None
    answer = json.loads(proc.stdout.readline())  # the event: the server is serving
    return proc, master, answer


def test_ctrl_c_stops_the_server_with_exit_130_and_no_traceback(
    sample: Path, tmp_path: Path
) -> None:
    proc, master, _ = _started(sample, tmp_path)
    try:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=BOUND)  # before the fix: alive until stdin ended
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert code == 130
    assert err == "vaultkeeper: interrupted\n"


def _interrupted(proc: subprocess.Popen[bytes], master: int) -> tuple[int, str]:
    try:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=BOUND)
        assert proc.stderr is not None
        return code, proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_ctrl_c_while_the_front_answers_and_the_sdk_loads(sample: Path, tmp_path: Path) -> None:
    """The front answers initialize from the shipped answers (start.py), most likely before
    the SDK has loaded: Ctrl-C then ends it the same way, as on the plain path."""
    proc, master, answer = _started(sample, tmp_path)
    assert _interrupted(proc, master) == (130, "vaultkeeper: interrupted\n")
    plain, master, again = _started(sample, tmp_path, plain=True)
    assert again == answer
    assert _interrupted(plain, master) == (130, "vaultkeeper: interrupted\n")


def test_the_handshake_names_the_package_version(sample: Path, tmp_path: Path) -> None:
    proc, master, answer = _started(sample, tmp_path)
    try:
        info = answer["result"]["serverInfo"]
        assert (info["name"], info["version"]) == ("vaultkeeper", __version__)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=BOUND)
        os.close(master)
