"""``status``'s merge signal: what a git merge left in the files vaultkeeper writes.

Those files travel between machines through git (docs/git-sync.md): the registry files,
the index files, the skills ``apply promote`` writes. A merge a person finished by hand
may leave conflict markers in one (VK106), or a registry block without its counter
lines (VK401), which the scanner can then never count, promote or prune. Read now, not
from the last lint's summary: a ``git pull`` changes them without any vaultkeeper
command running. Links are not followed (nothing outside the vault is read).
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply.notemerge import SKILL_FILE
from vaultkeeper.lint.conflicts import check_conflicts
from vaultkeeper.registry.blocks import parse_blocks, registry_files
from vaultkeeper.status.signals import FAIL, OK, Signal
from vaultkeeper.store.links import code_lines, find_fences
from vaultkeeper.store.model import ParseError, decode, read_regular, split_lines

_SEE = "see: vaultkeeper lint --select VK106,VK401"


def _files(vault: Path) -> list[tuple[Path, str]]:
    """The files to check, none reached through a link leading out of the vault."""
    subs = f"{config.SUBINDEX_PREFIX}*.md"  # in _index/, or at the root from older versions
    found = [vault / config.INDEX_FILE, *sorted(vault.glob(subs))]
    folder = vault / config.SUBINDEX_DIR
    if folder.is_dir() and not folder.is_symlink():
        found += sorted(folder.glob(subs))
    found += registry_files(vault)
    skills = vault / config.SKILLS_DIR
    if skills.is_dir() and not skills.is_symlink():
        found += sorted(skills.glob(f"*/{SKILL_FILE}"))
    root = os.path.realpath(vault)
    inside = [p for p in found if os.path.realpath(p).startswith(root + os.sep)]
    return [(p, p.relative_to(vault).as_posix()) for p in inside]


def leftovers(vault: Path) -> list[str]:
    """``path:line: what`` for each conflict hunk and each block without counters."""
    out: list[str] = []
    for path, rel in _files(vault):
        try:
            text = decode(read_regular(path, follow=False))
        except ParseError:
            continue  # gone, a link, unreadable: lint's VK001 says so
        lines = split_lines(text)
        if "\n=======" in text:
            code = code_lines(find_fences(lines, 1), len(lines))
            out += [f"{f.path}:{f.line}: {f.message}" for f in check_conflicts(rel, lines, code)]
        if rel.startswith(config.PATTERNS_DIR + "/"):
            for block in parse_blocks(path, rel, text):
                if block.count_raw is None and block.last_used_raw is None:
                    out.append(f"{rel}:{block.line}: ### {block.name}: no counter lines")
    return out


def merge_signal(vault: Path) -> Signal:
    found = leftovers(vault)
    if not found:
        return Signal("merge_leftovers", "merge leftovers", 0, "0", "0", OK)
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    detail = f"{found[0]}{more}; {_SEE}"
    return Signal(
        "merge_leftovers", "merge leftovers", len(found), str(len(found)), "0", FAIL, detail
    )
