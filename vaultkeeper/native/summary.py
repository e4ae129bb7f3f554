"""The review of every adopted folder in one line, for the session-start brief.

A scan writes it to ``state/native-review.json`` (reading the adopted folders there,
at session end, where nobody waits), so the brief reads one small file instead of
every memory. It names what needs a decision, never a memory's content: MEMORY.md
already loads that, and the brief does not serve it twice.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.vault import own_dir

_KINDS = ("promote", "prune", "cap", "problem", "secret", "duplicate")


def _path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.NATIVE_SUMMARY_FILE


def save(vault: Path, today: dt.date) -> dict[str, int] | None:
    """Count each kind of finding over the adopted folders; None when none is adopted."""
    from vaultkeeper.native.folders import adopted  # the brief reads only the line below
    from vaultkeeper.native.review import review
    from vaultkeeper.store.fsio import atomic_write

    folders = adopted(vault)
    if not folders:
        return None
    counts = dict.fromkeys(_KINDS, 0)
    for folder in folders:
        for finding in review(vault, folder, today).findings:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
    body = {"date": today.isoformat(), "folders": len(folders), "counts": counts}
    atomic_write(_path(vault), json.dumps(body) + "\n", fsync_dir=False)
    return counts


def line(vault: Path) -> str | None:
    """``- auto memory: 1 to promote, ...`` or None (nothing adopted, nothing to do)."""
    try:
        data = json.loads(_path(vault).read_text(encoding="utf-8"))
        counts = {k: int(v) for k, v in data["counts"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    words = {
        "promote": "to promote",
        "prune": "to prune",
        "cap": "past the recall's caps",
        "problem": "problems",
        "secret": "credentials",
        "duplicate": "possible duplicates",
    }
    said = [f"{counts[k]} {words[k]}" for k in _KINDS if counts.get(k)]
    if not said:
        return None
    return f"- Claude Code auto memory: {', '.join(said)} (vaultkeeper native review)"


def after_scan(vault: Path, today: dt.date) -> None:
    """``save`` at the end of a scan, never the scan's failure (the scan calls it only for
    a vault that adopted an auto memory: it has ``state/`` NATIVE_STATE_FILE)."""
    import contextlib

    from vaultkeeper.errors import VaultkeeperError

    with contextlib.suppress(VaultkeeperError, OSError):
        save(vault, today)
