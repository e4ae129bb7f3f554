"""Blocks new on one side of a registry merge, set aside and put back whole (merge.py).

Two machines that each append a pattern between two syncs add different lines at the
same spot (the end of the file), and git's line merge then holds only the two headings
and descriptions in its conflict hunk, the shared counter lines below it: keeping both
sides leaves the first block with no counters. A block only one side has (not in the
base, not on the other side, not another block renamed) is therefore taken out of that
side before the text merge and put back afterwards, whole, right after the block that
preceded it on its side (the nearest one the merged file still has; else before the
first block, or at the end). Blocks put after the same block keep ours' order first,
then theirs'. A block new on both sides with the same text once its counters are
merged (two machines first citing the same auto memories, in another order) is taken
out of both and put back once, where ours has it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vaultkeeper.registry.blocks import RegistryBlock
from vaultkeeper.registry.mergeblocks import Key, Version, version
from vaultkeeper.store.model import split_lines


@dataclass(frozen=True)
class Fresh:
    """A block set aside: its lines, and the blocks above it on its side (nearest first)."""

    lines: tuple[str, ...]
    above: tuple[str, ...]  # the names of the side's blocks above it, nearest first


def set_aside(side: Version, keys: list[Key]) -> list[tuple[Key, Fresh]]:
    """Take the blocks ``keys`` of ``side`` out of its lines (with the blank lines that
    part each from the block above; the first block, those below it); return them in
    file order. ``side.lines`` is changed in place."""
    if not keys:
        return []
    chosen = {id(side.blocks[k]) for k in keys}
    key_of = {id(block): key for key, block in side.blocks.items()}
    ordered = list(side.blocks.values())
    out: list[tuple[Key, Fresh]] = []
    cut: list[tuple[int, int]] = []
    for i, block in enumerate(ordered):
        if id(block) not in chosen:
            continue
        above = tuple(x.name for x in reversed(ordered[:i]) if id(x) not in chosen)
        lines = side.lines[block.line - 1 : block.end_line]
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += _ending(lines[0])
        out.append((key_of[id(block)], Fresh(tuple(lines), above)))
        start, end = block.line - 1, block.end_line
        if i:  # the blank lines that part it from the block above go with it
            while start > 0 and not side.lines[start - 1].strip():
                start -= 1
        else:  # the first block: those below it (the text above is not a block's)
            while end < len(side.lines) and not side.lines[end].strip():
                end += 1
        cut.append((start, end))
    for start, end in reversed(cut):
        del side.lines[start:end]
    return out


def put_back(where: Path, label: str, text: str, fresh: list[Fresh]) -> str:
    """``text`` with the set-aside blocks put back (see the module docstring)."""
    if not fresh:
        return text
    lines = split_lines(text)
    blocks = list(version(where, label, text).blocks.values())
    by_name: dict[str, RegistryBlock] = {}
    for block in blocks:
        by_name.setdefault(block.name, block)
    groups: dict[int, list[str]] = {}  # insert before this 0-based line -> lines
    for item in fresh:
        anchor = next((by_name[n] for n in item.above if n in by_name), None)
        if anchor is not None:
            at, chunk = anchor.end_line, [_ending(item.lines[0]), *item.lines]
        elif blocks:
            at, chunk = blocks[0].line - 1, [*item.lines, _ending(item.lines[0])]
        else:
            at = len(lines)
            gap = [_ending(item.lines[0])] if lines and lines[-1].strip() else []
            chunk = [*gap, *item.lines]
        groups.setdefault(at, []).extend(chunk)
    if lines and not lines[-1].endswith("\n") and len(lines) in groups:
        lines[-1] += "\n"
    for at in sorted(groups, reverse=True):
        lines[at:at] = groups[at]
    return "".join(lines)


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"
