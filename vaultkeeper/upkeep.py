"""The report's extra sections (issue 13): possible duplicates, stale lessons, unused skills.

The spec's summary line and its three lists stay exactly as they are; these sections
follow them in the text report, in ``--json`` and the saved report, and in the brief.
``upkeep`` computes them from what the scanner already read (block heads and memory
files' keys), so no file is read twice.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.decay import (
    MemoryFacts,
    PromotedBlock,
    SkillUnused,
    Stale,
    Usage,
    load_usage,
    stale_entries,
    unused_skills,
)
from vaultkeeper.duplicates import BLOCK, MEMORY, DuplicatePair, Item, find_pairs, pairs_by_group

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself costs a scan more than it gives at run time
    from typing import Any, Protocol

    from vaultkeeper.cachedheads import Head
    from vaultkeeper.scancache import ScanCache

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


if TYPE_CHECKING:
    from typing import NamedTuple

    class Upkeep(NamedTuple):
        duplicates: tuple[DuplicatePair, ...]
        stale: tuple[Stale, ...]
        skills_unused: tuple[SkillUnused, ...]

else:  # a named tuple, not a frozen dataclass: a scan would import dataclasses for it
    from collections import namedtuple

    Upkeep = namedtuple("Upkeep", ("duplicates", "stale", "skills_unused"))


def duplicate_items(heads: Iterable[Head], facts: Iterable[MemoryFacts]) -> list[Item]:
    """Registry blocks (one group) and live memory files (a group per project)."""
    items = [Item(BLOCK, h.name, h.rel, h.line, f"{h.name} {h.sentence()}") for h in heads]
    for f in facts:
        if f.status == "archived":
            continue  # archived (or superseded) lessons are not served: nothing to merge
        project = f.rel.split("/", 2)[1]
        items.append(Item(f"{MEMORY}:{project}", f.name, f.rel, 1, f"{f.name} {f.description}"))
    return items


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
    if cache is None:
        pairs = find_pairs(duplicate_items(heads, facts))
    else:
        pairs = cached_pairs(heads, facts, cache)
    return Upkeep(
        duplicates=tuple(pairs),
        stale=tuple(stale_entries(facts, usage, today)),
        skills_unused=tuple(unused_skills(promoted(heads), usage, today)),
    )


def cached_pairs(
    heads: Sequence[Head], facts: Sequence[MemoryFacts], cache: ScanCache
) -> list[DuplicatePair]:
    """find_pairs of the scan's items, group by group, or the pairs kept for a group
    whose entries and settings are exactly as they were: when no file changed, without
    even building the items. Pairs never cross groups, so a group's pairs are its own."""
    settings = f"{config.DUP_MIN_JACCARD} {config.DUP_COMMON_MIN} {config.DUP_COMMON_SHARE}"
    kept = _kept_pairs(cache.unchanged_pairs(settings))
    if kept is not None:
        return kept
    import json

    from vaultkeeper.digests import blake2b_hex

    found: dict[str, list[DuplicatePair]] = {}
    keys: dict[str, str] = {}
    kept_words: dict[str, Any] = {}
    if len(heads) >= config.DUP_DELTA_MIN:  # the registry's items built for its pairs only
        texts = [f"{h.name} {h.sentence()}" for h in heads]
        blocks = heads

        def block(k: int) -> Item:
            h = blocks[k]
            return Item(BLOCK, h.name, h.rel, h.line, texts[k])

        found[BLOCK], kept_words[BLOCK] = _big(cache, settings, BLOCK, texts, block)
        keys[BLOCK], heads = "", ()
    groups: dict[str, list[Item]] = {}
    for item in duplicate_items(heads, facts):
        groups.setdefault(item.group, []).append(item)
    again: list[Item] = []  # the small groups to compare again, all in one pass
    for group, items in groups.items():
        if len(items) >= config.DUP_DELTA_MIN:
            found[group], kept_words[group] = _big(
                cache, settings, group, [i.text for i in items], items.__getitem__
            )
            keys[group] = ""
            continue
        # every field an item has (a moved line changes what the pairs say), joined by
        # two separators; as JSON (twice slower) if some value holds one, so that no two
        # lists of items can read the same
        raw = "\x1f".join([f"{i.name}\x1e{i.path}\x1e{i.line}\x1e{i.text}" for i in items])
        if raw.count("\x1e") != 3 * len(items) or raw.count("\x1f") != len(items) - 1:
            raw = json.dumps(items)  # each a named tuple: an array of its fields
        key = keys[group] = blake2b_hex(raw.encode("utf-8", "surrogatepass"), 16)
        pairs = _kept_pairs(cache.group_pairs(settings, group, key))
        if pairs is None:
            again += items
        else:
            found[group] = pairs
    if again:
        found.update(pairs_by_group(again))
    out: list[DuplicatePair] = []
    for group in keys:  # the registry first, then each project as duplicate_items has them
        pairs = found[group]
        dicts = [p.to_dict() for p in pairs]
        cache.keep_group(settings, group, keys[group], dicts, kept_words.get(group))
        out += pairs
    return out


