"""``state/journal.jsonl``: one JSON line per decision, appended, never rewritten."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply.decision import ACT, Outcome
from vaultkeeper.store.fsio import append_line
from vaultkeeper.store.model import Problem
from vaultkeeper.store.vault import own_dir


@dataclass(frozen=True)
class Journal:
    records: tuple[Mapping[str, Any], ...]  # oldest first
    problems: tuple[Problem, ...]


def journal_path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.JOURNAL_FILE


def timestamp(now: dt.datetime) -> str:
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id(now: dt.datetime) -> str:
    """``20261201-101500-a1b2c3``: sortable by time, unique by its random tail."""
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


ID_PATTERN = r"\d{8}-\d{6}-[0-9a-f]{6}"


def append(vault: Path, outcome: Outcome, now: dt.datetime) -> dict[str, Any]:
    """Journal one decision; a dry run is not a decision and is never journaled."""
    record = {"ts": timestamp(now), **outcome.record()}
    if not outcome.dry_run:
        append_line(
            journal_path(vault),
            json.dumps(record, ensure_ascii=True, sort_keys=False),
            inside=vault,
        )
    return record


def append_all(vault: Path, outcomes: list[Outcome], now: dt.datetime) -> None:
    """Journal many decisions in one write and one fsync (a session counted for 2,000
    memories is 2,000 lines: one fsync each held the writer lock for seconds)."""
    lines = [
        json.dumps({"ts": timestamp(now), **o.record()}, ensure_ascii=True, sort_keys=False)
        for o in outcomes
        if not o.dry_run
    ]
    if lines:
        append_line(journal_path(vault), "\n".join(lines), inside=vault)


def read(vault: Path) -> Journal:
    """Every record, oldest first; a line that is not a JSON object becomes a problem."""
    path = journal_path(vault)
    if not path.is_file():
        return Journal((), ())
    records: list[Mapping[str, Any]] = []
    problems: list[Problem] = []
    rel_path = f"{config.STATE_DIR}/{config.JOURNAL_FILE}"
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                value: Any = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                problems.append(Problem(rel_path, number, "not a JSON line; skipped"))
                continue
            if not isinstance(value, dict):
                problems.append(Problem(rel_path, number, "not a JSON object; skipped"))
                continue
            records.append(dict(value))
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
