"""The index check and regeneration of an ``apply``, without rendering it all when it can.

``check`` before the first write: when the index stamp (vaultkeeper.index.stamp) shows
the index up to date, nothing else is read; otherwise the index is regenerated without
writing, as before (which records the stamp when the index is up to date). ``reindex``
after the writes, under the same hold of the writer lock: when the check knew the index
up to date, only the written files' lines change (vaultkeeper.index.delta); otherwise,
or when that can't be done surely, the whole index is regenerated, as before. Either
way the index files end byte for byte as a regeneration writes them.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultkeeper.index import stamp
from vaultkeeper.index.build import Keywords, build_index
from vaultkeeper.index.delta import carry
from vaultkeeper.store import writes

# vault -> the stamp a check found true, and where the writes stood then
_HELD: dict[str, tuple[stamp.Stamp, writes.Mark]] = {}


def check(vault: Path) -> None:
    """Raise as ``build_index(check=True)`` would; reads only the walk when it can."""
    key = os.path.abspath(vault)
    _HELD.pop(key, None)
    stamp.LAST.pop(key, None)
    found = stamp.check(vault)
    if found is None:
        build_index(vault, check=True, stamped=False)
        found = stamp.LAST.pop(key, None)
    at = writes.mark()
    if found is not None and at is not None:
        _HELD[key] = (found, at)


def reindex(vault: Path, keep: Keywords | None = None) -> None:
    """Bring the index up to date after the writes since ``check`` (see the module doc)."""
    held = _HELD.pop(os.path.abspath(vault), None)
    if held is not None and not keep:
        written = writes.since(held[1])
        if written is not None and carry(vault, held[0], written):
            return
    build_index(vault, keep=keep, stamped=False)  # written since: the stamp can't hold
