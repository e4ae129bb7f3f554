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
import sqlite3
import stat
import time
from hashlib import blake2b
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.registry.lines import registry_files
from vaultkeeper.report.candidates import HELD_OUT, PROMOTE, PRUNE, Candidate, Report, iso
from vaultkeeper.scan.cache import RACY_NS, ScanCache, key_of
from vaultkeeper.store import db
from vaultkeeper.store.model import Problem
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.text import ParseError, read_regular
from vaultkeeper.store.walk import memory_files

# state/ files the report is derived from besides the vault's entries
_STATE_INPUTS = (config.USES_LOG_FILE, config.JOURNAL_FILE, config.MACHINE_FILE)
_REGISTRY, _MEMORY = config.PATTERNS_DIR + "/", config.PROJECTS_DIR + "/"
_BAD_ROW = (sqlite3.Error, OSError, ValueError, KeyError, TypeError, IndexError, RecursionError)


class Inputs(NamedTuple):
    """What the report is derived from, taken before any of it is read."""

    digest: str  # of every input's path and stat key
    keys: dict[str, str]  # vault-relative path -> its stat key's text ("-": none)
    racy: dict[str, str]  # a file changed within RACY_NS -> its bytes' digest


def inputs(vault: Path) -> Inputs:
    """Every file the report is derived from, in the scan's order, with its stat key."""
    limit = time.time_ns() - RACY_NS
    root = str(vault)
    cut = len(root) + 1
    paths = [str(p) for p in registry_files(vault)]
    paths += memory_files(vault)
    paths += [os.path.join(root, config.STATE_DIR, name) for name in _STATE_INPUTS]
    keys: dict[str, str] = {}
    racy: dict[str, str] = {}
    for path in paths:
        try:
            key, settled = key_of(os.stat(path), limit)
        except OSError:
            keys[path[cut:]] = "-"
            continue
        keys[path[cut:]] = db.key_text(key)
        if not settled:
            racy[path[cut:]] = _bytes_digest(path)
    text = "".join(f"{path}\0{key}\n" for path, key in keys.items())
    digest = blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return Inputs(digest, keys, racy)


