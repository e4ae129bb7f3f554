"""The last completed scan's report, as every reader sees it: derived, never kept true by hand.

The report is a function of the vault's files and of the moment the last completed scan
started (``state/self-maintain.json``: ``lastCompleted`` less ``durationMs``): the
scan's classification (scan/classify.py) as of that moment. ``derived`` gives it from
the rows of ``state/vaultkeeper.db`` (scan/reportrow.py) while every file it is derived
from (the registry and memory files, the usage log, the journal, ``machine.json``) has
the stat key it had when its row was kept -- taken before the files were read, and for
a file changed within RACY_NS of that, its bytes' digest too. When some changed, only
what they can change is classified again (``_patched``): a memory file's held-out
candidate, problems, facts and stale line, and its project's duplicate pairs; a registry
file's candidates, problems and skills, and its blocks' lines in the pairs; the stale
lessons and unused skills from the usage log; and only those rows are written. What
that cannot do exactly (a block's name or first sentence changed, a registry file added,
gone or unreadable, a symlink out of the vault come or gone: never read, its key "out"; a
name used twice, anchors tied to a repository) is classified again whole, from the scan's
rows. Either way the result is what a full classification gives;
deleting the database gives the same report.

A decision since the scan that changed no file (a skip, a question queued for a person,
a person's no) is read from the journal: it marks its candidate ``handled``. "Since" is
by place: the lines after the journal's length when the scan began (``journalBytes`` in
the state file's ``perTask.selfMaintain``), so a decision in the scan's own second is
placed right; a state file without it falls back to the decision's second.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError, VaultkeeperError
from vaultkeeper.report.candidates import HELD_OUT, Candidate, Report, iso
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan.cache import ScanCache
from vaultkeeper.scan.reportrow import (
    BAD_ROW,
    MEMORY,
    OUT,
    REGISTRY,
    STATE_INPUTS,
    Inputs,
    Rows,
    assemble,
    bytes_digest,
    changed_bytes,
    facts_of,
    inputs,
    is_input,
    items_digest,
    items_text,
    keys_digest,
    load,
    ordered,
    pair,
    served_rows,
    shape,
    split,
    top_of,
    tops,
    usage_view,
    write,
)
from vaultkeeper.store import db
from vaultkeeper.store.model import Problem
from vaultkeeper.store.text import ParseError, read_regular
from vaultkeeper.store.walk import links_out


class Last(NamedTuple):
    """The last report as the files say now, and what its rows keep beside it."""

    report: Report
    patterns: Any  # the registry's most-used patterns, [rows, total]; None: not had
    bare: dict[str, list[Any]] | None  # a registry file -> its blocks without counters


def _figures(data: dict[str, Any]) -> dict[str, Any]:
    """The state file's ``perTask.selfMaintain`` (the last completed scan's figures)."""
    figures = (data.get("perTask") or {}).get("selfMaintain") or {}
    return figures if isinstance(figures, dict) else {}


def journal_mark(data: dict[str, Any]) -> tuple[int, str] | None:
    """How long the journal was when the last completed scan began, and the digest of
    its last bytes then, from the state file's ``data`` (None: not recorded)."""
    figures = _figures(data)
    mark, tail = figures.get("journalBytes"), figures.get("journalTail")
    if type(mark) is not int or mark < 0 or not isinstance(tail, str):
        return None
    return mark, tail


def started(data: dict[str, Any]) -> tuple[int, int] | None:
    """(when the last completed scan started, its duration), epoch ms, from the state
    file's ``data``; None: none completed."""
    done = data.get("lastCompleted")
    took = _figures(data).get("durationMs")
    took = took if type(took) is int and took >= 0 else 0
    if type(done) is not int or done <= took:
        return None
    return done - took, took


def last_report(vault: Path) -> Report | None:
    """The last completed scan's report, as the vault's files say now (see the module doc)."""
    got = derived(vault)
    return None if got is None else got.report


def derived(vault: Path) -> Last | None:
    """``last_report`` with the registry's most-used patterns and blocks without counter
    lines as of it (the brief's and status's), from the same rows; None: no scan completed."""
    from vaultkeeper.scan.statefile import read_state

    data = read_state(vault).data  # read once: when the scan began, its journal mark
    when = started(data)
    if when is None:
        return None
    found = inputs(vault)
    got = _from_rows(vault, when, found) or _whole(vault, when, found)
    report = _handled(vault, got.report._replace(vault=str(vault)), journal_mark(data))
    return got._replace(report=report)


