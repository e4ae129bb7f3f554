"""``status`` rows for the adopted auto-memory folders: one row a folder.

Files, how many were used in the last 90 days and how many never, and how far each of
Claude Code's caps is: past one, what falls beyond it is never recalled (warn).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.status.signals import OK, WARN, Signal


def native_signals(vault: Path, now: dt.datetime) -> list[Signal]:
    from vaultkeeper.native.folders import adopted

    folders = adopted(vault)
    if not folders:
        return []
    from vaultkeeper.native.review import review  # its regexes: only for a folder to review

    out: list[Signal] = []
    for folder in folders:
        r = review(vault, folder, now.date())
        caps = r.of("cap")
        shown = (
            f"{r.files} files, {r.used_recently} used in the last {config.NATIVE_RECENT_DAYS} "
            f"days, {r.never_used} never used; index {r.index_lines}/"
            f"{config.NATIVE_INDEX_MAX_LINES} lines, {r.index_bytes}/"
            f"{config.NATIVE_INDEX_MAX_BYTES} bytes"
        )
        bound = (
            f"<= {config.NATIVE_RECALL_MAX_FILES} files recalled, "
            f"<= {config.NATIVE_FILE_SHOWN_BYTES} bytes a file"
        )
        detail = f"{len(caps)} past a cap; see: vaultkeeper native review" if caps else ""
        out.append(
            Signal(
                f"native:{folder.project}",
                f"auto memory {folder.project}",
                r.files,
                shown,
                bound,
                WARN if caps else OK,
                detail,
            )
        )
    return out
