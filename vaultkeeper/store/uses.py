"""``state/uses.jsonl``: the usage log, one JSON object a line, appended, never rewritten.

Every reuse the vault learns about (a pattern cited in an agent's answer, a promoted
skill invoked, a note read) is one line here, with the receipt that proves it::

    {"session": "...", "source": "claude-code", "kind": "cite", "target": "pin-clock",
     "date": "2026-12-01", "receipt": "/home/me/.claude/projects/x/abc.jsonl:42"}

``target`` is a registry pattern name for ``cite``/``skill`` when a pattern is meant,
and a vault-relative POSIX path for reads and citations of notes. The log is the
memory that makes ingesting replay-safe (learn.py) and the source of the receipts
the brief offers for promotion. A line that cannot be read is skipped, never fatal:
the log survives a crash mid-append and a person's edits.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.fsio import append_line, writer_lock

SOURCES = ("claude-code", "codex", "mcp", "cli")
KINDS = ("cite", "skill", "read", "shown")
# A use of an entry; ``shown`` is the point-of-use recall serving it (recall/moment.py:
# receipt ``recall:prompt:<id>`` or ``recall:file:<tool call id>``), not a use.
USE_KINDS = ("cite", "skill", "read")
PATTERN_KINDS = ("cite", "skill")  # kinds that may count as a pattern's use
MAX_LINE_BYTES = 64 * 1024  # a longer log line is not ours: skipped without reading it whole


TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself costs a scan more than it gives at run time
    from typing import NamedTuple

    class _EventFields(NamedTuple):
        session: str
        source: str
        kind: str
        target: str
        date: dt.date
        receipt: str

else:  # a named tuple, not a frozen dataclass: a scan would import dataclasses for it
    from collections import namedtuple

    _EventFields = namedtuple("_EventFields", "session source kind target date receipt")


class UseEvent(_EventFields):
    """One use seen in a session. ``date`` may be given as ``YYYY-MM-DD``; it is kept
    as a ``datetime.date``."""

    __slots__ = ()

    def __new__(
        cls, session: str, source: str, kind: str, target: str, date: dt.date | str, receipt: str
    ) -> UseEvent:
        # a str from JSON, or a caller passing the log's own form
        day: object = dt.date.fromisoformat(date) if isinstance(date, str) else date
        if isinstance(day, dt.datetime) or not isinstance(day, dt.date):
            raise ValueError(f"date {date!r} is not a datetime.date")
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
        if source not in SOURCES:
            raise ValueError(f"source {source!r} is not one of {', '.join(SOURCES)}")
        return super().__new__(cls, session, source, kind, target, day, receipt)

    def to_dict(self) -> dict[str, str]:
        out = self._asdict()
        out["date"] = self.date.isoformat()
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=True)


def uses_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.USES_LOG_FILE


def _event(value: object) -> UseEvent | None:
    if not isinstance(value, dict):
        return None
    fields = ("session", "source", "kind", "target", "date", "receipt")
    if not all(isinstance(value.get(k), str) for k in fields):
        return None
    try:
        return UseEvent(**{k: value[k] for k in fields})
    except (ValueError, TypeError):
        return None


def mcp_receipt(evidence: str) -> str:
    """The receipt the MCP ``cite`` tool logs for ``evidence``: blanks folded, cut short.
    ingest rebuilds it from the tool call in a transcript to find the server's line."""
    return "mcp:" + " ".join(evidence.split())[: config.MCP_CITE_EVIDENCE_CHARS]


def _unwanted(kinds: frozenset[str] | None) -> tuple[bytes, ...]:
    """Bytes that mark a line of a kind not wanted, as ``UseEvent.to_json`` writes it (a
    quote inside a value is escaped, so a value cannot hold them)."""
    if kinds is None:
        return ()
    return tuple(f'"kind": "{k}"'.encode() for k in KINDS if k not in kinds)


def read_events(vault: Path, kinds: Iterable[str] | None = None) -> Iterator[UseEvent]:
    """Every readable event (of ``kinds``, when given), oldest first; bad, foreign or
    overlong lines are skipped. A line of another kind is skipped before it is parsed:
    reads outnumber uses, and the brief reads the whole log."""
    wanted = None if kinds is None else frozenset(kinds)
    unwanted = _unwanted(wanted)
    path = uses_path(vault)
    try:
        fh = path.open("rb")
    except OSError:  # no log yet (or not a file we can read): no events
        return
    with fh:
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
                    raw = fh.readline(MAX_LINE_BYTES)
                continue
            if any(mark in raw for mark in unwanted):
                continue
            try:
                event = _event(json.loads(raw))
            except (ValueError, UnicodeDecodeError, RecursionError):
                continue
            if event is not None and (wanted is None or event.kind in wanted):
                yield event


def last_seen(vault: Path) -> dict[str, dt.date]:
    """Each target's latest date of use in the log (``shown`` is not a use)."""
    out: dict[str, dt.date] = {}
    for event in read_events(vault, USE_KINDS):
        seen = out.get(event.target)
        if seen is None or event.date > seen:
            out[event.target] = event.date
    return out


def latest_receipts(vault: Path, kinds: Iterable[str] = PATTERN_KINDS) -> dict[str, UseEvent]:
    """Each target's latest event of ``kinds`` (the later line wins a tie of dates)."""
    out: dict[str, UseEvent] = {}
    for event in read_events(vault, kinds):
        seen = out.get(event.target)
        if seen is None or event.date >= seen.date:
            out[event.target] = event
    return out


def is_recorded(vault: Path, receipt: str, target: str | None = None) -> bool:
    """True when ``receipt`` is in the log (for ``target``, when given)."""
    return any(
        e.receipt == receipt and (target is None or e.target == target) for e in read_events(vault)
    )


def append_events(vault: Path, events: Iterable[UseEvent]) -> None:
    """Append ``events`` in one write under the writer lock (a reader sees all or none)."""
    lines = [event.to_json() for event in events]
    if not lines:
        return
    with writer_lock(vault):
        append_line(uses_path(vault), "\n".join(lines))