def _last(head: list[Any], found: Inputs, items: dict[str, Any]) -> Last:
    return Last(assemble(head, found.keys, items), *head[11])


def _from_rows(vault: Path, when: tuple[int, int], found: Inputs) -> Last | None:
    """The report from the rows kept as of the scan's start, patched where files changed
    (and those rows written); None: none kept, or it must be classified whole."""
    with contextlib.suppress(*BAD_ROW), db.existing(vault) as conn:
        if conn is None:
            return None
        conn.execute("BEGIN")  # one snapshot of every row
        try:
            rows = load(conn, when[0], found)
            if rows is None:
                return None
            if rows.keys == found.keys and not changed_bytes(vault, rows.racy, set()):
                return _last(rows.head, found, rows.items)
            got = _patched(vault, conn, when[0], found, rows)
        finally:
            conn.execute("COMMIT")
        if got is None:
            return None
        head, items, basis, changed = got
        with contextlib.suppress(sqlite3.Error):  # the rows are a shortcut
            write(conn, when[0], found, head, items, basis, rows.digest, changed)
        texts = {p: t for p, t in {**rows.items, **items}.items() if t is not None}
        return _last(head, found, texts)
    return None


def wrote(vault: Path, written: list[str]) -> None:
    """After a command wrote ``written`` (paths) and journaled it: the report's rows of
    those files and of the logs derived again as a reader's patch would (``_patched``),
    so the next reader finds them fresh and patches nothing. Only those files are
    stat'ed (their keys taken before they are read, a racy one's bytes digested): the
    other rows keep theirs, so a file changed by hand meanwhile is still patched by the
    next reader, and rows another reader patched meanwhile are left alone (``write``).
    Nothing is written when only the logs changed, or when it cannot be done exactly (a
    file added, a block's words changed, no rows kept): the next reader derives as before."""
    from vaultkeeper.scan.statefile import read_state

    named = {f"{config.STATE_DIR}/{name}" for name in STATE_INPUTS}
    for top in {os.path.abspath(vault), os.path.realpath(vault)}:
        base = top.rstrip(os.sep) + os.sep
        for full in map(os.path.abspath, written):
            if full.startswith(base):
                named.add(full[len(base) :].replace(os.sep, "/"))
    if not any(map(is_input, named)):
        return  # only the logs (a decision queued, a skip): the reader's patch is cheap
    when = started(read_state(vault).data)
    if when is None or not os.path.isfile(db.path_of(vault)):
        return
    with contextlib.suppress(*BAD_ROW, VaultkeeperError), db.existing(vault) as conn:
        if conn is None:  # the rows are a shortcut: a failure leaves them to the next reader
            return
        conn.execute("BEGIN")  # one snapshot of every row
        try:
            rows = ordered(conn, when[0])
            found = None if rows is None else _restated(vault, rows, named)
            if rows is None or found is None:
                return
            got = _patched(vault, conn, when[0], found, rows)
        finally:
            conn.execute("COMMIT")
        if got is not None:
            write(conn, when[0], found, *got[:3], rows.digest, got[3])


def _restated(vault: Path, rows: Rows, named: set[str]) -> Inputs | None:
    """``rows``' inputs with the stat keys of the ``named`` files taken again (a racy
    one's bytes digested); None when one of them is an input the rows do not hold."""
    limit = time.time_ns() - scancache.RACY_NS  # as inputs() takes them
    root = os.path.realpath(vault)
    keys = dict(rows.keys)
    racy = {p: d for p, d in rows.racy.items() if p not in named}
    for rel in named:
        path = f"{vault}/{rel}"
        if rel in keys and is_input(rel) and os.path.islink(path) and links_out(root, path):
            keys[rel] = OUT  # a symlink out of the vault: never read
            continue
        try:
            info = os.stat(path)
        except OSError:
            if rel.startswith(config.STATE_DIR + "/"):
                keys[rel] = "-"
            else:
                keys.pop(rel, None)  # gone (to .trash/): no longer an input
            continue
        if rel not in keys:
            if is_input(rel):
                return None  # a file added: its place in the scan's order is not known
            continue
        keys[rel], settled = db.stat_key(info, limit)
        if not settled:
            racy[rel] = bytes_digest(path)
    return Inputs(keys_digest(keys), keys, racy)


