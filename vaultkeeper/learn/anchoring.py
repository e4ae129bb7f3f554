"""What ``ingest`` learns of code from a session: its repository, and suggested anchors.

A session runs in a folder (Claude Code's ``cwd``, Codex's ``session_meta.cwd``); the git
top level of that folder is the session's repository. A project folder named as that
repository (or as the folder: repo.project_named) is tied to it, when it is tied to no
other (repo.tie ``if_free``: never the vault's own repository). A session that wrote a
lesson (``vaultkeeper new memory|decision``, MCP ``new_lesson``/``new_decision``:
transcripts.py) gets the files it edited and read, inside that repository, as suggested
anchors of the lesson (anchors/vault.py keeps them; the report lists them). A path
outside the repository, a symlink leading out of it, a file of the vault, a path under
``.git`` is never suggested. Git is run only through anchors/repo.py's read-only calls.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ingest imports Touched always, the rest only for a session with a cwd
    from vaultkeeper.anchors.format import Suggestion
    from vaultkeeper.learn.transcripts import Signal

MAX_TOUCHED = 2000  # distinct files remembered per session (a runaway session's reads)


class Touched:
    """One session's folder, the entries it wrote and the files it read or edited."""

    def __init__(self) -> None:
        self.cwd: str | None = None
        self.news: dict[str, tuple[str | None, str | None]] = {}  # entry -> (vault, cwd)
        self.files: dict[str, bool] = {}  # absolute path -> edited, first seen first

    def add(self, signal: Signal) -> None:
        if signal.kind == "new":
            self.news.setdefault(signal.value, (signal.evidence, signal.cwd))
            return
        path = signal.value
        if not os.path.isabs(path):
            if not signal.cwd or not os.path.isabs(signal.cwd):
                return
            path = os.path.join(signal.cwd, path)
        path = os.path.normpath(path)
        if path in self.files or len(self.files) < MAX_TOUCHED:
            self.files[path] = self.files.get(path, False) or signal.kind == "edit"

    def merge(self, other: Touched, cwd: str | None) -> None:
        self.cwd = self.cwd or cwd
        for entry, where in other.news.items():
            self.news.setdefault(entry, where)
        for path, edited in other.files.items():
            if path in self.files or len(self.files) < MAX_TOUCHED:
                self.files[path] = self.files.get(path, False) or edited


def _inside(top: str, path: str, vault_real: str) -> str | None:
    """``path`` relative to the repository's top level when it may be suggested."""
    from vaultkeeper.anchors import vault as kept

    for base in (top, os.path.realpath(top)):
        if path.startswith(base.rstrip("/") + "/"):
            rel = path[len(base.rstrip("/")) + 1 :]
            real = os.path.realpath(path)
            if real == vault_real or real.startswith(vault_real + "/"):
                return None  # the vault's own files are no code
            return rel if kept.usable(top, rel) else None
    return None


def _same_vault(named: str | None, cwd: str | None, vault_real: str) -> bool:
    if named is None:
        return True  # the vault the session's commands found: taken as this one
    path = os.path.expanduser(named)
    if not os.path.isabs(path):
        path = os.path.join(cwd or "/", path)
    return os.path.realpath(path) == vault_real


def suggest(vault: Path, sessions: dict[str, Touched], now: dt.datetime) -> list[Suggestion]:
    """Tie the sessions' projects, keep each written lesson's suggested anchors; what was
    suggested now, one per lesson (its paths not anchored yet)."""
    vault_real = os.path.realpath(vault)
    tops: dict[str, str | None] = {}
    found: dict[str, tuple[str, list[str]]] = {}  # entry -> (session, paths)
    for session, touched in sessions.items():
        cwd = touched.cwd
        if cwd is None or not os.path.isabs(cwd):
            continue
        if not os.path.isdir(cwd):  # a transcript from another machine: nothing to read
            continue
        from vaultkeeper.anchors import repo  # git and the tie: only for a folder here

        if cwd not in tops:
            found_top = tops[cwd] = repo.toplevel(cwd)
            named = repo.project_named(vault, found_top, cwd) if found_top else None
            if named is not None:
                repo.tie(vault, named, cwd, if_free=True)
        top = tops[cwd]
        if top is None or not touched.news:
            continue
        edited = [p for p, e in touched.files.items() if e]
        ordered = edited + [p for p, e in touched.files.items() if not e]
        paths = [r for p in ordered if (r := _inside(top, p, vault_real)) is not None]
        for entry, (named_vault, where) in touched.news.items():
            project = repo.project_of(entry)
            if project is None or not _same_vault(named_vault, where or cwd, vault_real):
                continue
            if not (vault / entry).is_file():
                continue  # the `new` was refused, or the entry is gone
            if repo.located(vault, project) is None:
                repo.tie(vault, project, cwd, if_free=True)
            here = repo.located(vault, project)
            if here is None or os.path.realpath(here) != os.path.realpath(top):
                continue  # its project is another repository's: these paths are not its
            if paths:
                found[entry] = (session, paths)
    if not found:
        return []
    from vaultkeeper.anchors import vault as kept

    entries = kept.load(vault)
    for entry, (session, paths) in found.items():
        old = entries.get(entry, {}).get("paths")
        more = [p for p in old if isinstance(p, str)] if isinstance(old, list) else []
        paths = list(dict.fromkeys(paths[: kept.MAX_PER_ENTRY] + more))[: kept.MAX_PER_ENTRY]
        entries[entry] = {"paths": paths, "session": session, "date": now.date().isoformat()}
    kept.save(vault, entries, now.date())
    shown = kept.for_report(vault, kept.load_cache(vault))
    return [s for s in shown if s.path in found]
