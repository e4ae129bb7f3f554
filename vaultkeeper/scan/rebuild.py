"""The line a scan writes on stderr when it builds the derived store from many files.

A scan that finds no rows in ``state/vaultkeeper.db`` (a first scan, a deleted or
outdated database, ``scan --fresh``) reads every memory file; on a big vault that takes
a second or more where the next scan takes a fraction of one. So that a person (or a
hook's log) sees why, such a scan says so once on stderr, before it reads them:
``vaultkeeper: building state/vaultkeeper.db from N files ...``. Whether to say it is
decided by the number of files, never by a clock, so the same vault always gives the same
stderr: at least ``NOTE_FILES`` memory files (about half a second of reading on a shared
2-core machine; see docs/benchmarks.md). On a terminal the line also counts the files
read, rewritten in place, and ends when the reading does; anywhere else (a log, a pipe)
it is the one line. Nothing is written on the throttled no-op path, nor by a scan that
finds its rows (only the files changed since are read then).
"""

from __future__ import annotations

from vaultkeeper import config

TYPE_CHECKING = False  # a scan imports no typing (tests/test_entry.py); as scan/cache.py
if TYPE_CHECKING:
    from typing import TextIO

NOTE_FILES = 2_000  # memory files; below this the build is quick enough to go unsaid
STEP = 500  # files between two updates of the count on a terminal


class RebuildNote:
    """The note for one scan's build; ``stream`` is where it goes (stderr)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.total = 0
        self.shown = False
        self.head = ""
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):  # a closed or odd stream: the plain line
            self.tty = False

    def start(self, total: int) -> None:
        """Before reading ``total`` memory files: the note, if there are enough of them."""
        if self.shown or total < NOTE_FILES:
            return
        self.total, self.shown = total, True
        head = f"vaultkeeper: building {config.STATE_DIR}/{config.DB_FILE} from {total} files ..."
        self._write(head if self.tty else head + "\n")
        self.head = head

    def step(self, done: int) -> None:
        """``done`` files read so far: the count, on a terminal, every ``STEP`` files."""
        if self.shown and self.tty and done % STEP == 0 and 0 < done < self.total:
            self._write(f"\r{self.head} {done}/{self.total}")

    def finish(self) -> None:
        """The reading is over: a terminal's line shows the total and ends."""
        if self.shown and self.tty:
            self._write(f"\r{self.head} {self.total}/{self.total}\n")
            self.tty = False  # once

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # stderr gone (a closed pipe): the scan goes on
            pass
