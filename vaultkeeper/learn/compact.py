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

Written atomically under the writer lock: a kill leaves the old log or the new one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.learn.usetx import TxState
from vaultkeeper.store.fsio import atomic_write
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


def compact(vault: Path) -> int:
    """Rewrite the log as the module doc says (the caller holds the writer lock);
    the number of lines it had less the number it has."""
    path = uses_path(vault)
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
    events = list(read_events(vault, on_tx=on_tx, on_counted=lambda e: _bump(counted, e)))
    if not events:
        return 0
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
    with path.open("rb") as fh:
        before = sum(1 for _ in fh)
    text = "".join(f"{line}\n" for line in lines)
    size = len(text.encode("utf-8"))
    head = json.dumps({"seen_keys": "", "compacted_bytes": size + 64})  # about its own size
    atomic_write(path, f"{head}\n{text}")
    return before - len(lines) - 1


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
