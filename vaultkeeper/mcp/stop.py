"""Ctrl-C (SIGINT) stops ``vaultkeeper mcp``, as it stops every other command.

The SDK reads stdin in a worker thread that a cancellation waits for: with asyncio's
own SIGINT handling, the event loop is cancelled and then waits, so the server ran on
until the next line or the end of stdin (Ctrl-D). Our handler ends the process instead,
but never in the middle of a tool call: a call that is running (its write under the
writer lock included) finishes first, and the process ends when it returns. A second
Ctrl-C ends it at once (a call waiting on the host's dialog may wait minutes).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from vaultkeeper.errors import EXIT_INTERRUPTED

T = TypeVar("T")

_lock = threading.RLock()  # re-entrant: the handler runs on the thread that may hold it
_running = 0
_asked = False


def _exit() -> None:
    try:
        sys.stderr.write("vaultkeeper: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(EXIT_INTERRUPTED)  # the stdin reader thread cannot be joined


def _on_interrupt(signum: int, frame: Any) -> None:
    global _asked
    with _lock:
        if _asked or _running == 0:
            _exit()
        _asked = True
    sys.stderr.write(
        "vaultkeeper: interrupted; stopping when the running tool call returns "
        "(Ctrl-C again stops now)\n"
    )
    sys.stderr.flush()


def install() -> None:
    """Take SIGINT before the event loop starts (asyncio then leaves it to us)."""
    signal.signal(signal.SIGINT, _on_interrupt)


def guarded(call: Callable[[], T]) -> Callable[[], T]:
    """``call``, counted as running while it runs (an interrupt waits for it)."""

    def run() -> T:
        global _running
        with _lock:
            _running += 1
        try:
            return call()
        finally:
            with _lock:
                _running -= 1
                stop = _asked and _running == 0
            if stop:
                _exit()

    return run
