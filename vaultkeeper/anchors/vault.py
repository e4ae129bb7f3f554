"""Every live entry's anchors checked, and the anchors suggested for them: what the
report's "anchors" sections list.

Walks ``projects/*/memory/`` (memory and decision entries), reads each entry's
``anchors:``, status and falsification condition (kept in the cache by the entry
file's stat key, as rows of the derived store: ``anchor_entries``; a file changed within
``RACY_NS`` of the read gets no row), checks its anchors in the project's repository
(what the checker read of each repository file: ``anchor_repos``) and returns one
finding per entry with a changed, moved or gone anchor, saying what follows. Never
changes an entry; the rows are the only thing written, and only into a vault whose
``state/`` is a real folder. A missing or foreign database means reading again.

Suggested anchors: the files the session that wrote a lesson read and edited. ``ingest``
finds them (vaultkeeper/learn/ingest.py) and keeps them in ``state/machine.json``
(this machine's, bounded: at most MAX_ENTRIES entries, MAX_PER_ENTRY paths each, none
older than MAX_AGE_DAYS). The report lists, per live entry, those still worth accepting:
a regular file inside the project's repository, not anchored yet, nothing in its name
that would be masked. Accepting one is ``vaultkeeper apply anchor ENTRY --add PATH``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.anchors import repo
from vaultkeeper.anchors.check import Checker
from vaultkeeper.anchors.format import (
    CHANGED,
    DECIDED,
    FILE,
    GONE,
    HOLDS,
    MOVED,
    REOPEN,
    REVIEW,
    Anchor,
    AnchorError,
    Finding,
    Item,
    Result,
    Suggestion,
    parse_at,
    parse_condition,
    parse_items,
    text_of,
)
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import machine
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.store.secrets import needs_serving
from vaultkeeper.store.vault import resolve_inside

RACY_NS = 2_000_000_000  # an entry file changed this recently gets no row (scan/cache.py)


def load_cache(vault: Path) -> dict[str, Any]:
    """The rows as one dict: ``entries`` (path -> [stat key text, keys]), ``repos`` (a
    repository's top -> what its checker read), and the rows as read (``_found``)."""

    from vaultkeeper.store import db

    entries: dict[str, Any] = {}
    repos: dict[str, Any] = {}
    with db.existing(vault) as conn:
        if conn is not None:
            try:
                for rel, key, keys in conn.execute("SELECT * FROM anchor_entries"):
                    entries[rel] = [key, json.loads(keys)]
                for top, value in conn.execute("SELECT * FROM anchor_repos"):
                    found = json.loads(value)
                    if isinstance(found, dict):
                        repos[top] = found
            except (sqlite3.Error, ValueError, RecursionError):
                entries, repos = {}, {}
    found = {"entries": dict(entries), "repos": json.dumps(repos, sort_keys=True)}
    return {"entries": entries, "repos": repos, "_found": found}


def save_cache(vault: Path, cache: dict[str, Any]) -> None:
    """Write the rows that changed; only for a vault with a project tied to a repository
    (else nothing was read) and a real ``state/`` folder. Never the scan's failure."""

    from vaultkeeper.store import db

    found = cache.pop("_found", {"entries": {}, "repos": "{}"})
    if not cache.pop("_dirty", False):  # unchanged since it was read: no write
        return
    folder = vault / config.STATE_DIR
    if not folder.is_dir() or folder.is_symlink():
        return
    entries: dict[str, Any] = cache.get("entries", {})
    old: dict[str, Any] = found["entries"]
    try:
        with db.connect(vault) as conn, db.writing(conn):
            gone = [(p,) for p in old.keys() - entries.keys()]
            conn.executemany("DELETE FROM anchor_entries WHERE path = ?", gone)
            new = [(p, v[0], json.dumps(v[1])) for p, v in entries.items() if old.get(p) != v]
            conn.executemany("INSERT OR REPLACE INTO anchor_entries VALUES (?, ?, ?)", new)
            repos = json.dumps(cache.get("repos", {}), sort_keys=True)
            if repos != found["repos"]:
                conn.execute("DELETE FROM anchor_repos")
                conn.executemany(
                    "INSERT INTO anchor_repos VALUES (?, ?)",
                    [(top, json.dumps(v)) for top, v in cache.get("repos", {}).items()],
                )
    except (sqlite3.Error, OSError, VaultkeeperError):  # only slower next time
        pass


def _memory_files(vault: Path) -> list[str]:
    """The memory files, vault-relative, as the scan walks them (never out of the vault)."""
    from vaultkeeper.store.walk import memory_files

    cut = len(str(vault)) + 1
    return [p[cut:].replace(os.sep, "/") for p in memory_files(vault)]


def entry_keys(vault: Path, rel: str, cache: dict[str, Any]) -> list[Any] | None:
    """[name, status, falsification_condition, anchors value] of an entry with anchors."""

    from vaultkeeper.store.db import key_text

    entries: dict[str, Any] = cache.setdefault("entries", {})
    try:
        st = os.stat(os.path.join(vault, rel))
    except OSError:
        return None
    key = key_text((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    kept = entries.get(rel)
    if type(kept) is list and len(kept) == 2 and kept[0] == key:
        return kept[1]  # type: ignore[no-any-return]
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
    settled = time.time_ns() - RACY_NS
    if st.st_mtime_ns < settled and st.st_ctime_ns < settled:  # else it may change unseen
        entries[rel] = [key, keys]
        cache["_dirty"] = True
    elif entries.pop(rel, None) is not None:
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


# -- suggested anchors ------------------------------------------------------------------

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
    machine.update(vault, KEY, lambda _: {k: entries[k] for k in sorted(k for _, k in keep)})


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
