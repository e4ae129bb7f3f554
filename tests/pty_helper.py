"""Run ``vaultkeeper`` on a real pseudo-terminal and answer its prompts (used by test_apply_*)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

BOUND_SECONDS = 30.0  # a safety bound so a hung child can't hang the suite, not a timing check


def vaultkeeper_argv() -> list[str]:
    script = Path(sys.executable).with_name("vaultkeeper")
    if script.is_file():
        return [str(script)]
    found = shutil.which("vaultkeeper")
    return [found] if found else [sys.executable, "-m", "vaultkeeper"]


def run_on_pty(args: list[str], answers: list[str], prompt: str) -> tuple[int, str]:
    """Run ``vaultkeeper ARGS`` with stdin/stdout/stderr on one pty; type one answer per prompt.

    Returns (exit code, everything the terminal showed, with CRLF turned into LF).
    """
    env = {k: v for k, v in os.environ.items() if k != "VAULTKEEPER_VAULT"}
    env["TERM"] = "dumb"
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [*vaultkeeper_argv(), *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    out = b""
    todo = list(answers)
    answered = 0
    deadline = time.monotonic() + BOUND_SECONDS
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"vaultkeeper did not finish; terminal showed {out!r}")
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the child closed its side
                    break
                if not chunk:
                    break
                out += chunk
                while todo and out.decode(errors="replace").count(prompt) > answered:
                    os.write(master, todo.pop(0).encode() + b"\n")
                    answered += 1
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=BOUND_SECONDS)
    finally:
        os.close(master)
    return code, out.decode(errors="replace").replace("\r\n", "\n")
