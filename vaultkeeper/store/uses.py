"""``state/uses.jsonl``: the usage log, one JSON object a line, appended; its
transactions and its compaction.

Every reuse the vault learns about (a pattern cited in an agent's answer, a promoted
skill invoked, a note read) is one line, with the receipt that proves it::

    {"session": "...", "source": "claude-code", "kind": "cite", "target": "pin-clock",
     "date": "2026-12-01", "receipt": "/home/me/.claude/projects/x/abc.jsonl:42"}

``target`` is a pattern's name (``cite``/``skill`` of a pattern) or a vault-relative
path. The log makes counting replay-safe (learn/count.py) and gives the brief its
receipts. A line that cannot be read is skipped (and reported to a caller that asks):
the log survives a crash mid-append and a person's edits. No value is longer than
``MAX_VALUE_CHARS`` (a longer one ends in a digest of the whole), so a line stays far
under ``MAX_LINE_BYTES``.

A counting ``T`` appends in one write its events, each tagged ``"tx": T``, then its
intent lines (per pattern: registry file, count before and after, last-used stamp; the
server's and ``use``'s lines its calls stand on, ``claims``); the registry edit and the
journal come next, then a ``done`` line. An event shows only after its intent line, so
a torn write counts nothing and the next counting counts it afresh; an open ``T`` is
finished by the next counting (learn/count.py ``reconcile``).

Past ``USES_COMPACT_BYTES`` the log is compacted: it keeps the last ``USES_KEEP_DAYS``
days' events, those that counted a session twice (still to be repaired) and each
target's first, latest and latest pattern-kind event; of the rest a 64-bit digest of
each key; and the transaction lines that still say something. The writer lock is held
only to take the log's length and to swap the result in (lines appended since copied
after it); one process compacts at a time (a lock on the log file itself), a log
replaced meanwhile is left alone, and the write is atomic.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import io
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypeVar

from vaultkeeper import config
from vaultkeeper.store.fsio import append_line, atomic_write, patient_lock, writer_lock
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


def capped_lines(fh: BinaryIO, cap: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) per line of ``fh``; None for a line over ``cap`` bytes, never
    held whole (the usage log's lines, a transcript's)."""
    number = 0
    while raw := fh.readline(cap + 1):
        number += 1
        if len(raw) > cap and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
                raw = fh.readline(1 << 20)
            yield number, None
        else:
            yield number, raw


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
        for number, raw in capped_lines(fh, MAX_LINE_BYTES):
            if raw is None:
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
    state: LogState | None = None,
    log: BinaryIO | None = None,
) -> Iterator[UseEvent]:
    """Every readable event (of ``kinds``, when given), oldest first; bad, foreign or
    overlong lines are skipped (and listed in ``problems``). A line of another kind is
    skipped before it is parsed: reads outnumber uses, and the brief reads the whole
    log. An event of a transaction shows once the transaction's intent line does. With
    ``state``, the log's other lines (transactions, digests) and the events that raised
    a count (marked ``counted``) are taken into it as they show."""
    wanted = None if kinds is None else frozenset(kinds)
    pending: dict[str, list[tuple[UseEvent, bool]]] = {}  # tx -> events, until its intent
    for value in read_lines(vault, problems, _unwanted(wanted), log):
        tx = value.get("tx")
        tx = tx if isinstance(tx, str) else None
        digests = "seen_keys" in value or "counted_keys" in value  # a compacted log's
        if digests or (tx is not None and ("intent" in value or "done" in value)):
            if state is not None:
                state.add(value)
            for shown, counted in pending.pop(tx or "", ()) if "intent" in value else ():
                if counted and state is not None:
                    state.counted(shown)
                yield shown
            continue
        event = _event(value)
        if event is None or (wanted is not None and event.kind not in wanted):
            continue
        if tx is not None:
            pending.setdefault(tx, []).append((event, value.get("counted") is True))
            continue
        if value.get("counted") is True and state is not None:  # a compacted log's
            state.counted(event)
        yield event


def last_seen(vault: Path) -> dict[str, dt.date]:
    """Each target's latest date of use in the log (``shown`` is not a use)."""
    return {target: e.date for target, e in latest_receipts(vault, USE_KINDS).items()}


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


# -- transactions

_PART_BYTES = 16 * 1024  # an intent line's size: far under the log's 64 KiB read cap

