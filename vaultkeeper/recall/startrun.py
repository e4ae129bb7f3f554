"""``report --brief`` without click: the session-start hook's form, run by entry.py.

The hook runs ``vaultkeeper --vault V start-hook`` at every session start (hooks/
session-start.sh), with the host's JSON on stdin, and importing click and building the
command tree cost that brief about as much as the rest of its imports. ``run`` does
what commands/scan.py's ``report --brief [--cwd DIR]`` does -- the same notes, the
same text, the same errors and exit codes as the click group gives them -- and
tests/test_entry.py compares the bytes of both ways. ``hook`` reads the session's
folder from the host's JSON first, and after the brief starts the catch-up ingest: in
this process, so a session start pays for one Python start, not three.
"""

from __future__ import annotations

import contextlib
import os
import sys


def run(vault: str, cwd: str | None) -> int:
    """The brief of ``vault`` (found and checked by entry.py) for a session in ``cwd``."""
    from pathlib import Path

    from vaultkeeper.clock import now
    from vaultkeeper.output import echo, fail
    from vaultkeeper.recall.start import render
    from vaultkeeper.scan.last import derived

    root = Path(vault)
    try:  # every brief ends with a newline
        echo(render(root, derived(root), now(), Path(cwd or os.getcwd())).removesuffix("\n"))
    except Exception as exc:  # one line and the exit code, as the click group says them
        return fail(exc)
    return 0


def hook(vault: str, prog: str) -> int:
    """The brief for the session the host's JSON on stdin describes (its ``cwd`` names
    the project whose lessons come first), then the catch-up of its ``transcript_path``.

    The JSON is read up to its end, not to the end of input (a host may keep stdin
    open), for at most 2 s and 1 MB; a value that is not a one-line string is left out.
    """
    import json
    import time

    from vaultkeeper import config
    from vaultkeeper.recall.hostjson import read_object

    got = None
    if not os.isatty(0):
        try:
            got, _ = read_object(time.monotonic() + 2.0, config.MOMENT_MAX_STDIN, json.loads)
        except Exception:  # any input at all: the brief without a folder, never none
            got = None
    cwd, transcript = (_line(got, "cwd"), _line(got, "transcript_path")) if got else (None, None)
    code = run(vault, cwd)
    if transcript:
        sys.stdout.flush()
        # the console script, or this interpreter with ``-m vaultkeeper`` (run so)
        me = [prog] if os.path.isabs(prog) and os.access(prog, os.X_OK) else None
        with contextlib.suppress(OSError):  # best effort: the brief is out already
            catch_up(me or [sys.executable, "-m", "vaultkeeper"], vault, transcript, cwd)
    return code


def _line(got: dict[str, object], key: str) -> str | None:
    value = got.get(key)
    ok = isinstance(value, str) and value and "\0" not in value and "\n" not in value
    return value if ok else None  # type: ignore[return-value]


def catch_up(command: list[str], vault: str, transcript: str, cwd: str | None) -> None:
    """Sessions whose end hook never ran (a host cancels or kills it): this session's
    start ingests its project's transcripts no ingest read as they are now (``ingest
    --missed-beside``). Detached (its own session, every descriptor on /dev/null, so
    neither the host nor the hook's $(...) waits for it), bounded (an alarm of 120 s,
    which the exec keeps) and at the lowest priority: it never delays a start."""
    first = os.fork()
    if first != 0:
        os.waitpid(first, 0)  # it leaves at once: the ingest is its child, then init's
        return
    try:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, _open_max())  # the host's other descriptors are not its
            os.nice(19)
            import signal

            signal.alarm(120)
            args = [*command, "--vault", vault, "ingest", "--missed-beside", transcript]
            os.execv(command[0], args + (["--cwd", cwd] if cwd else []))
    finally:
        os._exit(0)


def _open_max() -> int:
    try:
        return max(int(os.sysconf("SC_OPEN_MAX")), 256)
    except (ValueError, OSError):
        return 65536
