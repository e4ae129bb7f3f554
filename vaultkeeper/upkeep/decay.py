"""Decay: active lessons nobody has used for a long time, and promoted skills nobody invokes.

An active memory entry is "stale: re-validate" when the latest of these is more than
``config.STALE_DAYS`` days ago: the last time a session cited or read it (the usage log
``state/uses.jsonl`` that ``ingest`` and MCP write, read through vaultkeeper.store.uses), its
``last_validated`` date, the last decision that made it active (a passed re-check or a
reactivation, from ``state/journal.jsonl``), the latest ISO date inside a
``provenance`` receipt, and its ``holdout_until`` (an active entry passed that
hold-out). With none of these, it is stale only when the usage log itself goes back
further than the window and never names it; otherwise nothing dates it.

A promoted registry block (a skill) is "skill unused" when neither the log's last use
of its name (an invocation or a citation), nor its ``last used`` line, nor its
promotion date is within
``config.SKILL_UNUSED_DAYS`` days. Both lists are for a person (or agent) to decide on;
vaultkeeper never edits or deletes a skill on its own.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.store.model import parse_date
from vaultkeeper.store.text import ParseError, read_regular


class Usage(NamedTuple):
    """What the usage log says: target -> last date, and the log's first date."""

    last_seen: Mapping[str, dt.date]
    since: dt.date | None  # the earliest event's date; None without a log
    validated: Mapping[str, dt.date]  # the journal's re-checks


class PromotedBlock(NamedTuple):
    """What a registry block says about its skill (from the scanner's block heads)."""

    name: str
    path: str
    line: int
    promoted: str  # the **promoted:** line's value
    last_used: dt.date | None


def load_usage(vault: Path) -> Usage:
    """What ``state/uses.jsonl`` says (vaultkeeper.store.uses: unreadable lines are skipped).

    The log is appended in the order sessions are ingested, so its first event dates it.
    """
    from vaultkeeper.store import uses

    validated = validated_on(vault)
    try:
        seen = uses.last_seen(vault)
        first = next(uses.read_events(vault, uses.USE_KINDS), None)
    except OSError:  # an unreadable log: decay from the entries' own dates
        return Usage({}, None, validated)
    return Usage(seen, None if first is None else first.date, validated)


def validated_on(vault: Path) -> dict[str, dt.date]:
    """Memory path -> the last day the journal shows it made active by a decision (a
    passed re-check, a reactivation): a validation as real as a ``last_validated`` key.

    Only lines naming such a move are parsed; a line that can't be read is skipped.
    """
    out: dict[str, dt.date] = {}
    try:  # a regular file only: the journal travels through git, a link may come with it
        text = read_regular(vault / config.STATE_DIR / config.JOURNAL_FILE, follow=False)
    except ParseError:
        return out
    for raw in text.splitlines():
        if b'"to": "active"' not in raw or b'"outcome": "act"' not in raw:
            continue
        try:
            record = json.loads(raw)
            path, day = str(record["path"]), parse_date(str(record["ts"])[:10])
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
        if day is not None and (path not in out or out[path] < day):
            out[path] = day
    return out


class MemoryFacts(NamedTuple):
    """The keys of one memory file that duplicates and decay read."""

    rel: str
    name: str
    description: str
    status: str | None
    holdout_until: object  # as YAML gave it; a date as its ISO text
    last_validated: object  # the same
    provenance_date: str | None  # the latest ISO date its receipts name


class Stale(NamedTuple):
    """An active memory entry not seen for longer than the window."""

    name: str
    path: str
    last_seen: str | None  # ISO date, or None: never (the log covers the window)
    source: str  # what dated it: "uses log", "last_validated", "provenance", "holdout_until"
    idle_days: int | None

    def line_text(self) -> str:
        when = (
            f"last seen {self.last_seen} ({self.source}, {self.idle_days} days ago)"
            if self.last_seen
            else f"never cited or read ({self.source})"
        )
        return f"stale: re-validate {self.name} -- {when} -- {self.path}"

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class SkillUnused(NamedTuple):
    """A promoted registry block whose skill no session has invoked within the window."""

    name: str
    path: str
    line: int
    promoted: str  # the block's **promoted:** value
    last_seen: str  # ISO date
    source: str  # "uses log", "last used" or "promoted"
    idle_days: int

    def line_text(self) -> str:
        return (
            f"skill unused {self.name} -- last seen {self.last_seen} ({self.source}, "
            f"{self.idle_days} days ago), promoted {self.promoted} -- {self.path}:{self.line}"
        )

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def stale_entries(facts: Iterable[MemoryFacts], usage: Usage, today: dt.date) -> list[Stale]:
    """Active memory entries last seen more than ``config.STALE_DAYS`` days before today."""
    cut = today - dt.timedelta(days=config.STALE_DAYS)
    log_covers = usage.since is not None and usage.since < cut
    seen, validated = usage.last_seen, usage.validated
    parsed: dict[str, dt.date | None] = {}  # a vault repeats its dates many times

    def day(value: object) -> dt.date | None:
        if value is None:  # most keys of most entries
            return None
        if type(value) is not str:
            return parse_date(value)
        if value not in parsed:
            parsed[value] = parse_date(value)
        return parsed[value]

    out: list[Stale] = []
    for f in facts:
        if f.status != "active":
            continue
        # the latest of these dates, the first named on a tie (written out: per entry)
        rel = f.rel
        when, other = seen.get(rel), seen.get(rel.removesuffix(".md"))
        if when is None or (other is not None and other > when):
            when = other
        source = "uses log"
        for found, named in (
            (day(f.last_validated), "last_validated"),
            (validated.get(rel), "re-checked"),
            (day(f.provenance_date), "provenance"),
            (day(f.holdout_until), "holdout_until"),
        ):
            if found is not None and (when is None or found > when):
                when, source = found, named
        if when is None:
            if log_covers:
                since = f"uses log since {usage.since}"
                out.append(Stale(f.name, rel, None, since, None))
            continue
        if when < cut:
            out.append(Stale(f.name, rel, when.isoformat(), source, (today - when).days))
    return out


def unused_skills(
    blocks: Iterable[PromotedBlock], usage: Usage, today: dt.date
) -> list[SkillUnused]:
    """Promoted blocks whose latest use or promotion is older than the window."""
    cut = today - dt.timedelta(days=config.SKILL_UNUSED_DAYS)
    out: list[SkillUnused] = []
    for b in blocks:
        head = b.promoted.split(None, 1)[0] if b.promoted.strip() else ""
        day, source = None, ""  # the latest date; of equal ones, the first named
        for when, named in (
            (usage.last_seen.get(b.name), "uses log"),
            (b.last_used, "last used"),
            (parse_date(head), "promoted"),
        ):
            if when is not None and (day is None or when > day):
                day, source = when, named
        if day is not None and day < cut:
            idle = (today - day).days
            out.append(
                SkillUnused(b.name, b.path, b.line, b.promoted, day.isoformat(), source, idle)
            )
    return out