Raise = tuple[str, int, int, str]  # registry file, count before, count after, stamp
Claim = tuple[str, str, str]  # pattern, the log line's receipt (or source), its date


def new_tx() -> str:
    return os.urandom(8).hex()


def intent_lines(
    tx: str,
    raises: Mapping[str, Raise],
    claims: Sequence[Claim],
    fixes: Sequence[tuple[str, str, int]] = (),
) -> list[str]:
    """The intent of ``tx``, in lines of at most about _PART_BYTES each (at least one)."""
    items: list[tuple[str, Any]] = [("intent", (k, list(v))) for k, v in raises.items()]
    items += [("claims", list(c)) for c in claims]
    items += [("fix", list(f)) for f in fixes]
    lines: list[str] = []
    part: dict[str, Any] = {"tx": tx, "intent": {}, "claims": []}
    size = 0
    for kind, value in items:
        cost = len(json.dumps(value, ensure_ascii=True))
        if size and size + cost > _PART_BYTES:
            lines.append(json.dumps(part, ensure_ascii=True))
            part, size = {"tx": tx, "intent": {}, "claims": []}, 0
        if kind == "intent":
            part["intent"][value[0]] = value[1]
        else:
            part.setdefault(kind, []).append(value)
        size += cost
    lines.append(json.dumps(part, ensure_ascii=True))
    return lines


class LogState:
    """What the log's lines other than plain events say: the transactions (open intents,
    claims, fixes, and the lines themselves), the digests a compacted log keeps, and how
    many events counted each (session, pattern)."""

    def __init__(self) -> None:
        self.intents: dict[str, dict[str, Raise]] = {}
        self.closed: set[str] = set()
        self.claims: list[Claim] = []
        self.fixes: dict[tuple[str, str], int] = {}  # (session, pattern) -> count taken off
        self.lines: list[dict[str, Any]] = []  # the transaction lines, in order
        self.digests: dict[str, set[str]] = {"seen_keys": set(), "counted_keys": set()}
        self.copies: dict[tuple[str, str], int] = {}  # (session, pattern) -> events that counted it

    def counted(self, event: UseEvent) -> None:
        """One more event that counted ``event``'s (session, pattern)."""
        key = (event.session, event.target)
        self.copies[key] = self.copies.get(key, 0) + 1

    def add(self, value: Mapping[str, Any]) -> None:
        for field, found in self.digests.items():
            if isinstance(value.get(field), str):
                found.update(value[field].split())
        tx = value.get("tx")
        if not isinstance(tx, str):
            return
        self.lines.append(dict(value))
        if value.get("done") is True:
            self.closed.add(tx)
            return
        raises = self.intents.setdefault(tx, {})
        intent = value.get("intent")
        for name, raw in (intent if isinstance(intent, dict) else {}).items():
            if _is_raise(raw):
                raises[name] = (raw[0], raw[1], raw[2], raw[3])
        claims = value.get("claims")
        for raw in claims if isinstance(claims, list) else ():
            if isinstance(raw, list) and len(raw) == 3 and all(isinstance(x, str) for x in raw):
                self.claims.append((raw[0], raw[1], raw[2]))
        fixes = value.get("fix")
        for raw in fixes if isinstance(fixes, list) else ():
            if isinstance(raw, list) and len(raw) == 3 and isinstance(raw[2], int):
                key = (str(raw[0]), str(raw[1]))
                self.fixes[key] = self.fixes.get(key, 0) + raw[2]

    @property
    def open(self) -> dict[str, dict[str, Raise]]:
        return {tx: r for tx, r in self.intents.items() if tx not in self.closed}


def _is_raise(raw: object) -> bool:
    return (
        isinstance(raw, list)
        and len(raw) == 4
        and isinstance(raw[0], str)
        and all(isinstance(x, int) and not isinstance(x, bool) for x in raw[1:3])
        and isinstance(raw[3], str)
    )


def close(vault: Path, tx: str) -> None:
    append_line(uses_path(vault), json.dumps({"tx": tx, "done": True}), inside=vault)


def append_intent(vault: Path, lines: Sequence[str]) -> None:
    """Append a transaction's intent lines (the caller holds the writer lock)."""
    append_line(uses_path(vault), "\n".join(lines), inside=vault)


# -- compaction

_CHUNK = 2000  # digests a line: 17 bytes each, far under the 64 KiB cap


