"""``use NAME``: record one reuse of a registry pattern (count + 1, last used = today)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pathlib import Path

from vaultkeeper import config
from vaultkeeper.edit import insert_line_after, replace_counter_value, replace_line
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.fsio import atomic_write, writer_lock
from vaultkeeper.model import decode
from vaultkeeper.registry import find_block


@dataclass(frozen=True)
class UseResult:
    name: str
    path: str
    count_before: int
    count_after: int
    last_used: str


def record_use(vault: Path, name: str, today: dt.date) -> UseResult:
    with writer_lock(vault):
        block = find_block(vault, name)
        if block.count is None:
            where = f"{block.rel}:{block.count_line or block.line}"
            raise VaultkeeperError(
                f"{where}: ### {name} has no readable success count ({block.count_raw!r}); fix it first"
            )
        text = decode(block.path.read_bytes())
        lines = text.splitlines(keepends=True)
        assert block.count_line is not None
        new_count = block.count + 1
        text = replace_line(text, block.count_line, replace_counter_value(lines[block.count_line - 1], str(new_count)))
        if block.last_used_line is not None:
            text = replace_line(
                text, block.last_used_line, replace_counter_value(lines[block.last_used_line - 1], today.isoformat())
            )
        else:
            text = insert_line_after(text, block.count_line, f"{config.LAST_USED_LABEL} {today.isoformat()}")
        atomic_write(block.path, text)
        return UseResult(name, block.rel, block.count, new_count, today.isoformat())
