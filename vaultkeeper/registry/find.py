"""Finding one registry block by name, as the applier and ``use`` do: the one block, or
a one-line reason (unknown, a near miss in case, duplicated, an unreadable file)."""

from __future__ import annotations

from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.blocks import RegistryBlock, load_registry
from vaultkeeper.store.model import Problem


def find_block(vault: Path, name: str) -> RegistryBlock:
    """The one block called ``name``; unknown or duplicated names are errors."""
    blocks, problems = load_registry(vault)
    return pick_block(name, [b for b in blocks if b.name == name], blocks, problems)


def pick_block(
    name: str, matches: list[RegistryBlock], blocks: list[RegistryBlock], problems: list[Problem]
) -> RegistryBlock:
    """find_block's verdict on the blocks called ``name``: the one, or why not."""
    from vaultkeeper.errors import NotFoundError, VaultkeeperError

    if not matches:
        hint = ""
        similar = [b for b in blocks if b.name.lower() == name.lower()]
        if similar:
            hint = f" (did you mean {similar[0].name!r} at {similar[0].rel}:{similar[0].line}?)"
        elif problems:
            hint = f" ({len(problems)} registry file(s) could not be read; first: {problems[0]})"
        raise NotFoundError(f"{name}: no ### {name} block in {config.PATTERNS_DIR}/{hint}")
    if len(matches) > 1:
        where = ", ".join(f"{b.rel}:{b.line}" for b in matches)
        raise VaultkeeperError(f"{name}: {len(matches)} registry blocks share this name ({where})")
    return matches[0]
