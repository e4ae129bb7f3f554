"""``state/uses.jsonl``: the usage log, one JSON object a line, appended, never rewritten.

Every reuse the vault learns about (a pattern cited in an agent's answer, a promoted
skill invoked, a note read) is one line here, with the receipt that proves it::

    {"session": "...", "source": "claude-code", "kind": "cite", "target": "pin-clock",
     "date": "2026-12-01", "receipt": "/home/me/.claude/projects/x/abc.jsonl:42"}

``target`` is a registry pattern name for ``cite``/``skill`` when a pattern is meant,
and a vault-relative POSIX path for reads and citations of notes. The log is the
memory that makes ingesting replay-safe (learn.py) and the source of the receipts
the brief offers for promotion. A line that cannot be read is skipped, never fatal,
and reported to a caller that asks (``problems``): the log survives a crash
mid-append and a person's edits. No value in a line is longer than
``MAX_VALUE_CHARS`` (a longer one is cut and ends in a digest of the whole, the same
each time), so a line stays far under ``MAX_LINE_BYTES``.

Counting is replay-safe through transactions (usetx.py): the events of one counting
carry its ``tx`` id and are followed, in the same write, by its intent line (the
counters it raises); the registry is edited next, and a ``done`` line closes it. An
event whose ``tx`` has no intent line after it (a write torn by a crash) is no event.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple, TypeVar

from vaultkeeper import config
from vaultkeeper.store.fsio import append_line, writer_lock
from vaultkeeper.store.model import Problem

SOURCES = ("claude-code", "codex", "mcp", "cli")
KINDS = ("cite", "skill", "read", "shown")
# A use of an entry; ``shown`` is the point-of-use recall serving it (recall/moment.py:
# receipt ``recall:prompt:<id>`` or ``recall:file:<tool call id>``), not a use.
USE_KINDS = ("cite", "skill", "read")
PATTERN_KINDS = ("cite", "skill")  # kinds that may count as a pattern's use
MAX_LINE_BYTES = 64 * 1024  # a longer log line is not ours: skipped without reading it whole
# A value's longest form in a line: 6 bytes a char as JSON escapes it, 3 values: < 64 KiB.
MAX_VALUE_CHARS = 1024
_DIGEST_CHARS = 32
LOG_REL = f"{config.STATE_DIR}/{config.USES_LOG_FILE}"


def bounded(value: str) -> str:
    """``value``, or when longer than MAX_VALUE_CHARS its head and a digest of the whole
    (a lone surrogate digested as it is): the same long id gives the same short one."""
    if len(value) <= MAX_VALUE_CHARS:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{value[: MAX_VALUE_CHARS - _DIGEST_CHARS - 1]}~{digest[:_DIGEST_CHARS]}"


class _EventFields(NamedTuple):
    session: str
    source: str
    kind: str
    target: str
    date: dt.date
    receipt: str


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
        session, target, receipt = bounded(session), bounded(target), bounded(receipt)
        return super().__new__(cls, session, source, kind, target, day, receipt)

    def to_dict(self) -> dict[str, str]:
        out = self._asdict()
        out["date"] = self.date.isoformat()
        return out

    def to_json(self, tx: str | None = None, counted: bool = False) -> str:
        data: dict[str, object] = {**self.to_dict()}
        if tx is not None:
            data["tx"] = tx
        if counted:  # the event that raised its pattern's count (for sync repair)
            data["counted"] = True
        return json.dumps(data, ensure_ascii=True)


def key_digest(parts: tuple[str, ...]) -> str:
    """The 64-bit digest a compacted log keeps of a key (session, kind, target)."""
    raw = json.dumps(list(parts), ensure_ascii=True).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


_Key = TypeVar("_Key", tuple[str, str], tuple[str, str, str])
_KeySetBase = set[_Key]


class KeySet(_KeySetBase[_Key]):
    """Keys seen in the log: the ones of its events, and the digests its compacted
    part keeps of the rest (``digests``)."""

    def __init__(self) -> None:
        super().__init__()
        self.digests: set[str] = set()

    def __contains__(self, key: object) -> bool:
        if super().__contains__(key):
            return True
        return bool(self.digests) and isinstance(key, tuple) and key_digest(key) in self.digests


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


def mcp_receipt(evidence: str, tool_use: str | None = None) -> str:
    """The receipt the MCP ``cite`` tool logs for ``evidence``: blanks folded, cut short,
    then the host's tool_use id of the call when it sent one (Claude Code). ingest
    rebuilds it from the tool call in a transcript to find the server's line."""
    said = "mcp:" + " ".join(evidence.split())[: config.MCP_CITE_EVIDENCE_CHARS]
    return said if tool_use is None else f"{said} #{tool_use}"


