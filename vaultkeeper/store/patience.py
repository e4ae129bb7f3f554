"""The writer lock for a command whose work must not be lost: a count (``use``, ``ingest``).

A count that finds the lock busy says so once (``waiting``) and waits on, up to
``PATIENT_S``: a live holder finishes, and a dead one's lock goes with its process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from vaultkeeper.errors import LockBusy
from vaultkeeper.store.fsio import writer_lock

NOTICE_S = 2.0  # busy this long: the command says that it waits
PATIENT_S = 600.0  # then it waits this long at most, and fails saying so


@contextlib.contextmanager
def patient_lock(vault: Path, waiting: Callable[[], None] | None) -> Iterator[None]:
    """``writer_lock(vault)``; with ``waiting``, a busy lock is waited for (see above)."""
    if waiting is None:
        with writer_lock(vault):
            yield
        return
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(writer_lock(vault, timeout=NOTICE_S))
        except LockBusy:
            waiting()
            held.enter_context(writer_lock(vault, timeout=PATIENT_S))
        yield
