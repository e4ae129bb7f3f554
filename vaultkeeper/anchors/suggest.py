"""Suggested anchors: the files the session that wrote a lesson read and edited.

``ingest`` finds them (vaultkeeper/learn/anchoring.py) and keeps them in
``state/machine.json`` (this machine's, not committed; bounded: at most
MAX_ENTRIES entries, MAX_PER_ENTRY paths each, none older than MAX_AGE_DAYS). The scan's
report lists, per live entry, those still worth accepting: a regular file inside the
project's repository, not anchored yet, nothing in its name that would be masked.
Accepting one is ``vaultkeeper apply anchor ENTRY --add PATH``; nothing here edits an entry.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from vaultkeeper.anchors import repo
from vaultkeeper.anchors.format import FILE, AnchorError, parse_at
from vaultkeeper.anchors.records import Suggestion
from vaultkeeper.anchors.vault import check_vault, entry_keys, load_cache, save_cache
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import machine
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.store.secrets import needs_serving
from vaultkeeper.store.vault import resolve_inside

KEY = "anchor_suggestions"  # in state/machine.json
MAX_ENTRIES = 100  # the newest entries' suggestions are kept
MAX_PER_ENTRY = 8  # files edited first, then files read, in the order the session did
MAX_AGE_DAYS = 30  # a suggestion nobody took in a month is dropped


def load(vault: Path) -> dict[str, Any]:
    """{entry path: {"paths": [...], "session": ID, "date": ISO}}."""
    entries = machine.get(vault, KEY)
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, dict)}


def save(vault: Path, entries: dict[str, Any], today: dt.date) -> None:
    """Kept bounded: the newest MAX_ENTRIES, none older than MAX_AGE_DAYS."""
    oldest = (today - dt.timedelta(days=MAX_AGE_DAYS)).isoformat()
    fresh = [(str(v.get("date") or ""), k) for k, v in entries.items()]
    keep = sorted((d, k) for d, k in fresh if d >= oldest)[-MAX_ENTRIES:]
    machine.update(vault, KEY, lambda _: {k: entries[k] for _, k in sorted(keep, key=_rel)})


def _rel(item: tuple[str, str]) -> str:
    return item[1]


def usable(top: str, rel: str) -> bool:
    """Whether ``rel`` may be suggested: a plain file anchor's path (parse_at), a regular
    file whose real path is inside the repository, not under .git, nothing to mask."""
    try:
        anchor = parse_at(rel)
    except AnchorError:
        return False
    if anchor.kind != FILE or anchor.path != rel or rel.split("/")[0] == ".git":
        return False
    if needs_serving(rel):
        return False
    real_top = os.path.realpath(top)
    real = os.path.realpath(os.path.join(real_top, rel))
    return os.path.commonpath([real_top, real]) == real_top != real and os.path.isfile(real)


def _meta(vault: Path, rel: str, cache: dict[str, Any]) -> tuple[str, str, set[str]] | None:
    """(name, status, the paths its anchors name) of the entry at ``rel``."""
    keys = entry_keys(vault, rel, cache)
    if keys is not None:
        return keys[0], keys[1], {a[2] for a in keys[3]}
    try:
        meta = parse_note(vault / rel, rel, decode(read_regular(vault / rel))).meta
    except ParseError:
        return None
    return str(meta.get("name") or rel), str(meta.get("status") or ""), set()


def for_report(vault: Path, cache: dict[str, Any]) -> list[Suggestion]:
    """Per live entry with a suggestion still worth taking: its paths, in order."""
    out: list[Suggestion] = []
    tops: dict[str, str | None] = {}
    for rel, item in sorted(load(vault).items()):
        project = repo.project_of(rel)
        paths = item.get("paths")
        if project is None or not isinstance(paths, list) or not rel.endswith(".md"):
            continue
        try:
            resolve_inside(vault, rel)  # an entry symlinked out of the vault is not read
        except VaultkeeperError:
            continue
        if project not in tops:
            tops[project] = repo.located(vault, project)
        top = tops[project]
        meta = _meta(vault, rel, cache) if top is not None else None
        if top is None or meta is None or meta[1] == "archived":
            continue
        name, _, have = meta
        left = [p for p in paths if isinstance(p, str) and p not in have and usable(top, p)]
        if left:
            out.append(Suggestion(rel, name, tuple(left[:MAX_PER_ENTRY])))
    return out


def for_scan(
    vault: Path, save: bool, files: list[str] | None = None
) -> tuple[tuple[Any, ...], tuple[Suggestion, ...]]:
    """The report's anchor findings and suggestions from one read of the anchors' cache;
    ``save``: the scan's own run keeps the cache (``scan --as-of`` leaves it); ``files``:
    the memory files the scan walked (vault-relative, in its order)."""
    cache = load_cache(vault)
    found = tuple(check_vault(vault, cache, files)), tuple(for_report(vault, cache))
    if save:
        save_cache(vault, cache)
    return found
