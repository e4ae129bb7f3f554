"""The last completed scan's report, as every reader sees it: derived, never kept true by hand.

The report is a function of the vault's files and of the moment the last completed scan
started (``state/self-maintain.json``: ``lastCompleted`` less ``durationMs``): the
scan's classification (scan/classify.py) as of that moment. ``last_report`` gives it
from the ``scan_report`` row of ``state/vaultkeeper.db`` while every file it is derived
from (the registry and memory files, the usage log, the journal, ``machine.json``) has
the stat key it had when the row was kept -- taken before the files were read, and for
a file changed within RACY_NS of that, its bytes' digest too. When some changed, only
what they can change is classified again (``_patched``): a memory file's held-out
candidate, problem and facts, and its project's duplicate pairs; a registry file's
candidates, problems and skills, and its blocks' lines in the pairs; the stale lessons
and unused skills from the usage log. The rest of the row is kept. What that cannot do
exactly (a block's name or first sentence changed, a registry file added, gone or
unreadable, a name used twice, anchors tied to a repository) is classified again whole,
from the scan's rows. Either way the result is what a full classification gives, and it
is kept for the next reader; deleting the database gives the same report.

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
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.report.candidates import HELD_OUT, Candidate, Report, iso
from vaultkeeper.scan.cache import ScanCache
from vaultkeeper.scan.reportrow import (
    BAD_ROW,
    Inputs,
    basis_of,
    changed_bytes,
    decode,
    encode,
    inputs,
    items_digest,
    kept,
    pair,
    shape,
    store,
    top_of,
    usage_view,
)
from vaultkeeper.store import db
from vaultkeeper.store.model import Problem
from vaultkeeper.store.text import ParseError, read_regular

_REGISTRY, _MEMORY = config.PATTERNS_DIR + "/", config.PROJECTS_DIR + "/"


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
    from vaultkeeper.scan.statefile import read_state

    data = read_state(vault).data  # read once: when the scan began, its journal mark
    when = started(data)
    if when is None:
        _KEPT.pop(str(vault), None)
        return None
    found = inputs(vault)
    got = kept(vault, when[0], found) or _derive(vault, *when, found)
    _KEPT[str(vault)] = got[1]
    return _handled(vault, got[0]._replace(vault=str(vault)), journal_mark(data))


_KEPT: dict[str, Any] = {}  # vault -> what the row last read says of the registry


def patterns(vault: Path) -> Any:
    """The registry's most-used patterns (``_merged``) as of the report ``last_report``
    just gave; None when it gave none, or they could not be had."""
    return _KEPT.get(str(vault), [None])[0]


def bare(vault: Path) -> Any:
    """Each registry file's blocks without counter lines, [line, name] each, as of the
    report ``last_report`` just gave (None: it gave none)."""
    return _KEPT.get(str(vault), [None, None])[1]


def _derive(vault: Path, started_ms: int, took: int, found: Inputs) -> tuple[Report, Any]:
    """The report as of ``started_ms``: the kept row patched where it can be, else
    classified whole; kept for the next reader."""
    from vaultkeeper.clock import from_ns

    now = from_ns(started_ms * 1_000_000)
    text = None
    with contextlib.suppress(*BAD_ROW), db.existing(vault) as conn:
        if conn is not None:
            row = conn.execute(
                "SELECT racy, report, basis FROM scan_report WHERE started = ?", (started_ms,)
            ).fetchone()
            if row is not None:
                head, _, facts = row[2].partition("\n")  # the facts decoded only if needed
                racy, old, basis = json.loads(row[0]), decode(row[1])[0], json.loads(head)
                basis["facts"] = facts
                got = _patched(vault, now, found, old, basis, racy)
                text = None if got is None else encode(got[0]._replace(duration_ms=took), got[1])
    if text is None:
        got = _whole(vault, now, found)
        text = encode(got[0]._replace(duration_ms=took), got[1])
    assert got is not None
    store(vault, started_ms, found, text, got[1], create=False)
    return decode(text)  # as a kept one reads


def _whole(vault: Path, now: dt.datetime, found: Inputs) -> tuple[Report, dict[str, Any]]:
    """The full classification (from the scan's rows: only changed files are read)."""
    from vaultkeeper.scan import cache as scancache
    from vaultkeeper.scan.classify import classify

    rows = ScanCache()  # a reader keeps no rows; an empty cache only gathers the pairs
    if os.path.lexists(db.path_of(vault)):
        with contextlib.suppress(UnsafePathError):  # a linked database: not used
            rows = scancache.load(vault)
    parts: dict[str, Any] = {}
    report = classify(vault, now, rows, parts)
    return report, basis_of(vault, report, parts, rows, found)


# -- the patch -----------------------------------------------------------------------------


def _patched(
    vault: Path,
    now: dt.datetime,
    found: Inputs,
    old: Report,
    basis: dict[str, Any],
    racy: dict[str, str],
) -> tuple[Report, dict[str, Any]] | None:
    """``old`` (kept from ``basis``) with what the changed files can change classified
    again; None when that cannot be done exactly (see the module doc)."""
    from vaultkeeper.store import machine

    was: dict[str, str] = basis["keys"]
    changed = {p for p, k in found.keys.items() if was.get(p) != k} | (was.keys() - found.keys)
    changed |= changed_bytes(vault, racy, changed)
    if basis["pairs"] is None or machine.has(vault, "repositories"):
        return None
    registry = [p for p in found.keys if p.startswith(_REGISTRY)]
    touched = [p for p in registry if p in changed]
    if touched and (
        registry != [p for p in was if p.startswith(_REGISTRY)]
        or basis["twice"]
        or basis["problems"][0]
    ):
        return None
    today = now.astimezone(dt.timezone.utc).date()
    files = {rel: _registry_file(vault, rel, today) for rel in touched}
    if any(
        got is None or got[3][0] != basis["registry"].get(rel, [items_digest(())])[0]
        for rel, got in files.items()
    ):
        return None  # a block's words changed (or it is unreadable): derived whole
    memory = [p for p in found.keys if p.startswith(_MEMORY)]
    notes = {rel: _memory_file(vault, rel, today) for rel in memory if rel in changed}
    return _assembled(vault, today, old, basis, changed, registry, files, memory, notes)


def _registry_file(vault: Path, rel: str, today: dt.date) -> tuple[Any, ...] | None:
    """(promote, prune, problems, [digest, lines, promoted]) of one registry file."""
    from vaultkeeper.registry.blocks import parse_heads
    from vaultkeeper.scan.classify import registry_candidates
    from vaultkeeper.store.model import decode

    path = vault / rel
    try:
        heads = parse_heads(path, rel, decode(read_regular(path)))
    except ParseError:
        return None
    problems: list[Problem] = []
    promote, prune = registry_candidates(heads, today, problems)
    return promote, prune, problems, shape(heads), top_of(vault, heads, {})


def _memory_file(vault: Path, rel: str, today: dt.date) -> tuple[list[Any], ...]:
    """(held-out candidates, problems, facts) of one memory file."""
    from vaultkeeper.scan.memory import held_out_candidates

    problems: list[Problem] = []
    facts: list[Any] = []
    held = held_out_candidates(vault, today, problems, [f"{vault}/{rel}"], facts)
    return held, problems, facts


def _by_path(items: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for item in items:
        out.setdefault(item.path, []).append(item)
    return out


def _assembled(
    vault: Path,
    today: dt.date,
    old: Report,
    basis: dict[str, Any],
    changed: set[str],
    registry: list[str],
    files: dict[str, Any],
    memory: list[str],
    notes: dict[str, Any],
) -> tuple[Report, dict[str, Any]]:
    """The report and basis with each changed file's part in its place, in the scan's order."""
    from vaultkeeper.upkeep.decay import MemoryFacts, PromotedBlock, stale_entries, unused_skills

    def each(
        paths: list[str], new: dict[str, Any], at: int, kept: dict[str, list[Any]]
    ) -> list[Any]:
        return [x for p in paths for x in (new[p][at] if p in new else kept.get(p, ()))]

    start, end = basis["problems"]
    was_memory = {p for p in basis["keys"] if p.startswith(_MEMORY)}
    rest = old.problems[end:]
    problems = [*old.problems[:start], *each(registry, files, 2, _by_path(old.problems[start:end]))]
    mid = len(problems)
    problems += each(memory, notes, 1, _by_path(p for p in rest if p.path in was_memory))
    problems += [p for p in rest if p.path not in was_memory]  # symlinks out of the vault
    usage, view = usage_view(vault, memory)
    facts: Any = basis["facts"]  # the text kept, unless a lesson or its usage changed
    lessons = bool(notes or changed & was_memory)
    if lessons or view != basis["usage"]:
        facts = [MemoryFacts(*f) for f in json.loads(facts)]
        if lessons:
            facts = each(memory, notes, 2, _by_path_of(facts))
    shapes = {
        rel: files[rel][3] if rel in files else basis["registry"].get(rel) for rel in registry
    }
    promoted = [
        PromotedBlock(n, rel, line, pr, None if u is None else dt.date.fromisoformat(u))
        for rel in registry
        if shapes[rel] is not None
        for n, line, pr, u in shapes[rel][2]
    ]
    projects = {p.split("/", 2)[1] for p in changed if p.startswith(_MEMORY)}
    pairs = _pairs(basis, files, facts, projects)
    from vaultkeeper.upkeep.duplicates import capped

    report = old._replace(
        promote=tuple(each(registry, files, 0, _by_path(old.promote))),
        prune=tuple(each(registry, files, 1, _by_path(old.prune))),
        held_out=tuple(each(memory, notes, 0, _by_path(old.held_out))),
        problems=tuple(problems),
        duplicates=tuple(capped([p for g in pairs.values() for p in g])),
        stale=old.stale if isinstance(facts, str) else tuple(stale_entries(facts, usage, today)),
        skills_unused=tuple(unused_skills(promoted, usage, today)),
        anchors=(),
        suggested=(),
    )
    tops = basis["tops"]
    if tops is not None:
        tops = {rel: files[rel][4] if rel in files else tops.get(rel) for rel in shapes}
        tops = None if any(files[rel][4] is None for rel in files) else tops
    return report, {
        "tops": {rel: top for rel, top in tops.items() if top is not None} if tops else tops,
        "registry": {rel: shape for rel, shape in shapes.items() if shape is not None},
        "facts": facts,
        "pairs": pairs,
        "problems": [start, mid],
        "twice": basis["twice"],
        "usage": view,
    }


def _by_path_of(facts: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for f in facts:
        out.setdefault(f.rel, []).append(f)
    return out


def _pairs(
    basis: dict[str, Any], files: dict[str, Any], facts: list[Any], projects: set[str]
) -> dict[str, list[Any]]:
    """Each duplicates group's pairs: the blocks' with their lines moved as the changed
    registry files moved them; a changed project's compared again."""
    from vaultkeeper.upkeep.duplicates import BLOCK, pairs_by_group, project_items

    kept = {g: [pair(p) for p in found] for g, found in basis["pairs"].items()}
    out: dict[str, list[Any]] = {}
    if BLOCK in kept:
        moved = {
            rel: dict(zip(basis["registry"][rel][1], got[3][1], strict=True))
            for rel, got in files.items()
            if rel in basis["registry"]
        }
        out[BLOCK] = [
            p._replace(
                a_line=moved.get(p.a_path, {}).get(p.a_line, p.a_line),
                b_line=moved.get(p.b_path, {}).get(p.b_line, p.b_line),
            )
            for p in kept[BLOCK]
        ]
    if not projects:  # no lesson changed: each project's pairs as they were
        return out | {group: found for group, found in kept.items() if group != BLOCK}
    groups = project_items(facts, projects)
    again = [i for items in groups.values() if items is not None for i in items]
    found = pairs_by_group(again) if again else {}
    for group, items in groups.items():
        out[group] = found.get(group, []) if items is not None else kept[group]
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
