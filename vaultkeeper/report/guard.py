"""A scan's report saved without undoing what an apply did to it meanwhile.

An apply keeps ``state/last-report.json`` true as it changes entries (apply/resync.py,
under the writer lock). A scan reads the files first and saves its report last, so an
apply in between would have its update overwritten by a report of the files as they
were before it: handled candidates listed again until the next scan. The scan notes
the saved report's stat when it starts (``seen``) and saves under the same lock
(``locked``); when the report changed meanwhile, it classifies again first (the scan
cache makes that read only what changed) and saves what is true now.

The writer lock is an ``flock`` on ``state/writer.lock``, the file and call filelock
uses there (fsio.writer_lock), taken here with ``fcntl`` itself: importing filelock
costs about 40 ms, more than the rest of a session-end scan's imports together.
"""

from __future__ import annotations

import contextlib
import os
import time

from vaultkeeper import config

TYPE_CHECKING = False
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
    for longer: the report is saved as before)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield False
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(os.path.join(vault, config.STATE_DIR, config.WRITER_LOCK_FILE), flags, 0o644)
    except OSError:
        yield False
        return
    try:
        held, until = False, time.monotonic() + WAIT_S
        while not held:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
            except BlockingIOError:
                if time.monotonic() >= until:
                    break
                time.sleep(0.005)
            except OSError:  # a file system without locks
                break
        yield held
    finally:
        os.close(fd)  # releases the lock
