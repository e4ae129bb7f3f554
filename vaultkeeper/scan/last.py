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
a person's no) is read from the journal: it marks its candidate ``handled``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from hashlib import blake2b
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.registry.lines import registry_files
from vaultkeeper.report.candidates import (
    HELD_OUT,
    Candidate,
    Report,
    Saved,
    from_dict,
    iso,
)
from vaultkeeper.scan.cache import RACY_NS, key_of
from vaultkeeper.store import db
from vaultkeeper.store.walk import memory_files

# state/ files the report is derived from besides the vault's entries
_STATE_INPUTS = (config.USES_LOG_FILE, config.JOURNAL_FILE, config.REPOSITORIES_STATE_FILE)


def inputs(vault: Path) -> tuple[str, bool]:
    """A digest of the stat keys of every file the report is derived from, and whether all
    of them are settled (changed more than RACY_NS ago: a key that still vouches for its
    bytes). Taken before the files are read: a write after it changes the digest."""
    limit = time.time_ns() - RACY_NS
    state = os.path.join(vault, config.STATE_DIR)
    paths = [str(p) for p in registry_files(vault)]
    paths += memory_files(vault)
    paths += [os.path.join(state, name) for name in _STATE_INPUTS]
    digest, settled = blake2b(digest_size=16), True
    for path in paths:
        try:
            key, old = key_of(os.stat(path), limit)
        except OSError:
            digest.update(f"{path}\0-\n".encode("utf-8", "surrogateescape"))
            continue
        settled = settled and old
        digest.update(f"{path}\0{db.key_text(key)}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), settled


def keep(vault: Path, started_ms: int, digest: tuple[str, bool], report: Report) -> None:
    """Keep ``report`` (as of ``started_ms``) under the inputs' digest; a digest with a
    file not yet settled is not kept (the next reader derives it again). A failure to
    write is no failure: the row is a shortcut."""
    if not digest[1]:
        return
    text = json.dumps(report.to_dict())
    with contextlib.suppress(sqlite3.Error, OSError), db.connect(vault) as conn, db.writing(conn):
        conn.execute("DELETE FROM scan_report")
        conn.execute("INSERT INTO scan_report VALUES (?, ?, ?)", (started_ms, digest[0], text))


def _kept(vault: Path, started_ms: int, digest: str) -> Report | None:
    bad = (sqlite3.Error, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError)
    with contextlib.suppress(*bad), db.existing(vault) as conn:  # a bad row: derived again
        if conn is not None:
            row = conn.execute(
                "SELECT report FROM scan_report WHERE started = ? AND inputs = ?",
                (started_ms, digest),
            ).fetchone()
            if row is not None:
                return from_dict(json.loads(row[0]))
    return None


def started(vault: Path) -> tuple[int, int] | None:
    """(when the last completed scan started, its duration), epoch ms; None: none completed."""
    from vaultkeeper.scan.statefile import read_state

    data = read_state(vault).data
    done = data.get("lastCompleted")
    figures = (data.get("perTask") or {}).get("selfMaintain") or {}
    took = figures.get("durationMs") if isinstance(figures, dict) else None
    took = took if type(took) is int and took >= 0 else 0
    if type(done) is not int or done <= took:
        return None
    return done - took, took


def last_report(vault: Path) -> Saved:
    """The last completed scan's report, as the vault's files say now (see the module doc)."""
    when = started(vault)
    if when is None:
        return Saved(None)
    started_ms, took = when
    digest = inputs(vault)
    report = _kept(vault, started_ms, digest[0])
    if report is None:
        from vaultkeeper.clock import from_ns
        from vaultkeeper.scan import cache as scancache
        from vaultkeeper.scan.classify import classify

        rows = scancache.load(vault) if os.path.isdir(vault / config.STATE_DIR) else None
        found = classify(vault, from_ns(started_ms * 1_000_000), rows)
        report = from_dict(found._replace(duration_ms=took).to_dict())  # as a kept one reads
        keep(vault, started_ms, digest, report)
    return Saved(_handled(vault, report._replace(vault=str(vault))))


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


def _handled(vault: Path, report: Report) -> Report:
    """``report`` with each candidate a decision since the scan left alone marked."""
    try:
        raw = (vault / config.STATE_DIR / config.JOURNAL_FILE).read_bytes()
    except OSError:
        return report
    if b'"ask"' not in raw and b'"silence"' not in raw:
        return report
    since = iso(report.generated_at)
    marks: list[tuple[str, str | None, str]] = []  # target, hash before, mark
    for line in raw.splitlines():
        if b'"ask"' not in line and b'"silence"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
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
