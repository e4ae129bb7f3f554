"""A host's settings file as JSON: reading it, its ``hooks.EVENT`` lists, writing it back.

Split from hooks.py, which decides which handlers are ours and what install, uninstall
and status do; this module only moves plain JSON values in and out of the file (the
MCP registration reads and writes the same files through it). read_settings and
replace_keeping_backup are re-exported from hooks.py, where callers import them.

It also remembers that ``hooks install`` created a settings file (a fresh home has
none), so uninstall can leave the home as it was: the file, our backup, the record
beside it and the folders made for it go, but only while nothing but our handlers was
ever put in it.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store.fsio import atomic_write


def read_settings(path: Path) -> tuple[dict[str, Any], str | None]:
    """The file's JSON object (``{}`` when absent or blank) and its raw text."""
    if not path.exists():
        return {}, None
    if not path.is_file():  # a FIFO would block the read for ever
        raise VaultkeeperError(f"{path}: not a regular file; nothing written")
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise VaultkeeperError(f"{path}: not UTF-8 text; nothing written") from None
    if not raw.strip():
        return {}, raw
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise VaultkeeperError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); nothing written"
        ) from None
    except RecursionError:  # json's nesting depth passed: not a host's settings either
        raise VaultkeeperError(
            f"{path}: not valid JSON (nested too deep); nothing written"
        ) from None
    if not isinstance(data, dict):
        raise VaultkeeperError(
            f"{path}: holds a JSON {type(data).__name__}, not an object; nothing written"
        )
    return data, raw


def event_groups(data: dict[str, Any], event: str, path: Path) -> list[Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise VaultkeeperError(f'{path}: "hooks" is not an object; nothing written')
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise VaultkeeperError(f'{path}: "hooks.{event}" is not a list; nothing written')
    return groups


def without_spots(groups: list[Any], spots: list[tuple[int, int]]) -> list[Any]:
    """``groups`` without the handlers at ``spots``; a group left empty by that goes too."""
    drop: dict[int, set[int]] = {}
    for gi, hi in spots:
        drop.setdefault(gi, set()).add(hi)
    out: list[Any] = []
    for gi, group in enumerate(groups):
        if gi not in drop:
            out.append(group)
            continue
        kept = [h for hi, h in enumerate(group["hooks"]) if hi not in drop[gi]]
        if kept:
            out.append({**group, "hooks": kept})
    return out


def set_groups(data: dict[str, Any], event: str, groups: list[Any]) -> None:
    hooks = data.setdefault("hooks", {})
    if groups:
        hooks[event] = groups
    else:
        hooks.pop(event, None)
        if not hooks:
            del data["hooks"]


def replace_keeping_backup(path: Path, existed: bool, text: str) -> str | None:
    """Write ``text`` over a host's file atomically; the file as it was (if it was) is
    kept beside it first. Returns the backup's path."""
    backup: str | None = None
    if existed:
        bak = path.with_name(path.name + config.HOOK_BACKUP_SUFFIX)
        atomic_write(bak, path.read_bytes())
        backup = str(bak)
    atomic_write(path, text)
    return backup


def indent_of(raw: str | None) -> int | str:
    """The file's own indentation (first indented line), so a rewrite stays familiar."""
    for line in (raw or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def record_path(path: Path) -> Path:
    return path.with_name(path.name + config.HOOK_CREATED_SUFFIX)


def missing_folders(folder: Path) -> list[Path]:
    """The folders a write into ``folder`` would create, outermost first."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def remember_created(path: Path, folders: list[Path]) -> None:
    record = {"file": str(path), "folders": [str(f) for f in folders]}
    atomic_write(record_path(path), json.dumps(record, indent=2) + "\n")


def forget_created(path: Path) -> None:
    """Someone else's settings live in the file now: it is theirs, never to be deleted."""
    with contextlib.suppress(FileNotFoundError):
        record_path(path).unlink()


def undo_created(path: Path) -> list[str] | None:
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
