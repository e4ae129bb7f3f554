"""Remember that ``hooks install`` created a settings file, so uninstall can undo it.

A fresh home has no ``~/.claude/settings.json`` (or ``~/.codex/hooks.json``): install
creates it, and the folder too. Uninstall then leaves the home as it was -- the file,
our backup of it, this record and the folders made for it go -- but only while nothing
but our handlers was ever put in it; a record beside the file says it is ours.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.fsio import atomic_write


def record_path(path: Path) -> Path:
    return path.with_name(path.name + config.HOOK_CREATED_SUFFIX)


def missing_folders(folder: Path) -> list[Path]:
    """The folders a write into ``folder`` would create, outermost first."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def remember(path: Path, folders: list[Path]) -> None:
    record = {"file": str(path), "folders": [str(f) for f in folders]}
    atomic_write(record_path(path), json.dumps(record, indent=2) + "\n")


def forget(path: Path) -> None:
    """Someone else's settings live in the file now: it is theirs, never to be deleted."""
    with contextlib.suppress(FileNotFoundError):
        record_path(path).unlink()


def undo(path: Path) -> list[str] | None:
    """Delete a file install created, its backup, the record and the folders made for it
    (each only once empty); None, touching nothing, when there is no record of ours."""
    record = record_path(path)
    try:
        made = json.loads(record.read_text(encoding="utf-8"))
        if made.get("file") != str(path):
            return None  # copied from elsewhere: not a record of this file
        folders = [Path(str(f)) for f in made["folders"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    backup = path.with_name(path.name + config.HOOK_BACKUP_SUFFIX)
    for gone in (path, backup, record):
        with contextlib.suppress(FileNotFoundError):
            gone.unlink()
    actions = [f"deleted {path}: install created it and it held nothing else"]
    for folder in reversed(folders):
        try:
            folder.rmdir()  # only when empty: anything someone else put there stays
        except OSError:
            break
        actions.append(f"deleted {folder}/: install created it")
    return actions
