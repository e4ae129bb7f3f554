"""Which block is which across the three versions of a registry merge (merge.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vaultkeeper.registry.blocks import RegistryBlock, is_counter_line, parse_blocks
from vaultkeeper.store.model import split_lines

Key = tuple[str, int]  # a block's name and which block of that name (0 = the first)


@dataclass(frozen=True)
class Version:
    lines: list[str]
    blocks: dict[Key, RegistryBlock]


def version(where: Path, label: str, text: str) -> Version:
    seen: dict[str, int] = {}
    blocks: dict[Key, RegistryBlock] = {}
    for block in parse_blocks(where, label, text):
        n = seen.get(block.name, 0)
        seen[block.name] = n + 1
        blocks[(block.name, n)] = block
    return Version(split_lines(text), blocks)


def aligned(base: Version, side: Version) -> Version:
    """``side`` with its blocks keyed as base's: where a name has several blocks, a side's
    block takes the key of the base block with its body (a side that deleted the first
    of two ``### foo`` keeps the second's key), the rest the remaining keys in order."""
    names = {name for name, n in base.blocks if n} | {name for name, n in side.blocks if n}
    if not names:
        return side
    blocks: dict[Key, RegistryBlock] = {}
    for name in dict.fromkeys(name for name, _ in side.blocks):
        mine = [x for (n, _), x in side.blocks.items() if n == name]
        if name not in names:
            blocks[(name, 0)] = mine[0]
            continue
        free = [key for key in base.blocks if key[0] == name]
        bodies = {key: _body(base.blocks[key]) for key in free}
        left: list[RegistryBlock] = []
        for block in mine:
            key = next((k for k in free if bodies[k] == _body(block)), None)
            if key is None:
                left.append(block)
            else:
                free.remove(key)
                blocks[key] = block
        extra = max((n for m, n in base.blocks if m == name), default=-1) + 1
        for block in left:
            key = free.pop(0) if free else (name, extra)
            extra += key == (name, extra)
            blocks[key] = block
    order = {id(x): i for i, x in enumerate(side.blocks.values())}
    return Version(side.lines, dict(sorted(blocks.items(), key=lambda kv: order[id(kv[1])])))


def _body(block: RegistryBlock) -> list[str]:
    """A block's lines without its heading and counter lines (blank lines dropped)."""
    lines = split_lines(block.text)[1:]
    return [x.rstrip() for x in lines if x.strip() and not is_counter_line(x)]


def renamed(
    base: Version, base_block: RegistryBlock, side: Version, fresh: list[RegistryBlock]
) -> RegistryBlock | None:
    """The block among a side's new ones (``fresh``) that is ``base_block`` renamed, if
    one is: the one new block with its body, a body no other base block has, in its
    place (after the same block), its counters not below the base's. A block that was
    deleted and an unrelated new one that happens to share its body are two blocks."""
    body = _body(base_block)
    same = [x for x in fresh if _body(x) == body]
    if not body or len(same) != 1 or sum(_body(x) == body for x in base.blocks.values()) > 1:
        return None
    block = same[0]
    if (block.count or 0) < (base_block.count or 0) or (
        base_block.last_used is not None
        and (block.last_used is None or block.last_used < base_block.last_used)
    ):
        return None
    return block if _before(base, base_block) == _before(side, block) else None


def _before(version: Version, block: RegistryBlock) -> str | None:
    """The name of the block just above ``block`` in ``version`` (None: it is first)."""
    above = [x.name for x in version.blocks.values() if x.line < block.line]
    return above[-1] if above else None
