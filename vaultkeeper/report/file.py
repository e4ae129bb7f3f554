"""The saved last report's file, ``state/last-report.json``: where it is, its bytes, its faults.

Split from candidates.py, which keeps turning a Report into a dict and back; this module
handles only paths, JSON text and plain dicts (no report type), so candidates.py can use
it and re-export report_path without an import circle.

The scan saves its report without undoing an apply made meanwhile: it notes the
saved report's stat when it starts (``seen``) and saves under the writer lock
(``locked``), classifying again first when the report changed. The lock is an
``flock`` on the writer lock's files, the files and call filelock uses
(fsio.writer_lock), taken with ``fcntl`` itself: importing filelock costs about 40 ms,
more than the rest of a session-end scan's imports together.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config

WHERE = f"{config.STATE_DIR}/{config.LAST_REPORT_FILE}"
# what a bad file may raise, from reading its JSON to building the Report from it
NOT_A_REPORT = (ValueError, TypeError, KeyError, AttributeError, RecursionError)


def report_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.LAST_REPORT_FILE


def write(vault: Path, data: dict[str, Any], fsync_dir: bool) -> None:
    from vaultkeeper.store.fsio import atomic_write

    # compact: the C encoder is several times faster than an indented dump
    text = json.dumps(data) + "\n"
    atomic_write(report_path(vault), text, fsync_dir=fsync_dir)


def read(vault: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the file's JSON object, None), or (None, why not: None when there is no file)."""
    path = report_path(vault)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{WHERE}: unreadable ({exc.strerror}); ignored"
    try:
        data = json.loads(raw)
    except NOT_A_REPORT as exc:
        return None, not_a_report(exc)
    if not isinstance(data, dict):
        return None, f"{WHERE}: not a report (JSON, not an object); ignored"
    return data, None


def utc(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)


def not_a_report(exc: Exception) -> str:
    return f"{WHERE}: not a report ({_why(exc)}); ignored"


def _why(exc: Exception) -> str:
    """What is wrong with the file, in words: a note shows no Python exception text."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, KeyError):
        return f"no {json.dumps(exc.args[0]) if exc.args else 'expected'} field"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a field holds the wrong kind of value"


if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

WAIT_S = 10.0  # for an apply's hold on the lock (a few ms; never a person's answer)


def seen(vault: Path | str) -> tuple[int, ...] | None:
    """The saved report's stat, to compare with when the scan saves; None: none saved."""
    try:
        st = os.stat(os.path.join(vault, config.STATE_DIR, config.LAST_REPORT_FILE))
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@contextlib.contextmanager
def locked(vault: Path | str) -> Iterator[bool]:
    """Hold the writer lock (an apply's) while the scan saves; yields whether it is held
    (a lock that cannot be had in WAIT_S, or on a system without flock, is not waited
    for longer: the report is saved as before). Its file is fsio.writer_lock's
    (store.lockdir.lock_file: the user's lock folder, else state/writer.lock)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield False
        return
    from vaultkeeper.store.lockdir import lock_file

    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    where, fallback = lock_file(vault)
    paths = [where]
    fds: list[int] = []
    try:
        held, until = True, time.monotonic() + WAIT_S
        for path in paths:
            try:
                fds.append(os.open(path, flags, 0o644))
            except OSError:
                held = False
                break
            held = False
            while not held:
                try:
                    fcntl.flock(fds[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
                    held = os.fstat(fds[-1]).st_nlink > 0
                    if not held:  # swept (store.lockdir.sweep_locks) before our flock: anew
                        os.close(fds.pop())
                        fds.append(os.open(path, flags, 0o644))
                        continue
                except BlockingIOError:
                    if time.monotonic() >= until:
                        break
                    time.sleep(0.005)
                except OSError:  # a file system without locks
                    break
            if not held:
                break
        yield held
    finally:
        for fd in reversed(fds):
            os.close(fd)  # releases the lock
        if not fallback and fds:
            from vaultkeeper.store.lockdir import sweep_locks

            sweep_locks()  # the lock folder keeps only held locks
