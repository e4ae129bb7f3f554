"""Whether the lessons the point-of-use recall served were then used.

Read from the usage log alone: a showing (a ``shown`` line) is *followed* by a citation
or a read when such a line of that lesson in that session comes after it. Per lesson:
times shown, followed by a citation, by a read. *Noise*: shown at least
``MOMENT_NOISE_MIN_SHOWN`` times, never cited nor read after. *Missed*: a lesson cited in
a session where the recall served something, but not it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.model import is_memory_path
from vaultkeeper.store.uses import UseEvent, read_events


@dataclass(frozen=True)
class Shown:
    target: str
    shown: int
    cited: int  # showings followed by a citation in the same session
    read: int  # showings followed by a read in the same session

    @property
    def noise(self) -> bool:
        return self.shown >= config.MOMENT_NOISE_MIN_SHOWN and not (self.cited or self.read)


@dataclass(frozen=True)
class Adherence:
    lessons: tuple[Shown, ...]  # most shown first
    missed: tuple[tuple[str, int], ...]  # (lesson, sessions it was cited in but not shown)

    @property
    def noise(self) -> tuple[Shown, ...]:
        return tuple(s for s in self.lessons if s.noise)


def measure(events: Iterable[UseEvent]) -> Adherence:
    """Adherence from the log's events, oldest first."""
    open_: dict[tuple[str, str], list[list[bool]]] = {}  # (session, target) -> [cited, read]
    shown_in: dict[str, set[str]] = {}
    cited_in: dict[str, set[str]] = {}
    for e in events:
        key = (e.session, e.target)
        if e.kind == "shown":
            open_.setdefault(key, []).append([False, False])
            shown_in.setdefault(e.session, set()).add(e.target)
        elif e.kind in ("cite", "read"):
            for mark in open_.get(key, ()):
                mark[0 if e.kind == "cite" else 1] = True
            if e.kind == "cite" and is_memory_path(e.target):  # a lesson, not a pattern
                cited_in.setdefault(e.target, set()).add(e.session)
    totals: dict[str, list[int]] = {}
    for (_, target), marks in open_.items():
        row = totals.setdefault(target, [0, 0, 0])
        row[0] += len(marks)
        row[1] += sum(m[0] for m in marks)
        row[2] += sum(m[1] for m in marks)
    lessons = sorted(
        (Shown(t, *row) for t, row in totals.items()), key=lambda s: (-s.shown, s.target)
    )
    missed = sorted(
        (t, n)
        for t, sessions in cited_in.items()
        if (n := sum(1 for s in sessions if s in shown_in and t not in shown_in[s]))
    )
    return Adherence(tuple(lessons), tuple(missed))


def adherence(vault: Path) -> Adherence:
    return measure(read_events(vault, ("shown", "cite", "read")))
