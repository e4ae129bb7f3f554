"""The report's extra sections: possible duplicates, stale lessons, unused skills.

The spec's summary line and its three lists stay exactly as they are; these sections
follow them in the text report, in ``--json`` and the saved report, and in the brief.
``upkeep`` computes them from what the scanner already read (block heads and memory
files' keys), so no file is read twice.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from vaultkeeper import config
from vaultkeeper.upkeep.decay import (
    MemoryFacts,
    PromotedBlock,
    SkillUnused,
    Stale,
    Usage,
    load_usage,
    stale_entries,
    unused_skills,
)
from vaultkeeper.upkeep.duplicates import (
    DuplicatePair,
    cached_pairs,
    capped,
    duplicate_items,
    find_pairs,
)

if TYPE_CHECKING:  # only for the annotations
    from vaultkeeper.registry.keptheads import Head
    from vaultkeeper.scan.cache import ScanCache

    class Sections(Protocol):
        """What these functions read of a report (report.Report has it; no import circle)."""

        @property
        def vault(self) -> str: ...
        @property
        def duplicates(self) -> tuple[DuplicatePair, ...]: ...
        @property
        def stale(self) -> tuple[Stale, ...]: ...
        @property
        def skills_unused(self) -> tuple[SkillUnused, ...]: ...


class Upkeep(NamedTuple):
    duplicates: tuple[DuplicatePair, ...]
    stale: tuple[Stale, ...]
    skills_unused: tuple[SkillUnused, ...]


def upkeep(
    vault: Path,
    today: dt.date,
    heads: Sequence[Head],
    facts: Sequence[MemoryFacts],
    usage: Usage | None = None,
    cache: ScanCache | None = None,
) -> Upkeep:
    """The three extra sections, from the scanner's block heads and memory-file keys;
    with ``cache``, the duplicate pairs of an unchanged set of entries are not sought again."""
    usage = load_usage(vault) if usage is None else usage
    promoted = [
        PromotedBlock(h.name, h.rel, h.line, h.promoted, h.last_used)
        for h in heads
        if h.promoted is not None
    ]
    if cache is None:
        pairs = find_pairs(duplicate_items(heads, facts))
    else:
        pairs = cached_pairs(heads, facts, cache)
    return Upkeep(
        duplicates=tuple(capped(pairs)),
        stale=tuple(stale_entries(facts, usage, today)),
        skills_unused=tuple(unused_skills(promoted, usage, today)),
    )


def _served(value: Any) -> Any:
    """Text read from the vault, as everything vaultkeeper serves: credentials masked,
    terminal controls stripped (vaultkeeper.store.secrets)."""
    from vaultkeeper.store.secrets import needs_serving, served

    if isinstance(value, str):
        return served(value) if needs_serving(value) else value
    if isinstance(value, dict):
        return {k: _served(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_served(v) for v in value]
    return value


def to_dict(report: Sections) -> dict[str, Any]:
    return {key: _dicts(getattr(report, key)) for key in Upkeep._fields}


def _dicts(found: Sequence[DuplicatePair] | Sequence[Stale] | Sequence[SkillUnused]) -> list[Any]:
    """Each finding's dict, served; one check for them all, as report.one_lines does."""
    from vaultkeeper.store.secrets import needs_serving

    dicts = [f.to_dict() for f in found]
    # every text field, those read from the vault among them (and a pair's shared words)
    texts = [v for f in found for v in f if isinstance(v, str)]
    texts += [w for f in found for v in f if isinstance(v, tuple) for w in v]
    if needs_serving("".join(texts)):
        return [_served(d) for d in dicts]
    return dicts


def text_lines(report: Sections) -> list[str]:
    """One line per finding, after the spec's lists (duplicates, stale, skills unused)."""
    found: list[DuplicatePair | Stale | SkillUnused] = [*report.duplicates, *report.stale]
    return [f.line_text() for f in (*found, *report.skills_unused)]


def _flat(lines: Iterable[str]) -> list[str]:
    """One line each, whatever a name read from a file holds (no forged brief lines),
    served as the rest of the brief is."""
    return [" ".join(_served(line).split())[:300] for line in lines]  # served first: a CR
    # or a NEL would cut a token in two for split()


def brief_sections(report: Sections) -> list[tuple[str, list[str]]]:
    """(intro, item lines) for the brief, in the shape brief._brief_sections uses."""
    vk = f"vaultkeeper --vault {shlex.quote(report.vault)}"
    sections: list[tuple[Sequence[Any], str, Callable[[Any], str]]] = [
        (
            report.duplicates,
            "Possible duplicates (same kind, word-set similarity >= "
            f"{config.DUP_MIN_JACCARD}). If two say the same thing, merge them: "
            "counts add up, links follow, the dropped one goes to .trash/ only on a "
            "person's explicit yes at a terminal; from an agent's shell the request "
            "waits in a queue for `vaultkeeper review`:\n"
            f"  {vk} apply merge KEEP DROP --evidence RECEIPT",
            lambda p: f"- {p.target('a')} ~ {p.target('b')} ({p.similarity:.2f})",
        ),
        (
            report.stale,
            f"Stale: re-validate (active, not cited or read for {config.STALE_DAYS} days). "
            "Re-open the hold-out so the next re-check decides whether it is still true:\n"
            f"  {vk} apply revalidate PATH --reopen --evidence RECEIPT",
            lambda s: f"- {s.path}: {s.line_text().split(' -- ')[1]}",
        ),
        (
            report.skills_unused,
            f"Skills unused (promoted, not invoked for {config.SKILL_UNUSED_DAYS} days). "
            "A person decides whether to keep them; vaultkeeper never edits a skill:",
            lambda s: f"- {s.name}: {s.line_text().split(' -- ')[1]}",
        ),
    ]
    return [(intro, _flat(map(line, found))) for found, intro, line in sections if found]
