"""The ledgers of the applier: ``state/journal.jsonl``, one JSON line per decision,
appended, never rewritten; ``state/queue.jsonl``, decisions waiting for a person
(deletions, override demotions), closed by a line of their own.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply.decision import ACT, Decision, Outcome
from vaultkeeper.errors import UsageError
from vaultkeeper.store.fsio import append_line, open_append
from vaultkeeper.store.model import Problem
from vaultkeeper.store.text import ParseError, read_regular
from vaultkeeper.store.vault import own_dir


@dataclass(frozen=True)
class Journal:
    records: tuple[Mapping[str, Any], ...]  # oldest first
    problems: tuple[Problem, ...]


def journal_path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.JOURNAL_FILE


def check(vault: Path) -> None:
    """Raise, writing nothing, what appending a line would (a symlink, a folder, a FIFO,
    no write permission): a decision is refused before its first write, not after it."""
    with contextlib.suppress(FileNotFoundError):
        os.close(open_append(journal_path(vault), 0))


def timestamp(now: dt.datetime) -> str:
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id(now: dt.datetime) -> str:
    """``20261201-101500-a1b2c3``: sortable by time, unique by its random tail."""
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


ID_PATTERN = r"\d{8}-\d{6}-[0-9a-f]{6}"


def trash_folder(vault: Path, trash_id: str) -> Path:
    if not re.fullmatch(ID_PATTERN, trash_id):
        raise UsageError(f"{trash_id!r}: not a trash id (like 20261201-101500-a1b2c3)")
    return Path(own_dir(vault, config.TRASH_DIR)) / trash_id


def _record(outcome: Outcome, now: dt.datetime) -> dict[str, Any]:
    return {"ts": timestamp(now), **outcome.record()}


def append(vault: Path, outcome: Outcome, now: dt.datetime) -> dict[str, Any]:
    """Journal one decision; a dry run is not a decision and is never journaled."""
    append_all(vault, [outcome], now)
    return _record(outcome, now)


def append_all(vault: Path, outcomes: list[Outcome], now: dt.datetime) -> None:
    """Journal many decisions in one write and one fsync (a session counted for 2,000
    memories is 2,000 lines: one fsync each held the writer lock for seconds)."""
    lines = [json.dumps(_record(o, now), ensure_ascii=True) for o in outcomes if not o.dry_run]
    if lines:
        append_line(journal_path(vault), "\n".join(lines), inside=vault)


_TORN = object()  # a line that is not JSON
_NOT_READ = object()  # the file itself: a link (state/ travels with git) or not a file


def _jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, value, or _TORN) of each line of ``path`` that is not blank; one
    _NOT_READ for a link or anything but a regular file, never read through."""
    if not os.path.lexists(path):
        return []
    try:
        data = read_regular(path, follow=False)
    except ParseError:
        return [(1, _NOT_READ)]
    out: list[tuple[int, Any]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            try:
                out.append((number, json.loads(raw)))
            except (ValueError, UnicodeDecodeError, RecursionError):
                out.append((number, _TORN))
    return out


def read(vault: Path) -> Journal:
    """Every record, oldest first; a line that is not a JSON object becomes a problem."""
    records: list[Mapping[str, Any]] = []
    problems: list[Problem] = []
    for number, value in _jsonl(journal_path(vault)):
        if isinstance(value, dict):
            records.append(value)
        else:
            why = "not a JSON line" if value is _TORN else "not a JSON object"
            why = "not a regular file (never read through a link)" if value is _NOT_READ else why
            where = f"{config.STATE_DIR}/{config.JOURNAL_FILE}"
            problems.append(Problem(where, number, f"{why}; skipped"))
    return Journal(tuple(records), tuple(problems))


def latest(vault: Path, match: Callable[[Mapping[str, Any]], bool]) -> Mapping[str, Any] | None:
    """The newest record ``match`` accepts, if any."""
    records: tuple[Mapping[str, Any], ...] = read(vault).records
    return next((r for r in reversed(records) if match(r)), None)


def last_act(
    vault: Path, action: str, target: str, match: Callable[[Mapping[str, Any]], bool]
) -> Mapping[str, Any] | None:
    """The newest applied record of ``action`` on ``target`` that ``match`` accepts."""
    return latest(
        vault,
        lambda r: (
            r.get("outcome") == ACT
            and r.get("action") == action
            and r.get("target") == target
            and match(r)
        ),
    )


NATIVE_ACTION = "native-prune"  # apply/native.py's ACTION (it imports this module)


@dataclass(frozen=True)
class Ask:
    id: str
    ts: str
    action: str
    target: str
    reason: str
    evidence: str | None
    result: str | None
    hash: str | None  # the target's hash when asked, to flag later changes
    drop: str | None = None  # merge: the entry that would leave the vault

    def decision(self) -> Decision:
        return Decision(
            self.action, self.target, self.evidence, self.result, reason=self.reason,
            drop=self.drop,
        )  # fmt: skip

    @property
    def what(self) -> str:
        """``prune X``, or ``merge DROP into KEEP``: what a yes would do."""
        if self.drop is not None:
            return f"{self.action} {self.drop} into {self.target}"
        return f"{self.action} {self.target}"

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        if out.get("drop") is None:
            out.pop("drop", None)  # only a merge names a second entry
        return out


def queue_path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.QUEUE_FILE


def _lines(vault: Path, problems: list[Problem] | None = None) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for number, value in _jsonl(queue_path(vault)):
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            out.append(value)
        elif problems is not None:  # a torn line may have held an ask: never "0 waiting"
            why = "not a queue line (an ask may be hidden there); skipped"
            problems.append(Problem(f"{config.STATE_DIR}/{config.QUEUE_FILE}", number, why))
    return out


def damaged(vault: Path) -> list[Problem]:
    """The queue's lines that can't be read: each may hide an ask."""
    problems: list[Problem] = []
    _lines(vault, problems)
    return problems


def pending(vault: Path) -> list[Ask]:
    """Open asks, oldest first."""
    asks: dict[str, Ask] = {}
    for line in _lines(vault):
        if line.get("type") == "ask":
            said = [str(line.get(key, "")) for key in ("ts", "action", "target", "reason")]
            drop = line.get("drop") if isinstance(line.get("drop"), str) else None
            kept = [line.get("evidence"), line.get("result"), line.get("hash"), drop]
            asks[line["id"]] = Ask(line["id"], *said, *kept)
        elif line.get("type") == "done":
            asks.pop(line["id"], None)
    return list(asks.values())


def find_pending(vault: Path, decision: Decision, target: str) -> Ask | None:
    for ask in pending(vault):
        asked = (ask.action, ask.target, ask.result, ask.drop)
        if asked == (decision.action, target, decision.result, decision.drop):
            return ask
    return None


def enqueue(
    vault: Path, decision: Decision, target: str, reason: str, digest: str | None, now: dt.datetime
) -> Ask:
    """Queue ``decision`` for a person, unless the same request is already waiting."""
    existing = find_pending(vault, decision, target)
    if existing is not None:
        return existing
    ask = Ask(
        new_id(now),
        timestamp(now),
        decision.action,
        target,
        reason,
        decision.evidence,
        decision.result,
        digest,
        decision.drop,
    )
    append_line(
        queue_path(vault),
        json.dumps({"type": "ask", **ask.to_dict()}, ensure_ascii=True),
        inside=vault,
    )
    return ask


def close_for(
    vault: Path, target: str, answer: str, now: dt.datetime, native: bool = False
) -> None:
    """A decision carried out on ``target`` (a deletion, wherever the yes was given: a
    terminal, the MCP dialog, review) answers every request still queued about it;
    ``native``: the asks about a host's own memory, whose targets are another namespace."""
    for ask in pending(vault):
        if ask.target == target and (ask.action == NATIVE_ACTION) == native:
            close(vault, ask.id, answer, now)


def close(vault: Path, ask_id: str, answer: str, now: dt.datetime) -> None:
    line = {"type": "done", "id": ask_id, "ts": timestamp(now), "answer": answer}
    append_line(queue_path(vault), json.dumps(line, ensure_ascii=True), inside=vault)