def needs_compacting(vault: Path) -> bool:
    """Over USES_COMPACT_BYTES, and twice what the last compacting left (its first line
    says): a log that stays big once compacted is not compacted on every counting."""
    path = uses_path(vault)
    try:
        size = os.stat(path).st_size
        if size <= config.USES_COMPACT_BYTES:
            return False
        with path.open("rb") as fh:
            head = json.loads(fh.readline(1024) or b"{}")
    except (OSError, ValueError):
        return True
    left = head.get("compacted_bytes") if isinstance(head, dict) else None
    return not isinstance(left, int) or size > 2 * left


def compact(vault: Path, waiting: Callable[[], None] | None = None) -> int:
    """Rewrite the log as the module doc says; the number of lines it had less the
    number it has (0: another process is compacting it, or it changed under us).
    ``waiting``: as for ``store.fsio.patient_lock``."""
    path = uses_path(vault)
    try:
        fh = _open_log(path)
    except OSError:
        return 0
    with fh:
        fd = fh.fileno()
        try:  # a lock on the log itself, not waited for: one compactor at a time
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0
        info = os.fstat(fd)
        with patient_lock(vault, waiting):  # a moment: no append is half written
            size = os.fstat(fd).st_size
        prefix = os.pread(fd, size, 0)  # lines appended since are copied after, as they are
        built = _compacted(vault, prefix)
        if built is None:
            return 0
        text, lines = built
        with patient_lock(vault, waiting):
            try:
                now = os.lstat(path)
            except OSError:
                return 0
            if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or now.st_size < size:
                return 0  # replaced meanwhile: not ours to overwrite
            tail = os.pread(fd, now.st_size - size, size) if now.st_size > size else b""
            data = text.encode("utf-8")
            head = json.dumps({"seen_keys": "", "compacted_bytes": len(data) + 64})
            atomic_write(path, head.encode() + b"\n" + data + tail)
        return max(0, prefix.count(b"\n") - lines - 1)


def _compacted(vault: Path, prefix: bytes) -> tuple[str, int] | None:
    """The compacted text of the log's first bytes, ``prefix``, and its number of lines;
    None when it holds no event."""
    state = LogState()
    with io.BytesIO(prefix) as log:
        events = list(read_events(vault, state=state, log=log))
    if not events:
        return None
    counted = state.copies
    newest = max(e.date for e in events)
    recent = newest - dt.timedelta(days=config.USES_KEEP_DAYS)
    keep: set[int] = set()
    first: dict[str, int] = {}
    latest: dict[tuple[str, bool], int] = {}
    for k, e in enumerate(events):
        first.setdefault(e.target, k)
        for pattern in {False, e.kind in PATTERN_KINDS}:
            seen = latest.get((e.target, pattern))
            if seen is None or e.date >= events[seen].date:
                latest[(e.target, pattern)] = k
        if e.date >= recent or counted.get((e.session, e.target), 0) > 1:
            keep.add(k)
    keep |= set(first.values()) | set(latest.values())
    seen_keys, counted_keys = state.digests["seen_keys"], state.digests["counted_keys"]
    for k, e in enumerate(events):
        if k not in keep:
            seen_keys.add(key_digest((e.session, e.kind, e.target)))
            if e.kind in PATTERN_KINDS:
                counted_keys.add(key_digest((e.session, e.target)))
    lines = _digest_lines("seen_keys", sorted(seen_keys))
    lines += _digest_lines("counted_keys", sorted(counted_keys))
    open_txs = state.open
    for value in state.lines:  # an open intent stays whole; a closed one's claims and fixes
        tx = str(value.get("tx"))
        still = tx in open_txs
        if "intent" not in value or not (still or value.get("claims") or value.get("fix")):
            continue
        said = {k: value[k] for k in ("claims", "fix") if k in value}
        lines.append(json.dumps(value if still else {"tx": tx, "intent": {}} | said))
        lines += [] if still else [json.dumps({"tx": tx, "done": True})]
    for k in sorted(keep):  # settled: no transaction; one that counted a session twice
        event = events[k]  # keeps its mark, for the repair
        lines.append(event.to_json(None, counted.get((event.session, event.target), 0) > 1))
    return "".join(f"{line}\n" for line in lines), len(lines)


def _digest_lines(field: str, digests: list[str]) -> list[str]:
    return [
        json.dumps({field: " ".join(digests[i : i + _CHUNK])})
        for i in range(0, len(digests), _CHUNK)
    ]
