"""Finding one registry block by name, as the applier and ``use`` do: the one block, or
a one-line reason (unknown, a near miss in case, duplicated, an unreadable file)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.blocks import RegistryBlock, load_heads, load_registry
from vaultkeeper.store.model import Problem

# Up to this many names, only the registry files whose text holds one are parsed; past
# it, looking for each in every file costs about what parsing them all does.
FEW_NAMES = 16


def find_block(vault: Path, name: str) -> RegistryBlock:
    """The one block called ``name``; unknown or duplicated names are errors."""
    blocks, problems = named_blocks(vault, [name])
    if not blocks:  # the hint ("did you mean") looks at every block
        blocks, problems = load_registry(vault)
    return pick_block(name, [b for b in blocks if b.name == name], blocks, problems)


def named_blocks(vault: Path, names: Collection[str]) -> tuple[list[RegistryBlock], list[Problem]]:
    """The blocks called one of ``names``, and the registry files that could not be read.
    A file whose text holds none of the names has no such block (its heading would hold
    it), so it is not parsed."""
    if not names:
        return [], []
    mentioning = tuple(names) if len(names) <= FEW_NAMES else ()
    heads, problems = load_heads(vault, mentioning=mentioning)
    return [h.block() for h in heads if h.name in names], problems


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
