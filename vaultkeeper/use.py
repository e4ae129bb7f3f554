"""``use NAME``: record one reuse of a registry pattern (count + 1, last used = today)."""

from __future__ import annotations

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
    note: str | None = None  # why the saved report could not follow, if it could not


def record_use(vault: Path, name: str, today: dt.date, now: dt.datetime | None = None) -> UseResult:
    """Count one reuse: the count line and the last-used line change, nothing else.

    A block without a last-used line gets one, right after its count line. A block
    whose count can't be read is refused with its ``path:line``; nothing is written.
    """
    with writer_lock(vault):
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
        new_count = block.count + 1
        if len(str(new_count)) > config.COUNT_MAX_DIGITS:  # the scanner could not read it back
            raise VaultkeeperError(
                f"{block.rel}:{block.count_line}: ### {block.name}: success count "
                f"{new_count} would be too large (at most {config.COUNT_MAX_DIGITS} digits)"
            )
        # a registry file that is a symlink leading out of the vault is not ours to write
        path = resolve_inside(vault, block.path)
        text, bom = read_for_edit(block.path, block.rel)
        lines = split_lines(text)
        stamp = today.isoformat()
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
        # a count that reaches the promote threshold (or leaves 0) changes the block's
        # standing: the saved report follows, as it does after an apply
        from vaultkeeper.apply.resync import resync

        when = now or dt.datetime.combine(today, dt.time(), dt.timezone.utc)
        note = resync(vault, [], when, paths=[block.rel])
        return UseResult(block.name, block.rel, block.count, new_count, stamp, note)
