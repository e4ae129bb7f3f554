"""The saved report's duplicates and decay sections, kept true after an apply.

resync.py re-classifies the files a decision changed; this does the same for the upkeep
sections: a merge takes its pair off the list, a re-opened lesson stops being stale, a
restore brings them back, without waiting for the next scan.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply.resync_blocks import unchanged_words
from vaultkeeper.registry.blocks import load_heads
from vaultkeeper.report.candidates import Report
from vaultkeeper.scan.memory import held_out_candidates
from vaultkeeper.store.model import is_memory_path
from vaultkeeper.store.vault import walk_files
from vaultkeeper.upkeep.decay import (
    MemoryFacts,
    Usage,
    load_usage,
    stale_entries,
    unused_skills,
)
from vaultkeeper.upkeep.duplicates import BLOCK, MEMORY, capped, duplicate_items, find_pairs
from vaultkeeper.upkeep.sections import promoted


def refreshed(
    vault: Path,
    report: Report,
    paths: Iterable[str],
    today: dt.date,
    before: Mapping[str, str] | None = None,
    usage: Usage | None = None,
) -> dict[str, Any]:
    """The three sections made true again after an apply changed ``paths`` (vault-
    relative): the block pairs and unused skills when a registry file changed, and for
    each changed project's memory files that project's pairs and their stale entries.
    Report keyword arguments; {} when no file the passes read changed.

    ``before``, when the caller knows it: the registry files the command changed, each
    with its text before (``use``), every other one as it was ({} after a decision
    that changed no entry). An edit that left every block's words as they were then
    keeps the report's block pairs (resync_blocks.py) instead of comparing them all.
    ``usage``: what the usage log says, when the caller read it already (``use``)."""
    paths = set(paths)
    registry = any(p.startswith(config.PATTERNS_DIR + "/") for p in paths)
    projects = sorted({p.split("/")[1] for p in paths if is_memory_path(p)})
    if not registry and not projects:
        return {}
    usage = load_usage(vault) if usage is None else usage
    pairs, skills = list(report.duplicates), list(report.skills_unused)
    stale = [s for s in report.stale if s.path not in paths]
    quick = None
    if registry and before is not None:
        quick = unchanged_words(vault, pairs, skills, before, usage, today)
    if quick is not None:
        pairs, skills = quick
    elif registry:
        heads, _ = load_heads(vault)
        pairs = [p for p in pairs if p.kind != BLOCK] + find_pairs(duplicate_items(heads, []))
        skills = unused_skills(promoted(heads), usage, today)
    for project in projects:
        folder = vault / config.PROJECTS_DIR / project / config.MEMORY_SUBDIR
        files = sorted(walk_files(vault, folder)) if folder.is_dir() else []
        facts: list[MemoryFacts] = []
        held_out_candidates(vault, today, [], [f for f in files if f.endswith(".md")], facts)
        group = f"{config.PROJECTS_DIR}/{project}/"
        pairs = [p for p in pairs if not (p.kind == MEMORY and p.a_path.startswith(group))]
        pairs += find_pairs(duplicate_items([], facts))
        stale += stale_entries([f for f in facts if f.rel in paths], usage, today)
    return {
        "duplicates": tuple(capped(pairs)),
        "stale": tuple(stale),
        "skills_unused": tuple(skills),
    }
