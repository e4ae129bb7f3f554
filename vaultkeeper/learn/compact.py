"""Compact ``state/uses.jsonl`` once it outgrows ``USES_COMPACT_BYTES``.

The log is read whole by every counting; at a million lines that took 15-20 s. Compacting
keeps what replay safety and decay need, and digests the rest:

- every event of the last ``USES_KEEP_DAYS`` days (the server's and ``use``'s lines a
  host session's call may still stand on are among them), every event that counted a
  session more than once (a sync's double count, still to be repaired), and for each
  target its first, its latest, and its latest pattern-kind event (decay's last seen,
  the brief's receipts, the log's first day);
- of every other event, a 64-bit digest of its key (session, kind, target) and, for a
  pattern kind, of (session, target): a replayed transcript is still known;
- the transaction lines that say something still (claims, fixes; an open intent, which
  reconcile closes first anyway); closed intents and done lines go.

The writer lock is held for two moments only, never for the work: to take the log's
length (no append is half written then), and to swap the compacted log in, with every
line appended since copied after it as it is. Compacting a 35 MB log held the lock for
12-32 s, and every ``use`` and ``ingest`` waiting on it failed. One process compacts at a
time (a lock on the log file itself: the others go on counting); a log replaced
meanwhile (another machine's compacting, a person's edit) is left as it is. Written
atomically: a kill leaves the old log or the new one.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import io
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.learn.usetx import TxState
from vaultkeeper.store.fsio import atomic_write, patient_lock
from vaultkeeper.store.uses import PATTERN_KINDS, UseEvent, key_digest, read_events, uses_path

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
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return 0
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _only_compactor(fd):
            return 0
        with patient_lock(vault, waiting):  # a moment: no append is half written
            size = os.fstat(fd).st_size
        built = _compacted(vault, (fd, size))
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
        return max(0, _count_lines(fd, size) - lines - 1)
    finally:
        os.close(fd)


def _count_lines(fd: int, size: int) -> int:
    count, at = 0, 0
    while at < size:
        chunk = os.pread(fd, min(1 << 20, size - at), at)
        if not chunk:
            break
        count += chunk.count(b"\n")
        at += len(chunk)
    return count


class _Prefix(io.RawIOBase):
    """The first ``size`` bytes of the file open at ``fd``, read with ``pread``: what
    the log held when the compacting took its length (lines appended since are copied
    after the compacted ones, as they are)."""

    def __init__(self, fd: int, size: int) -> None:
        super().__init__()
        self.fd, self.size, self.at = fd, size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = os.pread(self.fd, min(len(buffer), self.size - self.at), self.at)
        buffer[: len(data)] = data
        self.at += len(data)
        return len(data)


def _only_compactor(fd: int) -> bool:
    """An exclusive lock on the log file itself, without waiting: False when another
    process holds it (it is compacting; this one goes on). Released with ``fd``."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _compacted(vault: Path, upto: tuple[int, int]) -> tuple[str, int] | None:
    """The compacted text of the log's first ``upto`` bytes and its number of lines;
    None when it holds no event."""
    tx_lines: list[dict[str, Any]] = []
    state = TxState()
    old_digests: dict[str, list[str]] = {"seen_keys": [], "counted_keys": []}

    def on_tx(value: dict[str, Any]) -> None:
        for field, found in old_digests.items():
            if isinstance(value.get(field), str):
                found.extend(str(value[field]).split())
        if "tx" in value:
            state.add(value)
            tx_lines.append(value)

    counted: dict[tuple[str, str], int] = {}
    with io.BufferedReader(_Prefix(*upto)) as log:  # the log's first bytes only
        events = list(
            read_events(vault, on_tx=on_tx, on_counted=lambda e: _bump(counted, e), log=log)
        )
    if not events:
        return None
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
    seen_keys = old_digests["seen_keys"]
    counted_keys = old_digests["counted_keys"]
    for k, e in enumerate(events):
        if k not in keep:
            seen_keys.append(key_digest((e.session, e.kind, e.target)))
            if e.kind in PATTERN_KINDS:
                counted_keys.append(key_digest((e.session, e.target)))
    lines = _digest_lines("seen_keys", sorted(set(seen_keys)))
    lines += _digest_lines("counted_keys", sorted(set(counted_keys)))
    open_txs = state.open
    for value in tx_lines:  # claims and fixes stay; an open intent stays whole
        if "intent" not in value:
            continue
        tx = str(value.get("tx"))
        if tx in open_txs or value.get("claims") or value.get("fix"):
            lines.append(json.dumps(_without_raises(value, tx in open_txs), ensure_ascii=True))
            if tx not in open_txs:
                lines.append(json.dumps({"tx": tx, "done": True}))
    lines += [_event_line(events[k], counted) for k in sorted(keep)]
    return "".join(f"{line}\n" for line in lines), len(lines)


def _bump(counted: dict[tuple[str, str], int], event: UseEvent) -> None:
    key = (event.session, event.target)
    counted[key] = counted.get(key, 0) + 1


def _without_raises(value: dict[str, Any], still_open: bool) -> dict[str, Any]:
    """A closed transaction's line without its raises (done): claims and fixes only."""
    if still_open:
        return value
    return {
        "tx": value["tx"],
        "intent": {},
        **{k: value[k] for k in ("claims", "fix") if k in value},
    }


def _event_line(event: UseEvent, counted: dict[tuple[str, str], int]) -> str:
    """A kept event, as its own line (no transaction: it is settled); one that counted a
    session twice keeps its mark, for the repair."""
    twice = counted.get((event.session, event.target), 0) > 1
    return event.to_json(None, counted=twice)


def _digest_lines(field: str, digests: list[str]) -> list[str]:
    return [
        json.dumps({field: " ".join(digests[i : i + _CHUNK])})
        for i in range(0, len(digests), _CHUNK)
    ]
