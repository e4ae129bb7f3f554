"""The last completed scan's report, as every reader sees it: derived, never kept true by hand.

The report is a function of the vault's files and of the moment the last completed scan
started (``state/self-maintain.json``: ``lastCompleted`` less ``durationMs``): the
scan's classification (scan/classify.py) as of that moment. So nothing keeps it true
after a write. ``last_report`` gives it from ``state/vaultkeeper.db`` while every file
it is derived from (the registry and memory files, the usage log, the journal, the
repositories file) has the stat key it had when it was derived, else classifies again
as of that moment (from the scan's rows: only the changed files are read) and keeps the
result. A hand edit or an apply changes a file, its key no longer matches, and the next
reader sees what the files now say; deleting the database gives the same report.

A decision since the scan that changed no file (a skip, a question queued for a person,
a person's no) is read from the journal: it marks its candidate ``handled``. "Since" is
by place: the lines after the journal's length when the scan began (``journalBytes`` in
the state file's ``perTask.selfMaintain``), so a decision in the scan's own second is
placed right; a state file without it falls back to the decision's second.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.report.candidates import (
    HELD_OUT,
    Candidate,
    Report,
    from_dict,
    iso,
)
from vaultkeeper.scan.reportrow import inputs, keep, kept
from vaultkeeper.store import db
from vaultkeeper.store.text import ParseError, read_regular


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
    started_ms, took = when
    digest = inputs(vault)
    report = kept(vault, started_ms, digest)
    if report is None:
        from vaultkeeper.clock import from_ns
        from vaultkeeper.scan import cache as scancache
        from vaultkeeper.scan.classify import classify

        rows = None  # the scan's rows spare reading unchanged files; a reader makes none
        if os.path.lexists(db.path_of(vault)):
            with contextlib.suppress(UnsafePathError):  # a linked database: not used
                rows = scancache.load(vault)
        found = classify(vault, from_ns(started_ms * 1_000_000), rows)
        report = from_dict(found._replace(duration_ms=took).to_dict())  # as a kept one reads
        keep(vault, started_ms, digest, report, create=False)
    return _handled(vault, report._replace(vault=str(vault)), journal_mark(data))


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
