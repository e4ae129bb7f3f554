"""``use NAME``: record one reuse of a registry pattern (count + 1, last used = today)."""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.edit import insert_line_after, read_for_edit, replace_counter_value, replace_line
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.fsio import atomic_write, writer_lock
from vaultkeeper.model import split_lines
from vaultkeeper.registry import count_reason, find_block
from vaultkeeper.vault import resolve_inside


@dataclass(frozen=True)
class UseResult:
    name: str
    path: str
    count_before: int
    count_after: int
    last_used: str


def record_use(
    vault: Path,
    name: str,
    today: dt.date,
    *,
    times: int = 1,
    never_back: bool = False,
    dry_run: bool = False,
) -> UseResult:
    """Count reuse: the count line and the last-used line change, nothing else.

    A block without a last-used line gets one, right after its count line. A block
    whose count can't be read is refused with its ``path:line``; nothing is written.
    ``times`` uses are counted at once; with ``never_back`` a later last-used date
    already in the block stays (uses learned from old transcripts); ``dry_run``
    computes the result and writes nothing.
    """
    # a dry run writes nothing at all, not even the lock file
    with contextlib.nullcontext() if dry_run else writer_lock(vault):
        block = find_block(vault, name)
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
        # a registry file that is a symlink leading out of the vault is not ours to write
        path = resolve_inside(vault, block.path)
        text, bom = read_for_edit(block.path, block.rel)
        stamp = today.isoformat()
        if never_back and block.last_used is not None and block.last_used > today:
            stamp = block.last_used.isoformat()
        if dry_run:
            return UseResult(block.name, block.rel, block.count, new_count, stamp)
        lines = split_lines(text)
        text = replace_line(
            text,
            block.count_line,
            replace_counter_value(lines[block.count_line - 1], str(new_count)),
        )
        if block.last_used_line is not None:
            old = lines[block.last_used_line - 1]
            text = replace_line(text, block.last_used_line, replace_counter_value(old, stamp))
        else:
            text = insert_line_after(text, block.count_line, f"{config.LAST_USED_LABEL} {stamp}")
        atomic_write(path, bom + text)
        return UseResult(block.name, block.rel, block.count, new_count, stamp)
