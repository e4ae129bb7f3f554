"""Registers the full-text index's rows (scan.lookup) to follow every command's writes.

Imported by apply, entries and the command line: when a command's outermost hold of the
writer lock ends after it wrote files (store.fsio.after_writes), those files' rows in
the index are made anew in the same step (scan.lookup.after_writes), so an archived or
superseded lesson is never served after the command that did it. Light on purpose:
scan.lookup (sqlite3, the entries' reader) is imported only when a command did write.
"""

from __future__ import annotations

from vaultkeeper.store.fsio import after_writes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _rows(vault: Path, written: list[str]) -> None:
    from vaultkeeper.scan.lookup import after_writes as rows

    rows(vault, written)


after_writes(_rows)
