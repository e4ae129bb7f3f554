"""This machine's records: ``state/machine.json``, one plain JSON file, not derived.

What no file of the vault can give back, each under a top-level key (adopted folders,
``native prune``'s trash, repositories, ingested transcripts, anchor suggestions). One
reader (``read``), one writer (``update``: locked, atomic). A key missing here is read
from an older version's own file (``OLD_FILES``) and moved in by the next write; an
unreadable machine.json is refused in one line and kept.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.text import ParseError, read_regular
from vaultkeeper.store.vault import own_dir

# An older vaultkeeper's file under state/ -> how its JSON maps onto machine.json's keys.
OLD_FILES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "native.json": lambda d: {k: d[k] for k in ("folders", "pruned") if k in d},
    "repositories.json": lambda d: {"repositories": d},
    "ingested.json": lambda d: {"ingested": d},
    "anchor-suggestions.json": lambda d: (
        {"anchor_suggestions": d["entries"]} if isinstance(d.get("entries"), dict) else {}
    ),
}


def path_of(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.MACHINE_FILE


def _json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in a file of ours (never through a link); None when missing."""
    if not os.path.lexists(path):
        return None
    try:
        data = json.loads(read_regular(path, follow=False))
    except (ParseError, ValueError, RecursionError) as exc:  # nested past json's depth too
        why = exc.reason if isinstance(exc, ParseError) else "not JSON"
        raise VaultkeeperError(f"{config.STATE_DIR}/{path.name}: unreadable ({why})") from None
    if not isinstance(data, dict):
        raise VaultkeeperError(f"{config.STATE_DIR}/{path.name}: unreadable (not a JSON object)")
    return data


def _read(vault: Path) -> tuple[dict[str, Any], list[Path]]:
    path = path_of(vault)
    try:
        data = _json_object(path) or {}
    except VaultkeeperError as exc:
        raise VaultkeeperError(f"{exc}; kept as it is: repair or move it away") from None
    moved: list[Path] = []
    for name, keys in OLD_FILES.items():
        old = path.with_name(name)
        try:
            found = _json_object(old)
        except VaultkeeperError:
            continue  # an unreadable old file is left where it is, for a person to see
        if found is not None:
            moved.append(old)
            for key, value in keys(found).items():
                data.setdefault(key, value)
    return data, moved


def read(vault: Path) -> dict[str, Any]:
    """Every record, by key ({} when there are none)."""
    return _read(vault)[0]


def has(vault: Path, key: str) -> bool:
    """Whether ``key`` holds a record (the scan's glance: nothing adopted, no repository
    tied, and it loads no code for them). False when machine.json is unreadable: the
    command that needs the record says so."""
    if not os.path.isdir(os.path.join(vault, config.STATE_DIR)):
        return False
    try:
        return bool(get(vault, key))
    except VaultkeeperError:
        return False


def get(vault: Path, key: str) -> Any:
    """One record, or None."""
    return read(vault).get(key)


def update(vault: Path, key: str, change: Callable[[Any], Any]) -> Any:
    """Set ``key`` to ``change(its current value or None)`` (None: drop it), under the
    writer lock; records moved in from an older vaultkeeper's files are kept, and those
    files deleted. The new value."""
    with writer_lock(vault):
        data, moved = _read(vault)
        value = change(data.get(key))
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        path = path_of(vault)
        atomic_write(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
        for old in moved:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(old)
    return value
