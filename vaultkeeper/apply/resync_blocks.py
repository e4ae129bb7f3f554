"""The saved report's block pairs and unused skills after an edit that changed no block's words.

``use`` (and an ingest of uses) moves a block's count and last-used lines; nothing the
duplicates pass compares (each block's name and first sentence) changes, nor does any
block's **promoted:** line. Re-reading the whole registry and comparing every block
again (a second at 50,000 entries) then gives the report's own pairs back, with the
lines of the blocks below an inserted last-used line moved. So, given each written
registry file's text before the edit:

- if every block of those files has the same name and first sentence, in the same
  order, as before, the report's block pairs stay, their lines moved with their
  blocks; and the unused skills of those files are worked out again from the files,
  those of the other files only checked against the usage log (which a use moves on);
- otherwise (a block added, gone, renamed or reworded, a line the report names that
  the old text does not have) this gives None, and the caller compares them all again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry import memo
from vaultkeeper.registry.blocks import load_heads, parse_heads, registry_files
from vaultkeeper.store.vault import rel
from vaultkeeper.upkeep.decay import SkillUnused, Usage, unused_skills
from vaultkeeper.upkeep.duplicates import BLOCK, DuplicatePair
from vaultkeeper.upkeep.sections import promoted

Moved = dict[str, dict[int, int]]  # registry file -> old heading line -> new one


def unchanged_words(
    vault: Path,
    pairs: list[DuplicatePair],
    skills: list[SkillUnused],
    before: Mapping[str, str],
    usage: Usage,
    today: dt.date,
) -> tuple[list[DuplicatePair], list[SkillUnused]] | None:
    """``pairs`` and ``skills`` (the saved report's) made true after edits of the files in
    ``before`` (vault-relative path -> its text before), or None (see the module doc)."""
    moved: Moved = {}
    fresh: dict[str, list[SkillUnused]] = {}
    for path, old_text in before.items():
        full = vault / path
        old = memo.recall(full, old_text) or parse_heads(full, path, old_text)
        new, problems = load_heads(vault, [full])
        if problems or [(h.name, h.sentence()) for h in old] != [
            (h.name, h.sentence()) for h in new
        ]:
            return None
        moved[path] = {a.line: b.line for a, b in zip(old, new, strict=True)}
        fresh[path] = unused_skills(promoted(new), usage, today)
    out = [_moved(p, moved) for p in pairs]
    if any(p is None for p in out):
        return None  # the report names a block line the old text does not have
    return [p for p in out if p is not None], _skills(vault, skills, fresh, usage, today)


def _moved(pair: DuplicatePair, moved: Moved) -> DuplicatePair | None:
    if pair.kind != BLOCK:
        return pair
    a_line, b_line = pair.a_line, pair.b_line
    if pair.a_path in moved:
        a_line = moved[pair.a_path].get(a_line, 0)
    if pair.b_path in moved:
        b_line = moved[pair.b_path].get(b_line, 0)
    if not (a_line and b_line):
        return None
    return pair._replace(a_line=a_line, b_line=b_line)


def _skills(
    vault: Path,
    kept: list[SkillUnused],
    fresh: dict[str, list[SkillUnused]],
    usage: Usage,
    today: dt.date,
) -> list[SkillUnused]:
    """The written files' unused skills from the files; the others' as the report has
    them, each checked against the usage log; in registry order, as unused_skills
    gives them."""
    cut = today - dt.timedelta(days=config.SKILL_UNUSED_DAYS)
    by_file: dict[str, list[SkillUnused]] = {path: [] for path in fresh}
    for skill in kept:
        if skill.path in fresh:
            continue
        day, source = dt.date.fromisoformat(skill.last_seen), skill.source
        seen = usage.last_seen.get(skill.name)
        if seen is not None and seen >= day:  # the log comes first of equal dates
            day, source = seen, "uses log"
        if day < cut:
            idle = (today - day).days
            by_file.setdefault(skill.path, []).append(
                skill._replace(last_seen=day.isoformat(), source=source, idle_days=idle)
            )
    by_file.update(fresh)
    order = [rel(vault, p) for p in registry_files(vault)]
    return [s for path in order for s in by_file.get(path, ())]
