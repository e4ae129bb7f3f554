"""The report's row in the derived store (``scan_report``): the last completed scan's
report as of its start, and what a patch of it needs (scan/last.py).

The row is kept under the stat key of every file the report is derived from, taken
before any is read (a file changed within RACY_NS of that: its bytes' digest too), so a
write after it shows. Its text is compact (the named tuples as JSON arrays), served
once (credentials masked, controls stripped). Beside it, the basis: each input's key;
each registry file's blocks as the duplicates pass sees them (a digest of their names
and first sentences), their lines, promoted blocks and blocks without counters, and its
most-used patterns; every lesson's facts; each duplicates group's pairs before the cap;
where the registry's problems end; whether a name is used twice.
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
from vaultkeeper.registry.blocks import registry_files
from vaultkeeper.report.candidates import HELD_OUT, PROMOTE, PRUNE, Candidate, Report, iso
from vaultkeeper.scan.cache import RACY_NS, ScanCache, key_of
from vaultkeeper.store import db
from vaultkeeper.store.model import Problem
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.walk import memory_files

# state/ files the report is derived from besides the vault's entries
MEMORY_DIR = config.PROJECTS_DIR + "/"
_STATE_INPUTS = (config.USES_LOG_FILE, config.JOURNAL_FILE, config.MACHINE_FILE)
# what a row this version did not write raises: derived again
BAD_ROW = (
    sqlite3.Error,
    OSError,
    ValueError,
    LookupError,
    TypeError,
    AttributeError,
    RecursionError,
)


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
            racy[path[cut:]] = bytes_digest(path)
    text = "".join(f"{path}\0{key}\n" for path, key in keys.items())
    digest = blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return Inputs(digest, keys, racy)


def bytes_digest(path: str) -> str:
    """The digest of a regular file's bytes ("-": none to read; a FIFO is never opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return "-"
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "-"
        return db.content_digest(fh.read())


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
    basis = basis_of(vault, report, parts, cache, found)
    store(vault, started_ms, found, encode(report, basis), basis, create)


def store(
    vault: Path, started_ms: int, found: Inputs, text: str, basis: dict[str, Any], create: bool
) -> None:
    """The row; ``create=False`` (a reader): only in a database there is, and never over
    the row of a scan that started later. A failure to write is no failure: the row is a
    shortcut."""
    basis["keys"] = found.keys
    facts = basis.get("facts", [])  # as it was read when no lesson changed (a str)
    if not isinstance(facts, str):
        try:  # a value JSON cannot carry as YAML gave it (a time, bytes): no patch needs them
            facts = json.dumps(facts, allow_nan=False)
        except (TypeError, ValueError):
            facts = "null"  # a patch that needs the facts classifies whole
    rest = json.dumps({k: v for k, v in basis.items() if k != "facts"})
    both = rest + "\n" + facts
    row = (started_ms, found.digest, json.dumps(found.racy), text, both)
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
    with contextlib.suppress(*BAD_ROW), db.existing(vault) as conn:
        if conn is not None:
            row = conn.execute(
                "SELECT racy, report FROM scan_report WHERE started = ? AND inputs = ?",
                (started_ms, found.digest),
            ).fetchone()
            if row is not None and not changed_bytes(vault, json.loads(row[0]), set()):
                return decode(row[1])
    return None


def changed_bytes(vault: Path, racy: dict[str, str], known: set[str]) -> set[str]:
    """The files of ``racy`` (path -> bytes' digest) not in ``known`` whose bytes differ."""
    return {p for p, d in racy.items() if p not in known and bytes_digest(f"{vault}/{p}") != d}


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


def encode(r: Report, basis: dict[str, Any]) -> str:
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


def decode(text: str) -> tuple[Report, Any]:
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
        duplicates=tuple(pair(p) for p in pairs),
        stale=tuple(Stale(*s) for s in stale),
        skills_unused=tuple(SkillUnused(*s) for s in skills),
        **more,
    )
    return report, kept


def pair(row: list[Any]) -> Any:
    from vaultkeeper.upkeep.duplicates import DuplicatePair

    return DuplicatePair._make([*row[:8], tuple(row[8])])


