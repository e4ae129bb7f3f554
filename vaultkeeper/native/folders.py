"""Which auto-memory folders a vault curates, found as Claude Code finds them.

Claude Code keeps one folder per project, ``~/.claude/projects/<sanitized-cwd>/memory/``,
where the sanitized cwd is the session's working directory with every character but
ASCII letters and digits written as ``-`` (a name over 200 characters is cut there and
given a hash tail, which is matched here by its prefix). A user setting
``autoMemoryDirectory`` in ``~/.claude/settings.json`` replaces that folder for every
project (Claude Code ignores it in a project's checked-in settings, and so does this).

The adopted folders are this machine's paths, so they live in ``state/machine.json``
(never committed); the counters they earn are the vault's and travel through git.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.store import machine

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_NAME_MAX = 200  # Claude Code cuts a sanitized name here and adds a hash of the path


@dataclass(frozen=True)
class Folder:
    """One adopted auto-memory folder: ``project`` names its counters in the registry."""

    project: str
    path: str  # absolute, this machine's


def sanitize(cwd: str) -> str:
    """A working directory as Claude Code names its project folder."""
    return _NOT_ALNUM.sub("-", cwd)


def projects_dir(home: Path) -> Path:
    return home / config.CLAUDE_DIR / config.CLAUDE_PROJECTS_DIR


def user_memory_dir(home: Path) -> Path | None:
    """The user setting ``autoMemoryDirectory``, ``~/`` expanded; None when unset or unreadable."""
    try:
        data = json.loads((home / config.CLAUDE_DIR / "settings.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(config.AUTO_MEMORY_DIR_KEY) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    if value.startswith("~/"):
        return home / value[2:]
    path = Path(value)
    return path if path.is_absolute() else None


def folder_for_cwd(home: Path, cwd: str) -> Path | None:
    """The auto-memory folder a session in ``cwd`` reads and writes."""
    custom = user_memory_dir(home)
    if custom is not None:
        return custom
    name = sanitize(cwd)
    top = projects_dir(home)
    if len(name) <= _NAME_MAX:
        return top / name / config.NATIVE_MEMORY_SUBDIR
    try:  # the hash tail is Claude Code's own: find the folder by the part before it
        found = sorted(p for p in top.iterdir() if p.name.startswith(name[:_NAME_MAX] + "-"))
    except OSError:
        return None
    return found[0] / config.NATIVE_MEMORY_SUBDIR if len(found) == 1 else None


def project_of(home: Path, folder: Path) -> str:
    """The counters' project name: the project folder's name without Claude Code's leading
    ``-`` (a name on the command line must not read as an option), or the custom
    folder's own name."""
    if folder.parent.parent == projects_dir(home):
        return folder.parent.name.lstrip("-") or folder.parent.name
    return folder.name


def discover(home: Path) -> list[Path]:
    """Every auto-memory folder there is: each project's, then the custom one."""
    found: list[Path] = []
    try:
        projects = sorted(projects_dir(home).iterdir())
    except OSError:
        projects = []
    for project in projects:
        memory = project / config.NATIVE_MEMORY_SUBDIR
        if memory.is_dir() and not memory.is_symlink() and not project.is_symlink():
            found.append(memory)
    custom = user_memory_dir(home)
    if custom is not None and custom.is_dir() and custom not in found:
        found.append(custom)
    return found


def pruned_here(vault: Path) -> dict[str, str]:
    """trash id -> digest of what this machine's own ``native prune`` put in
    ``.trash/<id>/`` (its record and the memory's bytes). ``.trash/`` travels with the
    vault, so a record there is input; only one this list vouches for is restored into a
    host's folder. Kept in this machine's records, as the adopted folders are."""
    got = machine.get(vault, "pruned")
    if not isinstance(got, dict):
        return {}
    return {k: v for k, v in got.items() if isinstance(k, str) and isinstance(v, str)}


def set_pruned(vault: Path, trash_id: str, digest: str | None) -> None:
    """Vouch for ``trash_id`` (``digest``), or forget it (None: restored)."""

    def change(had: Any) -> dict[str, str]:
        have = {k: v for k, v in had.items() if isinstance(v, str)} if isinstance(had, dict) else {}
        if digest is None:
            have.pop(trash_id, None)
        else:
            have[trash_id] = digest
        return have

    machine.update(vault, "pruned", change)


def adopted(vault: Path) -> tuple[Folder, ...]:
    """The folders this vault curates on this machine (none: nothing adopted yet)."""
    return _folders(machine.get(vault, "folders"))


def _folders(items: Any) -> tuple[Folder, ...]:
    out: list[Folder] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and all(
            isinstance(item.get(k), str) for k in ("project", "path")
        ):
            out.append(Folder(item["project"], item["path"]))
    return tuple(out)


def adopt(vault: Path, home: Path, folders: list[Path]) -> tuple[Folder, ...]:
    """Add ``folders`` to the adopted ones (an existing one stays once); the new list.
    The list is made from what machine.json holds when it is written (under the writer
    lock), so an adopt that wrote meanwhile keeps its folder."""
    adding: dict[str, Folder] = {}
    for folder in folders:
        real = folder.expanduser()
        if not real.is_absolute():
            real = Path(os.path.abspath(real))
        if not real.is_dir() or real.is_symlink():
            raise UsageError(f"{folder}: not an auto-memory folder (no such directory)")
        if Path(vault).resolve() in (real.resolve(), *real.resolve().parents):
            raise UsageError(f"{folder}: inside the vault; adopt the host's folder, not a copy")
        adding.setdefault(str(real), Folder(project_of(home, real), str(real)))
    result: list[tuple[Folder, ...]] = []

    def change(had: Any) -> list[dict[str, str]]:
        have = {f.path: f for f in _folders(had)}
        for path, found in adding.items():
            have.setdefault(path, found)
        now = tuple(sorted(have.values(), key=lambda f: f.path))
        names = [f.project for f in now]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:  # nothing written
            raise UsageError(f"two adopted folders share the project name {clash[0]!r}")
        result.append(now)
        return [asdict(f) for f in now]

    machine.update(vault, "folders", change)
    return result[0]
