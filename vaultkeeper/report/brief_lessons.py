"""The project lessons only PyYAML can read, as the last scan read them, for the brief.

The session-start brief reads each lesson of the session's project (recall/start.py).
Most files' frontmatter is in the simple forms store/quickmeta.py reads; the few others
(an escape in a double-quoted string, say) needed PyYAML, whose import alone was about a
third of the brief's time. The scan saves, in ``state/brief-lessons.json``, what the
brief takes from each such file (name, description, status, and whether it is served at
all: archived and superseded ones are not) under the file's stat key, and the stat keys
of the files quickmeta reads (so the next scan reads only the files that changed). The
brief uses a saved fact only while the file's stat key is still the saved one: a lesson
edited since (superseded, archived) is read again, with YAML; a missing, corrupt or
foreign file means YAML for every such lesson, as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.vault import own_dir

FORMAT = 1
KEYS = ("name", "description", "status", "superseded_by")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Fields = list[Any]  # [name or None (the file's stem), description, status or None]


def _path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.BRIEF_LESSONS_FILE


def stat_key(path: str) -> list[int]:
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def quick(text: str) -> tuple[bool, dict[str, Any] | None]:
    """(True, the keys) when quickmeta reads the frontmatter, (True, None) when there is
    none, (False, None) when only YAML can read it. Raises model.ParseError."""
    from vaultkeeper.store import model, quickmeta

    front = quickmeta.read_front(text, KEYS)
    if front is not None:
        return True, front[0]
    yaml_text = model.split_frontmatter(text)[0]
    if yaml_text is None:
        return True, None
    found = quickmeta.read_keys(yaml_text, KEYS)
    return (True, found[0]) if found is not None else (False, None)


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


def _read(vault: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_path(vault).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    if not isinstance(data.get("yaml"), dict) or not isinstance(data.get("quick"), dict):
        return None
    return data


class Saved:
    """The saved facts, read on first need (most briefs need none)."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.data: dict[str, Any] | None = None
        self.loaded = False

    def get(self, path: str, rel: str) -> tuple[bool, Fields | None]:
        """(True, the saved fields) while ``path`` is as the scan saw it, else (False, None)."""
        if not self.loaded:
            self.data, self.loaded = _read(self.vault), True
        try:
            item = None if self.data is None else self.data["yaml"].get(rel)
            if type(item) is not list or len(item) != 2 or item[0] != stat_key(path):
                return False, None
            got = item[1]
            if got is None:
                return True, None
            name, description, status = got
            ok = (name is None or type(name) is str) and type(description) is str
            if ok and (status is None or type(status) is str):
                return True, [name, description, status]
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        return False, None


def save(vault: Path, stats: dict[str, list[int]], limit: int) -> None:
    """Keep the facts of every project's lessons only YAML reads (the scan's run), from
    ``stats``: each lesson file's stat key as the scan found it (a file changed since
    ``limit``, epoch ns, is left out: it may change again within the clock's tick)."""
    from vaultkeeper.store import model
    from vaultkeeper.store.fsio import atomic_write

    before = _read(vault) or {"yaml": {}, "quick": {}}
    yaml_facts: dict[str, Any] = {}
    quick_keys: dict[str, list[int]] = {}
    top = str(vault)
    for rel, key in stats.items():
        if max(key[3], key[4]) >= limit:
            continue  # the brief reads it
        if before["quick"].get(rel) == key:
            quick_keys[rel] = key
            continue
        old = before["yaml"].get(rel)
        if type(old) is list and old and old[0] == key:
            yaml_facts[rel] = old
            continue
        path = f"{top}/{rel}"
        try:
            try:
                text = model.decode(model.read_regular(path))
                simple, _ = quick(text)
                got = None if simple else fields(with_yaml(path, rel, text))
            except model.ParseError:
                simple, got = False, None  # never served (the scan reports it)
            if stat_key(path) != key:
                continue  # changed since the scan's stat
        except OSError:
            continue
        if simple:
            quick_keys[rel] = key
        else:
            yaml_facts[rel] = [key, got]
    body = {"format": FORMAT, "yaml": yaml_facts, "quick": quick_keys}
    if body != before:
        atomic_write(_path(vault), json.dumps(body) + "\n", fsync_dir=False)


def after_scan(vault: Path, stats: dict[str, list[int]], limit: int) -> None:
    """``save``, never the scan's failure: the brief then reads such lessons with YAML."""
    import contextlib

    from vaultkeeper.errors import VaultkeeperError

    with contextlib.suppress(VaultkeeperError, OSError, ValueError):
        save(vault, stats, limit)
