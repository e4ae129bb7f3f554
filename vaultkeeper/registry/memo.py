"""One command's registry reads: each file's text parsed once.

``use`` and an apply read the registry several times in one command: to find the
block, again under the writer lock, to re-classify the file they wrote and for the
saved report's upkeep sections; at 50,000 entries each full parse costs a fifth of a
second. Inside ``reading()`` a registry file whose text is exactly one parsed before
gets the same block heads back (a head's lazy parts are worked out from its text alone,
so sharing them changes nothing).

The key is the text itself, never a file's stat: a file edited between two reads is
parsed again. Outside ``reading()`` nothing is kept (the MCP server lives for hours).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

# while a command reads: (path, text) -> its heads
_parsed: dict[tuple[Path, str], list[Any]] = {}
_depth = [0]


@contextlib.contextmanager
def reading() -> Iterator[None]:
    """Keep what is parsed until the outermost ``reading()`` ends."""
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1
        if not _depth[0]:
            _parsed.clear()


def recall(path: Path, text: str) -> list[Any] | None:
    """The heads parsed from exactly ``text`` at ``path`` in this command, if any (a copy
    of the list: callers extend theirs)."""
    if not _depth[0]:
        return None
    got = _parsed.get((path, text))
    return None if got is None else list(got)


def keep(path: Path, text: str, heads: list[Any]) -> list[Any]:
    """Remember ``heads`` as ``text``'s (inside ``reading()`` only); gives them back."""
    if _depth[0]:
        _parsed[(path, text)] = list(heads)
    return heads