# -- what a patch needs that the report does not say ---------------------------------------
#
# The basis, kept beside the report: each registry file's blocks as the duplicates pass
# sees them (a digest of their names and first sentences), their lines and promoted
# blocks; every memory entry's facts; each duplicates group's pairs before the cap; where
# the registry's problems end; whether a name is used twice.


def items_digest(heads: Any) -> str:
    """The digest of what the duplicates pass compares of a file's blocks, in order."""
    text = "\x1f".join(f"{h.name} {h.sentence()}" for h in heads)
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _promoted(heads: Any) -> list[list[Any]]:
    return [
        [h.name, h.line, h.promoted, h.last_used and h.last_used.isoformat()]
        for h in heads
        if h.promoted is not None
    ]


def top_of(vault: Path, heads: Any, known: dict[str, str]) -> Any:
    """A registry file's most-used patterns, [name, count, last used, summary] each,
    and how many readable ones it has (None: a file changed under the scan)."""
    from vaultkeeper.errors import Interrupted, VaultkeeperError
    from vaultkeeper.report import brief

    try:
        rows, total = brief.top(vault, heads, known)
    except Interrupted:
        raise  # a signal during a scan stops it (scan/classify.py), never swallowed here
    except (VaultkeeperError, OSError, ValueError):
        return None
    return [[r[1], r[2], r[3], r[5]] for r in rows], total


def shape(heads: Any) -> list[Any]:
    """What a patch keeps of a registry file: its blocks' words digest, their lines,
    its promoted blocks, its blocks without counter lines (status: merge leftovers)."""
    bare = [[h.line, h.name] for h in heads if h.count_raw is None and h.last_used_raw is None]
    return [items_digest(heads), [h.line for h in heads], _promoted(heads), bare]


def _groups(facts: Any) -> list[str]:
    """The memory groups of the duplicates pass, in its order (their first live entry)."""
    from vaultkeeper.upkeep.duplicates import MEMORY

    seen: dict[str, None] = {}
    for f in facts:
        if f.status != "archived":
            seen.setdefault(f"{MEMORY}:{f.rel.split('/', 2)[1]}")
    return list(seen)


def usage_view(vault: Path, memory: Any) -> tuple[Any, list[Any]]:
    """The usage log and the journal (decay.load_usage) as the stale lessons read them:
    the log's first day, and the days it and the journal name each of ``memory``."""
    from vaultkeeper.upkeep.decay import load_usage

    usage = load_usage(vault)
    paths = set(memory)
    seen = {k: v.isoformat() for k, v in usage.last_seen.items() if {k, k + ".md"} & paths}
    checked = {k: v.isoformat() for k, v in usage.validated.items() if k in paths}
    return usage, [usage.since and usage.since.isoformat(), seen, checked]


def basis_of(
    vault: Path, report: Report, parts: dict[str, Any], cache: ScanCache, found: Inputs
) -> dict[str, Any]:
    from vaultkeeper.upkeep.duplicates import BLOCK, DuplicatePair, capped

    heads, facts = parts["heads"], parts["facts"]
    by_file: dict[str, list[Any]] = {}
    for h in heads:
        by_file.setdefault(h.rel, []).append(h)
    names = [h.name for h in heads]
    pairs: dict[str, Any] | None = {}
    kept = cache.kept_pairs.get("groups") or {}
    for group in [BLOCK] * bool(heads) + _groups(facts):
        got = kept.get(group)
        if pairs is None or type(got) is not list:
            pairs = None
            continue
        pairs[group] = [DuplicatePair.from_dict(p) for p in got[1]]
    if pairs is not None and capped([p for g in pairs.values() for p in g]) != list(
        report.duplicates
    ):
        pairs = None  # not the pairs the report was capped from: every patch derives whole
    known = cache.known_summaries()  # and this scan's: a block it kept has no text
    known.update((r[6], r[5]) for r in cache.patterns[0] if type(r[6]) is str)
    tops: dict[str, Any] | None = {rel: top_of(vault, hs, known) for rel, hs in by_file.items()}
    return {
        "tops": None if tops is None or None in tops.values() else tops,
        "registry": {rel: shape(hs) for rel, hs in by_file.items()},
        "facts": facts,
        "pairs": pairs,
        "problems": parts["problems"],
        "twice": len(set(names)) != len(names),
        "usage": usage_view(vault, [p for p in found.keys if p.startswith(MEMORY_DIR)])[1],
    }