def _whole(vault: Path, when: tuple[int, int], found: Inputs, keep: bool = True) -> Last:
    """The full classification (from the scan's rows: only changed files are read), kept
    (``keep``) for the next reader where there is a database."""
    from vaultkeeper.clock import from_ns
    from vaultkeeper.scan.classify import classify

    rows = ScanCache()  # a reader keeps no rows; an empty cache only gathers the pairs
    if os.path.lexists(db.path_of(vault)):
        with contextlib.suppress(UnsafePathError):  # a linked database: not used
            rows = scancache.load(vault)
    parts: dict[str, Any] = {}
    now = from_ns(when[0] * 1_000_000)
    report = classify(vault, now, rows, parts)._replace(duration_ms=when[1])
    try:
        head, items, basis = split(vault, report, parts, rows, found)
    except ValueError:  # lists out of their files' order: nothing kept
        return Last(report, None, None)
    with contextlib.suppress(sqlite3.Error, OSError), db.existing(vault) as conn:
        if conn is not None and keep:
            write(conn, when[0], found, head, items, basis)
    texts = {p: t for p, t in items.items() if t is not None}
    return _last(head, found, texts)


# -- the patch -----------------------------------------------------------------------------


def _patched(
    vault: Path, conn: sqlite3.Connection, started_ms: int, found: Inputs, rows: Rows
) -> tuple[list[Any], dict[str, Any], dict[str, Any], set[str]] | None:
    """The rows with what the changed files can change derived again: the report's own
    row, the items re-stated, the changed files' bases, the changed files; None when
    that cannot be done exactly (see the module doc)."""
    from vaultkeeper.clock import from_ns
    from vaultkeeper.store import machine
    from vaultkeeper.upkeep.decay import MemoryFacts, PromotedBlock, stale_entries, unused_skills

    vault_, made, took, before, after, groups, skills_was, extra, twice, view_was, whole = (
        rows.head[:11]
    )
    was = rows.keys
    changed = {p for p, k in found.keys.items() if was.get(p) != k} | (was.keys() - found.keys)
    changed |= changed_bytes(vault, rows.racy, changed)
    if whole or machine.has(vault, "repositories") or OUT in {*map(found.keys.get, changed)}:
        return None  # a symlink out of the vault (never read) came: derived whole
    if OUT in {*map(was.get, changed)}:
        return None  # or went: its problem line is the registry walk's (the rows' head)
    registry = [p for p in found.keys if p.startswith(REGISTRY)]
    touched = [p for p in registry if p in changed]
    if touched and (set(registry) != {p for p in was if p.startswith(REGISTRY)} or twice or before):
        return None
    today = from_ns(started_ms * 1_000_000).astimezone(dt.timezone.utc).date()
    files: dict[str, Any] = {rel: _registry_file(vault, rel, today) for rel in touched}
    # the unused skills of a registry file: of its promoted blocks and the uses log alone
    uses_same = f"{config.STATE_DIR}/{config.USES_LOG_FILE}" not in changed
    moved = bool(touched) or set(registry) != {p for p in was if p.startswith(REGISTRY)}
    bases = facts_of(conn, REGISTRY) if moved or not uses_same else {}
    old = {p: bases.get(p) for p in was if p.startswith(REGISTRY)}
    words = {rel: items_digest(()) if got is None else got[0][0] for rel, got in old.items()}
    if any(got is None or got[3][0] != words.get(rel) for rel, got in files.items()):
        return None  # a block's words changed (or it is unreadable): derived whole
    memory = [p for p in found.keys if p.startswith(MEMORY)]
    notes = {rel: _memory_file(vault, rel, today) for rel in memory if rel in changed}
    usage, view = usage_view(vault, memory)
    again = set(notes if view == view_was else memory)  # whose stale line is derived again
    facts = {p: notes[p][2] for p in notes}
    if view != view_was:
        kept = facts_of(conn, MEMORY)
        facts |= {p: kept.get(p, []) for p in memory if p not in notes}
    if any(facts.get(p) is None for p in again):
        return None  # facts JSON could not carry
    lessons = [MemoryFacts(*f) for p in memory if p in again for f in facts[p]]
    stale: dict[str, list[Any]] = {}
    for s in stale_entries(lessons, usage, today):
        stale.setdefault(s.path, []).append(s)
    items: dict[str, Any] = {}
    for rel in notes:
        items[rel] = items_text(notes[rel][0], notes[rel][1], stale.get(rel, ()), False)
    for rel in (rows.items.keys() | stale.keys()) & again - notes.keys():  # any stale line
        text = _restaled(rows.items.get(rel), stale.get(rel, []))
        if text != rows.items.get(rel):
            items[rel] = text
    for rel, got in files.items():
        items[rel] = items_text(got[0], got[1], got[2], True)
    basis: dict[str, Any] = {rel: notes[rel][2] for rel in notes}
    basis |= {rel: got[3:5] if got[5] else None for rel, got in files.items()}
    kept_registry = {rel: basis[rel] if rel in files else old.get(rel) for rel in registry}
    again_of = files if uses_same else kept_registry  # whose unused skills are derived again
    promoted = [
        PromotedBlock(n, rel, line, pr, None if u is None else dt.date.fromisoformat(u))
        for rel, got in kept_registry.items()
        if rel in again_of and got is not None
        for n, line, pr, u in got[0][2]
    ]
    skills = served_rows(unused_skills(promoted, usage, today))
    if uses_same:  # the other files' as they were, in the registry's order
        fresh: dict[str, list[Any]] = {}
        for row in skills:
            fresh.setdefault(row[1], []).append(row)
        kept_skills: dict[str, list[Any]] = {}
        for row in skills_was:
            kept_skills.setdefault(row[1], []).append(row)
        skills = [
            r for rel in registry for r in (fresh if rel in files else kept_skills).get(rel, ())
        ]
    projects = {p.split("/", 2)[1] for p in changed if p.startswith(MEMORY)}
    pairs = _pairs(conn, groups, old, files, memory, projects, notes)
    if pairs is None:
        return None
    head = [vault_, made, took, before, after, pairs, skills, extra, twice, view, False]
    top = tops(kept_registry) if moved else rows.head[11]  # no registry file changed: as kept
    return [*head, top], items, basis, changed


