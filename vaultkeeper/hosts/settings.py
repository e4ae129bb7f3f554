"""A host's settings file as JSON: reading it, its ``hooks.EVENT`` lists, writing it back.

Split from hooks.py, which decides which handlers are ours and what install, uninstall
and status do; this module only moves plain JSON values in and out of the file (the
MCP registration reads and writes the same files through it). read_settings and
replace_keeping_backup are re-exported from hooks.py, where callers import them.
"""

from __future__ import annotations

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
