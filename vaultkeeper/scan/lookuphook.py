"""Registers the recall table's rows (scan.lookuprows) to follow every command's writes.

Imported by apply, entries and the command line: when a command's outermost hold of the
writer lock ends after it wrote files (store.fsio.after_writes), the lessons among them
get rows over the table. Light on purpose: scan.lookuprows (frontmatter parsing, the
table's reader) is imported only when a command did write something.
"""

from __future__ import annotations

from vaultkeeper.store.fsio import after_writes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _rows(vault: Path, written: list[str]) -> None:
    from vaultkeeper.scan.lookuprows import after_writes as rows

    rows(vault, written)


after_writes(_rows)