def _restaled(text: str | None, stale: list[Any]) -> str | None:
    """A lesson's items' text with its stale lines derived again."""
    held, problems = json.loads(text)[:2] if text is not None else ([], [])
    if not (held or problems or stale):
        return None
    return json.dumps([held, problems, served_rows(stale)])


def _registry_file(vault: Path, rel: str, today: dt.date) -> tuple[Any, ...] | None:
    """(promote, prune, problems, shape, top, any blocks) of one registry file."""
    from vaultkeeper.registry.blocks import parsed_heads
    from vaultkeeper.scan.classify import registry_candidates
    from vaultkeeper.store.model import decode

    path = vault / rel
    try:
        heads = parsed_heads(path, rel, decode(read_regular(path)))
    except ParseError:
        return None
    problems: list[Problem] = []
    promote, prune = registry_candidates(heads, today, problems)
    return promote, prune, problems, shape(heads), top_of(vault, heads, {}), bool(heads)


def _memory_file(vault: Path, rel: str, today: dt.date) -> tuple[list[Any], ...]:
    """(held-out candidates, problems, facts) of one memory file."""
    from vaultkeeper.scan.memory import held_out_candidates

    problems: list[Problem] = []
    facts: list[Any] = []
    held = held_out_candidates(vault, today, problems, [f"{vault}/{rel}"], facts)
    return held, problems, facts


