"""VK106: conflict markers a merge left in a note (``<<<<<<<`` ... ``=======`` ... ``>>>>>>>``).

git writes them when it cannot merge a file and stops; a person who commits without
resolving every hunk leaves both sides' lines in the vault, and then everything that
reads the file reads both (a registry block without its counters, an index listing an
entry twice). Lines inside fenced code are not markers: a note may show a conflict.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from vaultkeeper.lint.codes import Finding

_OPEN, _MID, _CLOSE = "<<<<<<<", "=======", ">>>>>>>"


def _marker(line: str, mark: str) -> bool:
    body = line.rstrip("\r\n")
    return body.startswith(mark) and (len(body) == len(mark) or body[len(mark)] == " ")


def check_conflicts(rel: str, lines: list[str], code: Collection[int]) -> Iterator[Finding]:
    """One finding per conflict hunk, at its ``<<<<<<<`` line."""
    start: int | None = None
    middle = False
    for number, line in enumerate(lines, start=1):
        if number in code or not line.startswith(("<", "=", ">")):
            continue
        if _marker(line, _OPEN):
            start, middle = number, False
        elif start is not None and line.rstrip("\r\n") == _MID:
            middle = True
        elif start is not None and middle and _marker(line, _CLOSE):
            yield Finding(
                rel,
                start,
                1,
                "VK106",
                f"conflict markers left by a merge (lines {start}-{number}): keep what each "
                "side meant and delete the marker lines (an index file: `vaultkeeper index` "
                "writes its list again)",
            )
            start = None
