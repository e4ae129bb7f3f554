"""Memory files as the scanner reads them: the held-out list, and every entry's keys.

``held_out_candidates`` walks ``projects/*/memory/`` and turns each file into a
``MemoryRecord`` (the few frontmatter keys any decision reads, the hold-out line and the
file's hash, or why it could not be read; PyYAML's C safe loader reads the frontmatter),
then judges the records against ``today``. A record depends on the file's bytes only,
so a scan takes it from its rows (scan/cache.py) while the file is unchanged.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.report.brief import fields
from vaultkeeper.scan.cache import MemoryRecord, ScanCache
from vaultkeeper.store import model
from vaultkeeper.store.model import ParseError, Problem, outside_problems
from vaultkeeper.store.walk import memory_files as memory_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterable, Mapping
    from typing import Any

    from vaultkeeper.report.candidates import Candidate
    from vaultkeeper.upkeep.decay import MemoryFacts

NOT_AN_ENTRY = MemoryRecord(None, 1, None, None, None)  # a file without frontmatter


def read_record(path: str, where: str, texts: dict[str, str] | None = None) -> MemoryRecord:
    """What a scan needs of one memory file (see the module docstring); its text goes
    into ``texts`` (for the full-text index: not read twice)."""
    try:
        text = model.decode(model.read_regular(path))
        if texts is not None:
            texts[where] = text
        fm = model.parse_note(Path(path), where, text).frontmatter
        if fm is None:
            return NOT_AN_ENTRY  # no frontmatter: not an entry
        meta, lines = dict(fm.data), fm.key_lines
        line = lines.get("holdout_until", 1)
        served = fields(meta)  # what the session-start brief shows of it
        if not may_hold_out(meta):
            return MemoryRecord(facts_of(where, meta), line, None, None, None, served)
    except ParseError as exc:
        return MemoryRecord(None, 1, None, None, (exc.line, exc.reason))
    details = (
        _iso(meta.get("label")),
        _iso(meta.get("status")),
        _iso(meta.get("falsification_condition")),
    )
    return MemoryRecord(facts_of(where, meta), line, model.file_hash(text), details, None, served)


def may_hold_out(meta: Mapping[str, Any]) -> bool:
    """Whether the file is a held-out candidate on some day (held_out_candidates' test,
    the date aside): one that is not needs no hash."""
    raw, status = meta.get("holdout_until"), meta.get("status")
    if raw is None or raw == "" or (status is not None and status != "held_out"):
        return False
    return meta.get(config.SUPERSEDED_BY_KEY) in (None, "")


def held_out_candidates(
    vault: Path,
    today: dt.date,
    problems: list[Problem],
    paths: Iterable[str] | None = None,
    facts: list[MemoryFacts] | None = None,
    cache: ScanCache | None = None,
) -> list[Candidate]:
    """Memory files whose hold-out has passed; unreadable ones go to ``problems``, and
    with ``facts`` every readable entry's keys for the upkeep sections. ``paths``
    (``str(vault) + "/" + rel`` each) narrows it to those files (the applier's). With
    ``cache``, an unchanged file's record comes from it and a changed one's goes in."""
    from vaultkeeper.store.model import date_text, parse_date
    from vaultkeeper.upkeep.decay import MemoryFacts

    out: list[Candidate] = []
    dates: dict[str, dt.date | None] = {}
    cut = len(str(vault)) + 1  # every path below is str(vault) + "/" + its vault-relative path
    outside: list[str] = []  # symlinks out of the vault: one problem line each, never read
    todo = list(memory_files(vault, outside)) if paths is None else paths  # walk, then read
    note = None if cache is None else cache.note
    texts = None if cache is None or cache.rebuilding() else cache.texts  # a few, not all
    if note is not None:  # a build of every row from many files says so
        todo = list(todo)
        note.start(len(todo))
    for done, path in enumerate(todo):
        if note is not None:
            note.step(done)
        where = path[cut:]
        record, key = (None, None) if cache is None else cache.memory(where, path)
        if record is None:
            record = read_record(path, where, texts)
            if cache is not None:
                cache.keep_memory(where, key, record)
        if record.problem is not None:
            problems.append(Problem(where, *record.problem))
            continue
        kept = record.facts
        if kept is None:
            continue
        if facts is not None:
            facts.append(MemoryFacts(where, *kept))
        if record.hash is None:
            continue  # not one on any day (may_hold_out); superseded ones among them
        raw = kept[3]
        if isinstance(raw, str):  # the commonest: a quoted date, one of few distinct ones
            if raw not in dates:
                dates[raw] = parse_date(raw)
            until = dates[raw]
        else:
            until = parse_date(raw)
        if until is None:
            reason = f"holdout_until {date_text(raw)} is not a date (YYYY-MM-DD); skipped"
            problems.append(Problem(where, record.line, reason))
            continue
        if until > today:
            continue
        out.append(_candidate(where, record, until, today))
    if note is not None:
        note.finish()
    problems.extend(outside_problems(vault, outside))
    return out


def _candidate(where: str, record: MemoryRecord, until: dt.date, today: dt.date) -> Candidate:
    from vaultkeeper.report.candidates import HELD_OUT, Candidate

    assert record.facts is not None and record.hash is not None and record.details is not None
    label, status, condition = record.details
    return Candidate(
        kind=HELD_OUT,
        name=record.facts[0],
        path=where,
        line=record.line,
        hash=record.hash,
        holdout_until=until.isoformat(),
        days_due=(today - until).days,
        status=None if status is None else str(status),
        label=None if label is None else str(label),
        weight=config.LABEL_WEIGHTS.get(label) if isinstance(label, str) else None,
        falsification_condition=None if condition in (None, "") else str(condition),
    )


def facts_of(where: str, meta: Mapping[str, Any]) -> tuple[Any, ...]:
    """The fields of decay.MemoryFacts after the path, from a file's frontmatter keys."""
    get = meta.get
    name, status, until = get("name"), get("status"), get("holdout_until")
    if status is None and until not in (None, ""):
        status = "held_out"  # as the held-out list and the applier read it
    description = get("description")
    found, since = get("provenance"), None
    if type(found) is list:
        latest = _provenance_date(p if type(p) is str else str(p) for p in found)
        since = None if latest is None else latest.isoformat()
    return (
        name if type(name) is str and name else _stem(where, name),
        ""
        if description is None
        else description
        if type(description) is str
        else str(description),
        None if status is None else status if type(status) is str else str(status),
        _iso(until),
        _iso(get("last_validated")),
        since,
    )


_DATE = re.compile(r"(?<![0-9])([0-9]{4}-[0-9]{2}-[0-9]{2})(?![0-9])")


def _provenance_date(receipts: Iterable[str]) -> dt.date | None:
    """The latest real ISO date named inside any of a ``provenance`` list's receipts."""
    from vaultkeeper.store.model import parse_date

    found = [parse_date(m) for r in receipts for m in _DATE.findall(r)]
    return max((d for d in found if d is not None), default=None)


def _iso(value: Any) -> Any:
    """A date as its ISO text (what JSON can keep, and every reader takes as the date)."""
    import datetime as dt

    return value.isoformat() if type(value) is dt.date else value


def _stem(where: str, name: object) -> str:
    """The entry's name when ``name`` is not a non-empty string: its text, or the file's."""
    return str(name) if name not in (None, "") else os.path.basename(where)[:-3]
