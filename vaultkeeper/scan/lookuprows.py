"""Keeping the recall table true between scans: ``new`` and ``apply`` write rows over it.

Any command that writes or moves files holds the vault's writer lock; when its
outermost hold ends (store.fsio.writer_lock) the lessons among those files get rows in
state/recall-lookup.over.json (scan.lookupover): their record read now, or nothing to
serve (scan.lookuphook registers this with store.fsio), so an archived or superseded
lesson is never served after the command that did it.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.scan.lookup import lookup_path, record
from vaultkeeper.scan.lookupover import put
from vaultkeeper.store.model import is_memory_path
from vaultkeeper.store.vault import links_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def refresh(vault: Path | str, rel_paths: Iterable[str]) -> None:
    """After ``new`` or ``apply`` wrote ``rel_paths``: their rows over the table, read now
    (scan.lookupover), so the hook serves what they are until the next scan's build."""
    vault = Path(vault)
    wanted = sorted({p for p in rel_paths if is_memory_path(p)})
    if not wanted or not (vault / config.STATE_DIR).is_dir():
        return
    root = str(vault.resolve())
    put(vault, {p: None if links_out(root, str(vault / p)) else record(vault, p) for p in wanted})


def after_writes(vault: Path, written: list[str]) -> None:
    """The rows of the lessons a command just wrote or moved (store.fsio.writer_lock)."""
    tops = {os.path.abspath(vault), os.path.realpath(vault)}
    rels = []
    for path in written:
        full = os.path.abspath(path)
        for top in tops:
            if full.startswith(top.rstrip(os.sep) + os.sep):
                rels.append(full[len(top.rstrip(os.sep)) + 1 :].replace(os.sep, "/"))
                break
    if lookup_path(Path(vault)).exists():  # no table yet: the first scan builds it
        refresh(vault, rels)