def _bytes_digest(path: str) -> str:
    """The digest of a regular file's bytes ("-": none to read; a FIFO is never opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return "-"
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "-"
        return db.content_digest(fh.read())


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


# -- the row -------------------------------------------------------------------------------


def keep(
    vault: Path,
    started_ms: int,
    found: Inputs,
    report: Report,
    parts: dict[str, Any],
    cache: ScanCache,
    create: bool = True,
) -> None:
    """Keep ``report`` (classified as of ``started_ms`` from ``found``, with the ``parts``
    classify gave and the pairs ``cache`` holds) as the row readers use and patch."""
    basis = _basis(vault, report, parts, cache)
    _store(vault, started_ms, found, _encode(report, basis), basis, create)


def _store(
    vault: Path, started_ms: int, found: Inputs, text: str, basis: dict[str, Any], create: bool
) -> None:
    """The row; ``create=False`` (a reader): only in a database there is, and never over
    the row of a scan that started later. A failure to write is no failure: the row is a
    shortcut."""
    basis["keys"] = found.keys
    row = (started_ms, found.digest, json.dumps(found.racy), text, json.dumps(basis))
    opened = db.connect(vault) if create else db.existing(vault)
    with contextlib.suppress(sqlite3.Error, OSError, UnsafePathError), opened as conn:
        if conn is not None:
            with db.writing(conn):
                newer = "SELECT 1 FROM scan_report WHERE started > ?"
                if not create and conn.execute(newer, (started_ms,)).fetchone():
                    return
                conn.execute("DELETE FROM scan_report")
                conn.execute("INSERT INTO scan_report VALUES (?, ?, ?, ?, ?)", row)


def kept(vault: Path, started_ms: int, found: Inputs) -> tuple[Report, Any] | None:
    """The kept report, if it was kept as of ``started_ms`` under the keys ``found`` has
    and every racy file still has its bytes; None: derive it (a bad row too)."""
    with contextlib.suppress(*_BAD_ROW), db.existing(vault) as conn:
        if conn is not None:
            row = conn.execute(
                "SELECT racy, report FROM scan_report WHERE started = ? AND inputs = ?",
                (started_ms, found.digest),
            ).fetchone()
            if row is not None and not _changed_bytes(vault, json.loads(row[0]), set()):
                return _decode(row[1])
    return None


def _changed_bytes(vault: Path, racy: dict[str, str], known: set[str]) -> set[str]:
    """The files of ``racy`` (path -> bytes' digest) not in ``known`` whose bytes differ."""
    return {p for p, d in racy.items() if p not in known and _bytes_digest(f"{vault}/{p}") != d}


def _derive(vault: Path, started_ms: int, took: int, found: Inputs) -> tuple[Report, Any]:
    """The report as of ``started_ms``: the kept row patched where it can be, else
    classified whole; kept for the next reader."""
    from vaultkeeper.clock import from_ns

    now = from_ns(started_ms * 1_000_000)
    got = None
    with contextlib.suppress(*_BAD_ROW), db.existing(vault) as conn:
        if conn is not None:
            row = conn.execute(
                "SELECT racy, report, basis FROM scan_report WHERE started = ?", (started_ms,)
            ).fetchone()
            if row is not None:
                racy, old, basis = json.loads(row[0]), _decode(row[1])[0], json.loads(row[2])
                got = _patched(vault, now, found, old, basis, racy)
    if got is None:
        got = _whole(vault, now)
    text = _encode(got[0]._replace(duration_ms=took), got[1])
    _store(vault, started_ms, found, text, got[1], create=False)
    return _decode(text)  # as a kept one reads


def _whole(vault: Path, now: dt.datetime) -> tuple[Report, dict[str, Any]]:
    """The full classification (from the scan's rows: only changed files are read)."""
    from vaultkeeper.scan import cache as scancache
    from vaultkeeper.scan.classify import classify

    rows = ScanCache()  # a reader keeps no rows; an empty cache only gathers the pairs
    if os.path.lexists(db.path_of(vault)):
        with contextlib.suppress(UnsafePathError):  # a linked database: not used
            rows = scancache.load(vault)
    parts: dict[str, Any] = {}
    report = classify(vault, now, rows, parts)
    return report, _basis(vault, report, parts, rows)


# -- the row's text: compact, what a reader may be shown ----------------------------------


_TEXTS = (1, 2, 6, 10, 11, 13)  # a candidate's text from the vault's files (the rest is ours)


def _serve(rows: Any, fields: tuple[int, ...] = ()) -> list[Any]:
    """``rows`` (named tuples) with the text of their ``fields`` (all: none given)
    served: credentials masked, controls stripped. One check for them all (a report's
    text almost never needs it), then row by row."""

    def text(some: Any) -> str:
        got = chain.from_iterable(map(itemgetter(*fields), some)) if fields else chain(*some)
        return " ".join(
            x if type(x) is str else " ".join(x) if type(x) is tuple else "" for x in got
        )

    if not needs_serving(text(rows)):
        return list(rows)
    return [
        [_served(v, not fields or i in fields) for i, v in enumerate(r)]
        if needs_serving(text([r]))
        else r
        for r in rows
    ]


def _served(value: Any, text: bool) -> Any:
    if type(value) is tuple:
        return [served(w) for w in value]
    return served(value) if text and type(value) is str else value


def _merged(tops: dict[str, Any] | None) -> list[Any] | None:
    """The registry's most-used patterns, [name, count, last used, file, summary] each
    (the brief's order: count, then latest use; files in order on a tie), and how many
    readable ones there are, from each file's."""
    from vaultkeeper.report.brief import TOP

    if tops is None:
        return None
    rows = [[n, c, u, rel, s] for rel, top in tops.items() for n, c, u, s in top[0]]
    day = dt.date.fromisoformat
    rows.sort(key=lambda r: (-r[1], -(day(r[2]) if r[2] else dt.date.min).toordinal()))
    return [rows[:TOP], sum(top[1] for top in tops.values())]


def _encode(r: Report, basis: dict[str, Any]) -> str:
    from vaultkeeper.report import anchors

    extra = anchors.to_dict(r) if r.anchors or r.suggested else None
    lists = (r.promote, r.prune, r.held_out)
    return json.dumps(
        [
            r.vault,
            iso(r.generated_at),
            r.duration_ms,
            *([c[1:] for c in _serve(items, _TEXTS)] for items in lists),
            *(_serve(items) for items in (r.problems, r.duplicates, r.stale, r.skills_unused)),
            extra,
            [
                _merged(basis["tops"]),
                {rel: shape[3] for rel, shape in basis["registry"].items() if shape[3]},
            ],
        ]
    )


def _decode(text: str) -> tuple[Report, Any]:
    """The Report of a row's text, and the registry's most-used patterns; raises on a
    row this version did not write."""
    from vaultkeeper.upkeep.decay import SkillUnused, Stale

    got = json.loads(text)
    vault, made, took, promote, prune, held, problems, pairs, stale, skills, extra, kept = got
    more = {"anchors": (), "suggested": ()}
    if extra is not None:
        from vaultkeeper.report import anchors

        more = anchors.from_dict(extra)
    report = Report(
        vault=str(vault),
        generated_at=dt.datetime.strptime(made, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=dt.timezone.utc
        ),
        promote=tuple(Candidate(PROMOTE, *c) for c in promote),
        prune=tuple(Candidate(PRUNE, *c) for c in prune),
        held_out=tuple(Candidate(HELD_OUT, *c) for c in held),
        problems=tuple(Problem(*p) for p in problems),
        duration_ms=int(took),
        duplicates=tuple(_pair(p) for p in pairs),
        stale=tuple(Stale(*s) for s in stale),
        skills_unused=tuple(SkillUnused(*s) for s in skills),
        **more,
    )
    return report, kept


def _pair(row: list[Any]) -> Any:
    from vaultkeeper.upkeep.duplicates import DuplicatePair

    return DuplicatePair._make([*row[:8], tuple(row[8])])


# -- what a patch needs that the report does not say ---------------------------------------
#
# The basis, kept beside the report: each registry file's blocks as the duplicates pass
# sees them (a digest of their names and first sentences), their lines and promoted
# blocks; every memory entry's facts; each duplicates group's pairs before the cap; where
# the registry's problems end; whether a name is used twice.


def _items_digest(heads: Any) -> str:
    """The digest of what the duplicates pass compares of a file's blocks, in order."""
    text = "\x1f".join(f"{h.name} {h.sentence()}" for h in heads)
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _promoted(heads: Any) -> list[list[Any]]:
    return [
        [h.name, h.line, h.promoted, h.last_used and h.last_used.isoformat()]
        for h in heads
        if h.promoted is not None
    ]


def _top(vault: Path, heads: Any, known: dict[str, str]) -> Any:
    """A registry file's most-used patterns, [name, count, last used, summary] each,
    and how many readable ones it has (None: a file changed under the scan)."""
    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.report import brief

    try:
        rows, total = brief.top(vault, heads, known)
    except (VaultkeeperError, OSError, ValueError):
        return None
    return [[r[1], r[2], r[3], r[5]] for r in rows], total


def _registry(heads: Any) -> list[Any]:
    """What a patch keeps of a registry file: its blocks' words digest, their lines,
    its promoted blocks, its blocks without counter lines (status: merge leftovers)."""
    bare = [[h.line, h.name] for h in heads if h.count_raw is None and h.last_used_raw is None]
    return [_items_digest(heads), [h.line for h in heads], _promoted(heads), bare]


def _groups(facts: Any) -> list[str]:
    """The memory groups of the duplicates pass, in its order (their first live entry)."""
    from vaultkeeper.upkeep.duplicates import MEMORY

    seen: dict[str, None] = {}
    for f in facts:
        if f.status != "archived":
            seen.setdefault(f"{MEMORY}:{f.rel.split('/', 2)[1]}")
    return list(seen)


def _basis(vault: Path, report: Report, parts: dict[str, Any], cache: ScanCache) -> dict[str, Any]:
    from vaultkeeper.upkeep.duplicates import BLOCK, DuplicatePair, capped

    heads, facts = parts["heads"], parts["facts"]
    by_file: dict[str, list[Any]] = {}
    for h in heads:
        by_file.setdefault(h.rel, []).append(h)
    names = [h.name for h in heads]
    pairs: dict[str, Any] | None = {}
    kept = cache.kept_pairs.get("groups") or {}
    for group in [BLOCK] * bool(heads) + _groups(facts):
        found = kept.get(group)
        if pairs is None or type(found) is not list:
            pairs = None
            continue
        pairs[group] = [DuplicatePair.from_dict(p) for p in found[1]]
    if pairs is not None and capped([p for g in pairs.values() for p in g]) != list(
        report.duplicates
    ):
        pairs = None  # not the pairs the report was capped from: every patch derives whole
    known = cache.known_summaries()  # and this scan's: a block it kept has no text
    known.update((r[6], r[5]) for r in cache.patterns[0] if type(r[6]) is str)
    tops: dict[str, Any] | None = {rel: _top(vault, hs, known) for rel, hs in by_file.items()}
    return {
        "tops": None if tops is None or None in tops.values() else tops,
        "registry": {rel: _registry(found) for rel, found in by_file.items()},
        "facts": facts,
        "pairs": pairs,
        "problems": parts["problems"],
        "twice": len(set(names)) != len(names),
    }


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
    changed |= _changed_bytes(vault, racy, changed)
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
        got is None or got[3][0] != basis["registry"].get(rel, [_items_digest(())])[0]
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
    return promote, prune, problems, _registry(heads), _top(vault, heads, {})


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
    from vaultkeeper.upkeep.decay import (
        MemoryFacts,
        PromotedBlock,
        load_usage,
        stale_entries,
        unused_skills,
    )

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
    facts: list[Any] = [MemoryFacts(*f) for f in basis["facts"]]
    if notes or changed & {p for p in basis["keys"] if p.startswith(_MEMORY)}:
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
    usage = load_usage(vault)
    projects = {p.split("/", 2)[1] for p in changed if p.startswith(_MEMORY)}
    pairs = _pairs(basis, files, facts, projects)
    from vaultkeeper.upkeep.duplicates import capped

    report = old._replace(
        promote=tuple(each(registry, files, 0, _by_path(old.promote))),
        prune=tuple(each(registry, files, 1, _by_path(old.prune))),
        held_out=tuple(each(memory, notes, 0, _by_path(old.held_out))),
        problems=tuple(problems),
        duplicates=tuple(capped([p for g in pairs.values() for p in g])),
        stale=tuple(stale_entries(facts, usage, today)),
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

    kept = {g: [_pair(p) for p in found] for g, found in basis["pairs"].items()}
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
