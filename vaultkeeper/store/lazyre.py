"""Regular expressions compiled on first use.

Compiling a module's patterns at import costs every process that imports it, used or
not: the credential detectors and the duplicates pass's tokenizer cost a scan that
finds nothing to mask and nothing new to compare about 3 ms of its start. ``lazy``
gives a stand-in that compiles on its first method call (``re`` keeps the compiled
pattern in its own cache too, so two stand-ins of one pattern compile it once).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Lazy:
    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # search, match, finditer, sub, ...
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return getattr(self._compiled, name)


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern that compiles on its first use and behaves as re.compile's after."""
    return _Lazy(pattern, flags)  # type: ignore[return-value]  # it has the methods used