def _unwanted(kinds: frozenset[str] | None) -> tuple[bytes, ...]:
    """Bytes that mark a line of a kind not wanted, as ``UseEvent.to_json`` writes it (a
    quote inside a value is escaped, so a value cannot hold them)."""
    if kinds is None:
        return ()
    return tuple(f'"kind": "{k}"'.encode() for k in KINDS if k not in kinds)


def read_lines(
    vault: Path,
    problems: list[Problem] | None = None,
    skip: tuple[bytes, ...] = (),
    log: BinaryIO | None = None,
) -> Iterator[dict[str, object]]:
    """Every JSON object line of the log (or of ``log``, a part of it), oldest first; a line
    holding one of ``skip`` is passed over unparsed, one that can't be read goes to ``problems``."""
    try:
        fh = _open_log(uses_path(vault)) if log is None else log
    except OSError:  # no log yet (or not a file we can read): no lines
        return
    with fh:
        number = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
                    raw = fh.readline(MAX_LINE_BYTES)
                _problem(problems, number, "longer than 64 KiB")
                continue
            if not raw.strip() or any(mark in raw for mark in skip):
                continue
            try:
                value = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                _problem(problems, number, "not a JSON line")
                continue
            if isinstance(value, dict):
                yield value
            else:
                _problem(problems, number, "not a JSON object")


def _open_log(path: Path) -> BinaryIO:
    """The log, a regular file: never through a symlink (the log travels through git, a
    link to /dev/zero would be read for ever), never waiting on a FIFO; OSError else."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path}: not a regular file")
    return os.fdopen(fd, "rb")


def _problem(problems: list[Problem] | None, number: int, why: str) -> None:
    if problems is not None:
        problems.append(Problem(LOG_REL, number, f"{why}; skipped (a use there is not seen)"))


def read_events(
    vault: Path,
    kinds: Iterable[str] | None = None,
    problems: list[Problem] | None = None,
    on_tx: Callable[[dict[str, object]], None] | None = None,
    on_counted: Callable[[UseEvent], None] | None = None,
    log: BinaryIO | None = None,
) -> Iterator[UseEvent]:
    """Every readable event (of ``kinds``, when given), oldest first; bad, foreign or
    overlong lines are skipped (and listed in ``problems``). A line of another kind is
    skipped before it is parsed: reads outnumber uses, and the brief reads the whole
    log. An event of a transaction shows once the transaction's intent line does; each
    transaction line (intent, done) goes to ``on_tx``, and each event that raised a
    count (marked ``counted``) to ``on_counted`` as it shows."""
    wanted = None if kinds is None else frozenset(kinds)
    pending: dict[str, list[tuple[UseEvent, bool]]] = {}  # tx -> events, until its intent
    for value in read_lines(vault, problems, _unwanted(wanted), log):
        tx = value.get("tx")
        if "seen_keys" in value or "counted_keys" in value:  # a compacted log's digests
            if on_tx is not None:
                on_tx(value)
            continue
        if isinstance(tx, str) and ("intent" in value or "done" in value):
            if on_tx is not None:  # the transaction lines, to count replay-safely
                on_tx(value)
            for shown, counted in pending.pop(tx, ()) if "intent" in value else ():
                if counted and on_counted is not None:
                    on_counted(shown)
                yield shown
            continue
        event = _event(value)
        if event is None or (wanted is not None and event.kind not in wanted):
            continue
        if isinstance(tx, str):
            pending.setdefault(tx, []).append((event, value.get("counted") is True))
            continue
        if value.get("counted") is True and on_counted is not None:  # a compacted log's
            on_counted(event)
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


def append_events(
    vault: Path,
    events: Iterable[UseEvent],
    tx: str | None = None,
    intent: str | None = None,
    counted: frozenset[UseEvent] = frozenset(),
) -> None:
    """Append ``events`` in one write under the writer lock (a reader sees all or none);
    with ``tx``, each event carries it and the ``intent`` line follows them; those in
    ``counted`` are marked as the ones that raised a count."""
    lines = [event.to_json(tx, event in counted) for event in events]
    lines += [intent] if intent is not None else []
    if not lines:
        return
    with writer_lock(vault):
        append_line(uses_path(vault), "\n".join(lines), inside=vault)