def _big(
    cache: ScanCache, settings: str, group: str, texts: list[str], item_at: Any
) -> tuple[list[DuplicatePair], Any]:
    """A big group's pairs, from what was kept of its words (redone for the entries
    that changed: dupdelta.py); no digest of the whole group is needed first."""
    from vaultkeeper import dupdelta  # only for a big group, when some file changed

    delta = dupdelta.group_pairs(texts, item_at, cache.group_words(settings, group))
    return delta.pairs, delta.state


def _kept_pairs(kept: list[Any] | None) -> list[DuplicatePair] | None:
    if kept is None:
        return None
    try:
        return [DuplicatePair.from_dict(p) for p in kept]
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None  # not as this version writes them: look again


def promoted(heads: Iterable[Head]) -> list[PromotedBlock]:
    return [
        PromotedBlock(h.name, h.rel, h.line, h.promoted, h.last_used)
        for h in heads
        if h.promoted is not None
    ]


def _served(value: Any) -> Any:
    """Text read from the vault, as everything vaultkeeper serves: credentials masked,
    terminal controls stripped (vaultkeeper.secrets)."""
    from vaultkeeper.secrets import needs_serving, served

    if isinstance(value, str):
        return served(value) if needs_serving(value) else value
    if isinstance(value, dict):
        return {k: _served(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_served(v) for v in value]
    return value


def to_dict(report: Sections) -> dict[str, Any]:
    return {
        "duplicates": _dicts(report.duplicates),
        "stale": _dicts(report.stale),
        "skills_unused": _dicts(report.skills_unused),
    }


def _dicts(found: Sequence[DuplicatePair] | Sequence[Stale] | Sequence[SkillUnused]) -> list[Any]:
    """Each finding's dict, served; one check for them all, as report.one_lines does."""
    from vaultkeeper.secrets import needs_serving

    dicts = [f.to_dict() for f in found]
    if needs_serving("".join(t for f in found for t in f.texts())):
        return [_served(d) for d in dicts]
    return dicts


def from_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    """Report keyword arguments; a report saved before these sections existed has none."""
    return {
        "duplicates": tuple(DuplicatePair.from_dict(d) for d in data.get("duplicates") or ()),
        "stale": tuple(Stale.from_dict(d) for d in data.get("stale") or ()),
        "skills_unused": tuple(SkillUnused.from_dict(d) for d in data.get("skills_unused") or ()),
    }


def text_lines(report: Sections) -> list[str]:
    """One line per finding, after the spec's lists (duplicates, stale, skills unused)."""
    return [
        *(p.line_text() for p in report.duplicates),
        *(s.line_text() for s in report.stale),
        *(s.line_text() for s in report.skills_unused),
    ]


def _flat(lines: Iterable[str]) -> list[str]:
    """One line each, whatever a name read from a file holds (no forged brief lines),
    served as the rest of the brief is."""
    return [_served(" ".join(line.split())[:300]) for line in lines]


def brief_sections(report: Sections) -> list[tuple[str, list[str]]]:
    """(intro, item lines) for the brief, in the shape report._brief_sections uses."""
    vk = f"vaultkeeper --vault {shlex.quote(report.vault)}"
    out: list[tuple[str, list[str]]] = []
    if report.duplicates:
        out.append(
            (
                "Possible duplicates (same kind, word-set similarity >= "
                f"{config.DUP_MIN_JACCARD}). If two say the same thing, merge them: "
                "counts add up, links follow, the dropped one goes to .trash/:\n"
                f"  {vk} apply merge KEEP DROP --evidence RECEIPT",
                _flat(
                    f"- {p.target('a')} ~ {p.target('b')} ({p.similarity:.2f})"
                    for p in report.duplicates
                ),
            )
        )
    if report.stale:
        out.append(
            (
                f"Stale: re-validate (active, not cited or read for {config.STALE_DAYS} days). "
                "Re-open the hold-out so the next re-check decides whether it is still true:\n"
                f"  {vk} apply revalidate PATH --reopen --evidence RECEIPT",
                _flat(f"- {s.path}: {s.line_text().split(' -- ')[1]}" for s in report.stale),
            )
        )
    if report.skills_unused:
        out.append(
            (
                f"Skills unused (promoted, not invoked for {config.SKILL_UNUSED_DAYS} days). "
                "A person decides whether to keep them; vaultkeeper never edits a skill:",
                _flat(
                    f"- {s.name}: {s.line_text().split(' -- ')[1]}" for s in report.skills_unused
                ),
            )
        )
    return out
