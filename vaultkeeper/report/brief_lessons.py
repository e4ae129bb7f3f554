"""What the session-start brief shows of each lesson of the session's project, and the
scan's rows that spare it reading the files.

The brief (recall/start.py) serves each lesson of the session's project: its name,
description and status, never an archived or superseded one. Reading every lesson file
(and PyYAML's import, a third of the brief's time) cost the brief hundreds of
milliseconds on a big project.
The scan reads every memory file anyway, so each file's row in the derived store
(``scan_memory.served``, scan/cache.py) holds what the brief shows of it (``fields``),
under the file's stat key. The brief stats each file of the project and uses the row
while the key is still the row's; a file changed since, or one no scan has kept (too
new, unreadable), is read here as before. There is no copy to go stale: a lesson
archived by a hand edit has another stat key, so its row is not used.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config

KEYS = ("name", "description", "status", "superseded_by")


if TYPE_CHECKING:
    Fields = list[Any]  # [name or None (the file's stem), description, status or None]


def with_yaml(path: str, where: str, text: str) -> dict[str, Any] | None:
    """The frontmatter as YAML reads it; raises model.ParseError."""
    from vaultkeeper.store import model

    fm = model.parse_note(Path(path), where, text).frontmatter
    return None if fm is None else dict(fm.data)


def fields(meta: dict[str, Any] | None) -> Fields | None:
    """What the brief shows of a lesson; None for one it never serves (unreadable,
    archived, superseded)."""
    if meta is None:
        return None
    status = meta.get("status")
    if status == "archived" or meta.get("superseded_by") not in (None, "", []):
        return None
    name = meta.get("name")
    return [
        str(name) if name not in (None, "") else None,
        "" if meta.get("description") is None else str(meta.get("description")),
        None if status is None else str(status),
    ]


def memory_files(vault: Path, project: str) -> list[str]:
    """The project's memory files the brief may serve (none symlinked out of the vault)."""
    from vaultkeeper.store.vault import links_out, walk_files

    folder = vault / config.PROJECTS_DIR / project / config.MEMORY_SUBDIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    root = os.path.realpath(vault)
    return [
        path
        for path in walk_files(vault, folder)
        if path.endswith(".md") and not (os.path.islink(path) and links_out(root, path))
    ]


class Saved:
    """The scan's rows of one project's lessons, read once (one query, no file read)."""

    def __init__(self, vault: Path, project: str) -> None:

        from vaultkeeper.store import db

        self.rows: dict[str, tuple[str, str]] = {}
        prefix = f"{config.PROJECTS_DIR}/{project}/{config.MEMORY_SUBDIR}/"
        with db.existing(vault) as conn:  # none yet (no scan): every lesson is read
            if conn is None:
                return
            try:
                found = conn.execute(
                    "SELECT path, key, served FROM scan_memory WHERE path >= ? AND path < ?",
                    (prefix, prefix[:-1] + chr(ord("/") + 1)),  # the paths under prefix
                ).fetchall()
            except sqlite3.Error:  # a shortcut only: the files are read
                return
        self.rows = {path: (key, served) for path, key, served in found}

    def get(self, path: str, rel: str) -> tuple[bool, Fields | None]:
        """(True, the fields) while ``path``'s stat key is its row's, else (False, None)."""
        row = self.rows.get(rel)
        if row is None:
            return False, None
        try:
            st = os.stat(path)
        except OSError:
            return False, None
        from vaultkeeper.store.db import key_text

        if row[0] != key_text((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)):
            return False, None
        try:
            got = json.loads(row[1])
        except (ValueError, RecursionError, TypeError):
            return False, None
        if got is None:
            return True, None
        if type(got) is list and len(got) == 3:
            name, description, status = got
            ok = (name is None or type(name) is str) and type(description) is str
            if ok and (status is None or type(status) is str):
                return True, [name, description, status]
        return False, None
