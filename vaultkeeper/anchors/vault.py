"""Every live entry's anchors checked: what the report's "anchors" section lists.

Walks ``projects/*/memory/`` (memory and decision entries), reads each entry's
``anchors:``, status and falsification condition (kept in the cache by the entry
file's (size, mtime_ns)), checks its anchors in the project's repository and returns
one finding per entry with a changed, moved or gone anchor, saying what follows.
Never changes an entry; state/anchors-cache.json is the only file written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.anchors import repo
from vaultkeeper.anchors.check import Checker
from vaultkeeper.anchors.format import Anchor, Item, parse_condition, parse_items, text_of
from vaultkeeper.anchors.records import (
    CHANGED,
    DECIDED,
    GONE,
    HOLDS,
    MOVED,
    REOPEN,
    REVIEW,
    Finding,
    Result,
)
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself costs a scan more than it gives at run time
    from typing import Any

_CACHE_VERSION = 2


def cache_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.ANCHORS_CACHE_FILE


def load_cache(vault: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular(cache_path(vault)))
    except (ParseError, ValueError):
        return {"version": _CACHE_VERSION}
    if not isinstance(data, dict) or data.get("version") != _CACHE_VERSION:
        return {"version": _CACHE_VERSION}
    return data


def save_cache(vault: Path, cache: dict[str, Any]) -> None:
    """Kept only for a vault with a project tied to a repository (else nothing was read)."""
    if not cache.pop("_dirty", False):  # unchanged since it was read: no write
        return
    folder = vault / config.STATE_DIR
    if folder.is_dir() and not folder.is_symlink():
        atomic_write(cache_path(vault), json.dumps(cache, separators=(",", ":")), fsync_dir=False)


def _memory_files(vault: Path) -> list[str]:
    """The memory files, vault-relative, as the scan walks them (never out of the vault)."""
    from vaultkeeper.store.walk import memory_files

    cut = len(str(vault)) + 1
    return [p[cut:].replace(os.sep, "/") for p in memory_files(vault)]


def entry_keys(vault: Path, rel: str, cache: dict[str, Any]) -> list[Any] | None:
    """[name, status, falsification_condition, anchors value] of an entry with anchors."""
    entries: dict[str, Any] = cache.setdefault("entries", {})
    try:
        st = os.stat(os.path.join(vault, rel))
    except OSError:
        return None
    kept = entries.get(rel)
    if kept is not None and kept[0] == st.st_size and kept[1] == st.st_mtime_ns:
        return kept[2]  # type: ignore[no-any-return]
    keys = None
    try:
        raw = read_regular(vault / rel)
        if b"\nanchors:" in raw or b"\nfalsification_condition:" in raw:
            meta = parse_note(vault / rel, rel, decode(raw)).meta
            anchors = meta.get(config.ANCHORS_KEY)
            if anchors is not None or parse_condition(meta.get("falsification_condition")):
                items = parse_items(anchors)[0]  # kept parsed: lint names the others
                keys = [
                    str(meta.get("name") or rel),
                    str(meta.get("status") or ""),
                    meta.get("falsification_condition"),
                    [[i.at, *i.anchor, i.digest, i.commit] for i in items],
                ]
    except ParseError:
        keys = None  # the scan's own reading reports it
    entries[rel] = [st.st_size, st.st_mtime_ns, keys]
    cache["_dirty"] = True
    return keys


def check_vault(
    vault: Path, cache: dict[str, Any] | None = None, files: list[str] | None = None
) -> list[Finding]:
    """One finding per live entry with a changed, moved or gone anchor (or a condition
    written as an anchor check), in path order. Entries of an untied project are skipped.
    ``files``: the memory files as a scan just walked them (not walked again here)."""
    cache = load_cache(vault) if cache is None else cache
    repos: dict[str, Any] = cache.setdefault("repos", {})
    tops: dict[str, str | None] = {}
    checkers: dict[str, Checker] = {}
    found: list[Finding] = []
    for rel in _memory_files(vault) if files is None else files:
        project = repo.project_of(rel) or ""
        if project not in tops:
            tops[project] = repo.located(vault, project)
        top = tops[project]
        if top is None:  # untied here: nothing to check against, nothing read
            continue
        keys = entry_keys(vault, rel, cache)
        if keys is None or keys[1] == "archived":
            continue
        checker = checkers.get(top)
        if checker is None:
            checker = checkers[top] = Checker(top, repos.setdefault(top, {}))
        name, status, condition, anchors = keys
        items = [Item(i[0], Anchor(*i[1:5]), i[5], i[6]) for i in anchors]
        results = [checker.check(item) for item in items]
        cond = parse_condition(condition)
        if cond is not None and all(text_of(cond[1]) != r.at for r in results):
            results.append(checker.check(Item(text_of(cond[1]), cond[1], None, None)))
        flagged = [r for r in results if r.state in (CHANGED, MOVED, GONE)]
        if not flagged and cond is None:
            continue
        follows = _follows(status, cond, results)
        if not flagged and follows != DECIDED:
            continue
        found.append(Finding(rel, name, status, condition, tuple(flagged), follows))
    if any(c.changed for c in checkers.values()):
        cache["_dirty"] = True
    return found


def _follows(status: str, cond: tuple[str, Any] | None, results: list[Result]) -> str:
    if cond is not None and status == "held_out":
        want, anchor = cond
        state = next((r.state for r in results if r.at == text_of(anchor)), None)
        if state is None:
            return REVIEW
        met = state == want or (want == CHANGED and state in (CHANGED, MOVED, GONE))
        return DECIDED if met else HOLDS
    if status == "active" and any(r.state == GONE for r in results):
        return REOPEN
    return REVIEW


def evidence_holds(vault: Path, rel: str, evidence: str) -> str:
    """``anchor:AT@COMMIT`` verified against the check now: the state found for AT
    (gone, moved, changed, ok), or ValueError saying why the evidence is no receipt."""
    from vaultkeeper.anchors.format import AnchorError, Item, parse_at

    body = evidence.removeprefix("anchor:")
    at, _, commit = body.rpartition("@")
    if not at:
        raise ValueError(f"evidence {evidence!r}: give anchor:PATH[::NAME]@COMMIT")
    try:
        anchor = parse_at(at)
    except AnchorError as exc:
        raise ValueError(f"evidence {evidence!r}: {exc}") from None
    project = repo.project_of(rel)
    top = repo.located(vault, project) if project else None
    if top is None:
        raise ValueError(f"evidence {evidence!r}: {project} is tied to no repository here")
    return str(Checker(top, {}).check(Item(at, anchor, None, commit or None)).state)
