"""The registry's counters as one-line edits: count + n and last used, per block.

What every counted reuse ends in (``use NAME``, ``ingest``, MCP's ``cite``: all through
learn/count.py, which journals and logs it): per block its count line and its last-used
line change and nothing else, the registry read once and each file written once, under
the writer lock, with the index's rows following the counter edit (index/rows.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.index import rows as index_rows
from vaultkeeper.registry.blocks import (
    RegistryBlock,
    count_reason,
    named_blocks,
    pick_block,
)
from vaultkeeper.store.edit import add_line_after, read_for_edit, replace_counter_value, set_line
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.model import split_lines
from vaultkeeper.store.vault import resolve_inside


@dataclass(frozen=True)
class UseResult:
    name: str
    path: str
    count_before: int
    count_after: int
    last_used: str
    note: str | None = None  # always None now (the report follows by itself); kept in --json


@dataclass(frozen=True)
class UsePlan:
    """What record_uses would write: per name its result, or why it is refused, and the
    edits per registry file."""

    done: dict[str, UseResult]
    refused: dict[str, VaultkeeperError]
    edits: dict[Path, list[tuple[RegistryBlock, int, str]]]


def record_uses(
    vault: Path,
    uses: Mapping[str, tuple[int, dt.date]],
    *,
    never_back: bool = False,
) -> tuple[dict[str, UseResult], dict[str, VaultkeeperError]]:
    """Count reuse (name -> (times, day)): per block, the count line and the last-used
    line change, nothing else (a block without a last-used line gets one after its count
    line); with ``never_back`` a later last-used date already there stays. The registry
    is read once and each file written once. Returns what was counted and, per name, why
    not (an unknown name, an unreadable count, ...); a refused name changes nothing."""
    with writer_lock(vault):
        plan = plan_uses(vault, uses, never_back=never_back)
        return write_uses(vault, plan), plan.refused


def plan_uses(
    vault: Path, uses: Mapping[str, tuple[int, dt.date]], *, never_back: bool = False
) -> UsePlan:
    """record_uses without writing (the caller holds the writer lock, to write it next)."""
    blocks, problems = named_blocks(vault, uses.keys())
    done: dict[str, UseResult] = {}
    refused: dict[str, VaultkeeperError] = {}
    edits: dict[Path, list[tuple[RegistryBlock, int, str]]] = {}
    for name, (times, day) in uses.items():
        try:
            block = pick_block(name, blocks, problems)
            new_count = _new_count(block, times)
            resolve_inside(vault, block.path)  # a registry symlinked out is not ours
        except VaultkeeperError as exc:
            refused[name] = exc
            continue
        stamp = day.isoformat()
        if never_back and block.last_used is not None and block.last_used > day:
            stamp = block.last_used.isoformat()
        edits.setdefault(block.path, []).append((block, new_count, stamp))
        done[name] = UseResult(block.name, block.rel, block.count or 0, new_count, stamp)
    return UsePlan(done, refused, edits)


def write_uses(vault: Path, plan: UsePlan) -> dict[str, UseResult]:
    """Write ``plan``'s edits (under the writer lock)."""
    done = plan.done
    for path, changes in plan.edits.items():
        rel = changes[0][0].rel
        was = index_rows.stat_key(str(path))  # the file's key as read: the index's rows
        text, bom = read_for_edit(path, rel)
        if index_rows.stat_key(str(path)) != was:
            was = None  # changed as it was read: the rows vouch for nothing
        lines = split_lines(text)  # once per file, however many of its counters change
        # from the bottom up, so an inserted last-used line moves no later edit
        for block, new_count, stamp in sorted(changes, key=lambda c: -c[0].line):
            _edit(lines, block, new_count, stamp)
        data = (bom + "".join(lines)).encode("utf-8")
        atomic_write(resolve_inside(vault, path), data)
        # only counter lines changed: the index's stamp follows (no regeneration next)
        index_rows.follow_counters(vault, rel, was, data, (bom + text).encode("utf-8"))
    return done


def _new_count(block: RegistryBlock, times: int) -> int:
    if block.count_raw is None or block.count_line is None:
        raise VaultkeeperError(
            f"{block.rel}:{block.line}: ### {block.name} has no {config.COUNT_LABEL} line; "
            "add one (e.g. **success count:** 0) first"
        )
    if block.count is None:
        raise VaultkeeperError(
            f"{block.rel}:{block.count_line}: ### {block.name}: "
            f"{count_reason(block.count_raw)}; fix it first"
        )
    new_count = block.count + times
    if len(str(new_count)) > config.COUNT_MAX_DIGITS:  # the scanner could not read it back
        raise VaultkeeperError(
            f"{block.rel}:{block.count_line}: ### {block.name}: success count "
            f"{new_count} would be too large (at most {config.COUNT_MAX_DIGITS} digits)"
        )
    return new_count


def _edit(lines: list[str], block: RegistryBlock, new_count: int, stamp: str) -> None:
    """The block's count and last-used lines in ``lines`` (the file's), in place."""
    assert block.count_line is not None  # checked by _new_count
    count = replace_counter_value(lines[block.count_line - 1], str(new_count))
    set_line(lines, block.count_line, count)
    if block.last_used_line is not None:
        old = lines[block.last_used_line - 1]
        set_line(lines, block.last_used_line, replace_counter_value(old, stamp))
    else:
        add_line_after(lines, block.count_line, f"{config.LAST_USED_LABEL} {stamp}")
