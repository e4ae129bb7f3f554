"""The review of every adopted folder in one line, for the session-start brief.

A scan counts it (reading the adopted folders there, at session end, where nobody
waits) into one row of the derived store (``scan_meta``, name ``native_review``), so the
brief reads one row instead of every memory. It names what needs a decision, never a
memory's content: MEMORY.md already loads that, and the brief does not serve it twice.
Without the row (no scan since the database was deleted) the brief has no such line
until the next scan.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from pathlib import Path

_KINDS = {  # each kind of finding, as the line says it
    "promote": "to promote",
    "prune": "to prune",
    "cap": "past the recall's caps",
    "problem": "problems",
    "secret": "credentials",
    "duplicate": "possible duplicates",
}
ROW = "native_review"  # its name in scan_meta


def line(vault: Path) -> str | None:
    """``- auto memory: 1 to promote, ...`` or None (nothing adopted, nothing to do)."""

    from vaultkeeper.store import db

    with db.existing(vault) as conn:
        if conn is None:
            return None
        try:
            row = conn.execute("SELECT value FROM scan_meta WHERE name = ?", (ROW,)).fetchone()
        except sqlite3.Error:
            return None
    try:
        data = json.loads(row[0])
        counts = {k: int(v) for k, v in data["counts"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None
    said = [f"{counts[k]} {words}" for k, words in _KINDS.items() if counts.get(k)]
    if not said:
        return None
    return f"- Claude Code auto memory: {', '.join(said)} (vaultkeeper native review)"


def after_scan(vault: Path, today: dt.date) -> None:
    """At the end of a scan (for a vault that adopted an auto memory: state/machine.json
    holds its folders), count each kind of finding over the adopted folders into the row;
    never the scan's failure."""
    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.native.folders import adopted  # the brief reads only the line above
    from vaultkeeper.native.review import review
    from vaultkeeper.store import db

    with contextlib.suppress(VaultkeeperError, OSError, sqlite3.Error):
        folders = adopted(vault)
        if not folders:
            return
        counts = dict.fromkeys(_KINDS, 0)
        for folder in folders:
            for finding in review(vault, folder, today).findings:
                counts[finding.kind] = counts.get(finding.kind, 0) + 1
        body = {"date": today.isoformat(), "folders": len(folders), "counts": counts}
        with db.connect(vault) as conn, db.writing(conn):
            conn.execute("INSERT OR REPLACE INTO scan_meta VALUES (?, ?)", (ROW, json.dumps(body)))
