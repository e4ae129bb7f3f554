"""Rows written over the recall table between two scans (state/recall-lookup.over.json).

``new`` and ``apply`` change lessons between scans: an archived or superseded lesson must
not be served after the apply that archived it, and a lesson just written should be
served before the next scan. Rebuilding the table after every write would cost the walk
of the vault; instead each write puts the files it touched here as rows: the file's
record now (scan.lookup.record) or null when it is no longer a lesson to serve, with the
time the row was written. The hook (vaultkeeper.recall.lookup) reads this small file
after the table: a row hides the table's line for its path and, when it has a record,
takes its place. A row older than the table's ``built_ns`` is ignored (the table was
built from a later look at that file), and the next build drops those rows.

Written (scan.lookuprows.refresh, and a scan that found few lessons changed: scan.lookup.build)
under the vault's writer lock (store.fsio.writer_lock),
atomically.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.fsio import atomic_write, writer_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def over_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.RECALL_LOOKUP_OVER_FILE


def load(vault: Path) -> dict[str, Any]:
    """path -> [written_ns, record or None]; {} when absent or unreadable."""
    try:
        data = json.loads(over_path(vault).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != config.RECALL_LOOKUP_VERSION:
        return {}
    rows = data.get("rows")
    return rows if isinstance(rows, dict) else {}


def _save(vault: Path, rows: dict[str, Any]) -> None:
    if not rows:
        with contextlib.suppress(OSError):
            over_path(vault).unlink()
        return
    text = json.dumps({"version": config.RECALL_LOOKUP_VERSION, "rows": rows}, ensure_ascii=False)
    atomic_write(over_path(vault), text, fsync_dir=False)


def put(vault: Path, rows: dict[str, Any]) -> None:
    """Write ``rows`` (path -> record or None) over the table, as of now."""
    with writer_lock(vault):
        put_held(vault, rows)


def put_held(vault: Path, rows: dict[str, Any]) -> None:
    """``put`` for a caller that holds the writer lock already (the scan holds it with
    its own flock, report.file.locked, which keeps filelock's import off its path)."""
    kept = load(vault)
    for rel_path, rec in rows.items():
        kept[rel_path] = [time.time_ns(), rec]
    _save(vault, kept)


def prune(vault: Path, before_ns: int) -> None:
    """Drop the rows a table built from ``before_ns`` on already holds."""
    if not over_path(vault).exists():
        return
    try:
        with writer_lock(vault, timeout=2.0):
            rows = load(vault)
            kept = {
                p: r
                for p, r in rows.items()
                if isinstance(r, list) and r and isinstance(r[0], int) and r[0] >= before_ns
            }
            if kept != rows or not kept:
                _save(vault, kept)
    except Exception:  # a busy lock: the hook ignores old rows anyway (their time)
        return
