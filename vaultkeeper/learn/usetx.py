"""Counting that survives a kill at any instruction: the usage log's transactions.

One counting (an ingest, an MCP ``cite``, a ``use``) is one transaction ``T``:

1. one append to ``state/uses.jsonl`` holds its new events, each tagged ``"tx": T``, and
   after them its intent lines: per pattern the registry file, the count before and
   after, the last-used stamp (and the server/``use`` lines its host sessions' calls
   stand on, ``claims``, so no later ingest takes them again);
2. the registry is edited, and the uses journaled (each record names ``T``);
3. a ``done`` line closes ``T``.

A kill before 1 is complete leaves no intent: the events are not seen (uses.py shows a
tagged event only after its intent line) and the next run counts them afresh. A kill
after it leaves ``T`` open: the next counting first reconciles it -- each pattern whose
count still reads "before" is raised now, by the same amount, the rest were raised
already; journal records ``T`` lacks are written; then ``T`` is closed. So a session
is counted exactly once whichever instruction the kill hit.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, Outcome
from vaultkeeper.learn.use import UseResult, plan_uses, record_uses
from vaultkeeper.store.fsio import append_line
from vaultkeeper.store.uses import uses_path

JOURNAL_ACTION = "use"
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


class TxState:
    """What the log's transaction lines say: the open intents and every claim."""

    def __init__(self) -> None:
        self.intents: dict[str, dict[str, Raise]] = {}
        self.closed: set[str] = set()
        self.claims: list[Claim] = []
        self.fixes: dict[tuple[str, str], int] = {}  # (session, pattern) -> count taken off

    def add(self, value: Mapping[str, Any]) -> None:
        tx = value.get("tx")
        if not isinstance(tx, str):
            return
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


def journal_use(
    vault: Path, name: str, reason: str, now: dt.datetime, tx: str, **extra: str
) -> None:
    outcome = Outcome(JOURNAL_ACTION, name, ACT, reason, extra={**extra, "tx": tx})
    journal.append(vault, outcome, now)


def reconcile(vault: Path, open_txs: Mapping[str, Mapping[str, Raise]], now: dt.datetime) -> int:
    """Finish each transaction a kill left open (see the module doc), under the writer
    lock the caller holds; how many counters were raised now."""
    if not open_txs:
        return 0
    journaled = {
        (str(r.get("tx")), str(r.get("target")))
        for r in journal.read(vault).records
        if r.get("action") == JOURNAL_ACTION and "tx" in r
    }
    raised = 0
    for tx, raises in open_txs.items():
        need: dict[str, tuple[int, dt.date]] = {}
        for name, (_, before, after, stamp) in raises.items():
            day = _day(stamp)
            plan = plan_uses(vault, {name: (1, day or now.date())})
            found = plan.done.get(name)
            if found is not None and found.count_before == before and after > before:
                need[name] = (after - before, day or now.date())
        done: dict[str, UseResult] = {}
        if need:
            done, _ = record_uses(vault, need, now, never_back=True)
        for name, (_, before, after, _stamp) in raises.items():
            if (tx, name) in journaled and name not in done:
                continue
            when = "now, after" if name in done else "before"
            reason = (
                f"success count {before} -> {after}: counted {when} an interrupted "
                f"count (transaction {tx})"
            )
            journal_use(vault, name, reason, now, tx)
        raised += len(done)
        close(vault, tx)
    return raised


def _day(stamp: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(stamp)
    except ValueError:
        return None


def repair(
    vault: Path,
    copies: Mapping[tuple[str, str], int],
    state: TxState,
    now: dt.datetime,
) -> list[str]:
    """Take off what two machines both counted for one session (git's union merge of the
    log keeps both counted events; the registry merge adds both raises): a (session,
    pattern) counted k times needs k - 1 off, less what a fix took off already (on this
    machine or another: fixes travel in the log too). One transaction, journaled; the
    lines it journaled. Run under the writer lock, after reconcile."""
    delta: dict[str, int] = {}
    fixes: list[tuple[str, str, int]] = []
    for key in {*copies, *state.fixes}:
        need = -(max(copies.get(key, 0), 1) - 1) - state.fixes.get(key, 0)
        if need:
            fixes.append((key[0], key[1], need))
            delta[key[1]] = delta.get(key[1], 0) + need
    if not fixes:
        return []
    probe = plan_uses(vault, {name: (0, now.date()) for name in delta})
    raises: dict[str, Raise] = {}
    uses: dict[str, tuple[int, dt.date]] = {}
    for name, change in delta.items():
        found = probe.done.get(name)
        if found is None or not change:
            continue
        change = max(change, -found.count_before)  # never below 0
        if change:
            after = found.count_before + change
            raises[name] = (found.path, found.count_before, after, found.last_used)
            uses[name] = (change, dt.date.fromisoformat(found.last_used))
    fixes = [f for f in fixes if f[1] in raises]
    if not fixes:
        return []
    tx = new_tx()
    append_line(uses_path(vault), "\n".join(intent_lines(tx, raises, (), fixes)), inside=vault)
    record_uses(vault, uses, now, never_back=True)
    lines = []
    for name, (_, before, after, _stamp) in raises.items():
        sessions = ", ".join(sorted(s for s, n, _ in fixes if n == name))
        reason = (
            f"success count {before} -> {after}: session(s) {sessions} counted on two "
            "machines before a sync (the usage log's union merge kept both)"
        )
        journal_use(vault, name, reason, now, tx)
        lines.append(f"{name}: {reason}")
    close(vault, tx)
    return lines
