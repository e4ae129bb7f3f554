"""``apply promote`` of a pattern already promoted: a new receipt joins its skill's Evidence.

The skill is found where the block's ``**promoted:**`` line says it went (a
``[[skills/NAME/SKILL]]`` link in the vault, or a path in backticks elsewhere), so a
later ``--skills-dir`` cannot send the receipt to another file. The edit is one added
line in the ``## Evidence`` section (made if missing); nothing else in the skill or the
registry changes, and a receipt already listed is ``silence`` (already applied).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from vaultkeeper.apply.decision import ACT, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, check_index, read_source, unified_diff, write
from vaultkeeper.errors import GateRefused
from vaultkeeper.registry.blocks import RegistryBlock
from vaultkeeper.store.model import file_hash
from vaultkeeper.store.vault import rel, resolve_inside

_LINK = re.compile(r"->\s*\[\[(?P<link>[^\]|#]+)(?:[|#][^\]]*)?\]\]")
_PATH = re.compile(r"->\s*`(?P<path>[^`]+)`")
SKILL_FILE = "SKILL.md"  # the one name promote writes (promote.skill_target)


def promoted_skill(vault: Path, block: RegistryBlock) -> tuple[Path, str] | None:
    """(the skill file, how messages name it) from the block's ``**promoted:**`` line.

    That line is vault text an agent may write: only a ``SKILL.md`` it names is taken
    (promote writes no other name), never another file inside or outside the vault."""
    text = block.promoted or ""
    link = _LINK.search(text)
    if link:
        path = resolve_inside(vault, link.group("link").strip() + ".md")
        return (path, rel(vault.resolve(), path)) if path.name == SKILL_FILE else None
    found = _PATH.search(text)
    if found:
        path = Path(found.group("path")).expanduser()
        return (path, str(path)) if path.is_absolute() and path.name == SKILL_FILE else None
    return None


def add_receipt(
    vault: Path,
    decision: Decision,
    block: RegistryBlock,
    skill: tuple[Path, str],
    merge: Callable[[str], str],
    dry_run: bool,
) -> Outcome:
    """The skill with the receipt added (``merge`` adds it to a skill's text), journaled
    by the caller; refused when the skill the registry names is gone."""
    path, label = skill
    where = f"{block.rel}:{block.promoted_line}"
    if not path.is_file():
        raise GateRefused(
            f"{where}: promoted to {label}, which is not there; nothing changed "
            "(restore the skill, or take the **promoted:** line out to promote it again)"
        )
    old = read_source(path, label)
    merged = merge(old.text)
    change = Change(path, label, old.text, merged, old.bom)
    if not dry_run:
        if vault.resolve() in path.parents:
            check_index(vault)
        write(change)
    return outcome_for(
        decision,
        ACT,
        f"added the receipt to the Evidence of {label} (promoted {_day(block)}; "
        "nothing else changed)",
        hash_before=file_hash(old.text),
        hash_after=file_hash(merged),
        extra={"skill": label, "count": block.count, "path": block.rel},
        diff=unified_diff([change]) if dry_run else "",
        dry_run=dry_run,
    )


def _day(block: RegistryBlock) -> str:
    return (block.promoted or "").split(" ", 1)[0] or "before"