def _pairs(
    conn: sqlite3.Connection,
    groups: dict[str, list[Any]],
    old: dict[str, Any],
    files: dict[str, Any],
    memory: list[str],
    projects: set[str],
    notes: dict[str, Any],
) -> dict[str, list[Any]] | None:
    """Each duplicates group's pairs: the blocks' with their lines moved as the changed
    registry files moved them; a changed project's compared again (None: its facts are
    not had)."""
    from vaultkeeper.upkeep.decay import MemoryFacts
    from vaultkeeper.upkeep.duplicates import BLOCK, pairs_by_group, project_items

    out: dict[str, list[Any]] = {}
    if BLOCK in groups:
        moved = {
            rel: dict(zip(old[rel][0][1], got[3][1], strict=True))
            for rel, got in files.items()
            if old.get(rel) is not None
        }
        out[BLOCK] = [
            p._replace(
                a_line=moved.get(p.a_path, {}).get(p.a_line, p.a_line),
                b_line=moved.get(p.b_path, {}).get(p.b_line, p.b_line),
            )
            for p in map(pair, groups[BLOCK])
        ]
    if not projects:  # no lesson changed: each project's pairs as they were
        return out | {g: found for g, found in groups.items() if g != BLOCK}
    order = list(dict.fromkeys(p.split("/", 2)[1] for p in memory))
    facts: list[Any] = []
    for project in (p for p in order if p in projects):
        kept = facts_of(conn, f"{MEMORY}{project}/")
        for path in (p for p in memory if p.split("/", 2)[1] == project):
            got = notes[path][2] if path in notes else kept.get(path) or []
            if got is None:
                return None
            facts += [MemoryFacts(*f) for f in got]
    fresh = project_items(facts, projects)
    again = [i for items in fresh.values() if items for i in items]
    found = pairs_by_group(again) if again else {}
    for project in order:
        group = f"memory:{project}"
        if project in projects and group in fresh:
            out[group] = found.get(group, [])
        elif project not in projects and group in groups:
            out[group] = groups[group]
    return out


# -- decisions that changed no file ---------------------------------------------------------

_ASK, _SILENCE = "ask", "silence"  # apply/decision.py's outcomes (apply sits above scan)


def _mark(record: dict[str, Any]) -> str | None:
    """What a journaled decision that changed no file says about its candidate."""
    day = str(record.get("ts", ""))[:10]
    if record.get("action") == "merge" or record.get("dry_run"):
        return None
    if record.get("outcome") == _ASK:
        return f"waiting for a person: `vaultkeeper review` (ask {record.get('id')})"
    if record.get("outcome") != _SILENCE:
        return None
    if record.get("action") == "skip":
        return f"{record.get('reason')} ({day})"
    if record.get("kept"):
        return f"kept: a person answered no ({day})"
    return None


def _handled(vault: Path, report: Report, mark: tuple[int, str] | None) -> Report:
    """``report`` with each candidate a decision since the scan left alone marked."""
    try:  # a regular file only: the journal travels through git, a link may come with it
        raw = read_regular(vault / config.STATE_DIR / config.JOURNAL_FILE, follow=False)
    except ParseError:
        return report
    if b'"ask"' not in raw and b'"silence"' not in raw:
        return report
    since = iso(report.generated_at)
    after = _since_mark(raw, mark)
    if after is not None:  # the lines appended since the scan began: by place, not second
        raw, since = after, ""
    marks: list[tuple[str, str | None, str]] = []  # target, hash before, mark
    for line in raw.splitlines():
        if b'"ask"' not in line and b'"silence"' not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # nested past json's depth too
            continue
        if not isinstance(record, dict) or str(record.get("ts", "")) < since:
            continue
        note = _mark(record)
        if note is not None:
            marks.append((str(record.get("target")), record.get("hash_before"), note))
    if not marks:
        return report
    return report._replace(
        promote=tuple(_marked(c, marks) for c in report.promote),
        prune=tuple(_marked(c, marks) for c in report.prune),
        held_out=tuple(_marked(c, marks) for c in report.held_out),
    )


def _marked(c: Candidate, marks: list[tuple[str, str | None, str]]) -> Candidate:
    """``c`` with the latest mark of a decision that names it, on the text it was made on."""
    for target, before, note in reversed(marks):
        named = target == c.path or (c.kind != HELD_OUT and c.name == target)
        if named and before in (None, c.hash):
            return c._replace(handled=note)
    return c


def _since_mark(raw: bytes, mark: tuple[int, str] | None) -> bytes | None:
    """The journal's lines after the scan's mark, or None when the journal does not
    continue the one the scan saw (archived and begun again): the second is the rule."""
    from vaultkeeper.scan.classify import JOURNAL_TAIL, tail_digest

    if mark is None or mark[0] > len(raw):
        return None
    size, tail = mark
    seen = raw[max(size - JOURNAL_TAIL, 0) : size]
    if size and tail_digest(seen) != tail:
        return None
    return raw[size:]
