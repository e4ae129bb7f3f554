"""The report's row in the derived store: the last completed scan's report, as of its start,
under a digest of the stat keys of every file it is derived from (scan/last.py).

The digest is taken before the scan reads a file, so a write after it changes the
digest; a file changed within RACY_NS of it (its key may not yet vouch for its bytes)
keeps no row: the next reader derives the report again.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from hashlib import blake2b
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.lines import registry_files
from vaultkeeper.report.candidates import Report, from_dict
from vaultkeeper.scan.cache import RACY_NS, key_of
from vaultkeeper.store import db
from vaultkeeper.store.walk import memory_files

# state/ files the report is derived from besides the vault's entries
_STATE_INPUTS = (config.USES_LOG_FILE, config.JOURNAL_FILE, config.REPOSITORIES_STATE_FILE)


def inputs(vault: Path) -> tuple[str, bool]:
    """A digest of the stat keys of every file the report is derived from, and whether all
    of them are settled (changed more than RACY_NS ago: a key that still vouches for its
    bytes). Taken before the files are read: a write after it changes the digest."""
    limit = time.time_ns() - RACY_NS
    state = os.path.join(vault, config.STATE_DIR)
    paths = [str(p) for p in registry_files(vault)]
    paths += memory_files(vault)
    paths += [os.path.join(state, name) for name in _STATE_INPUTS]
    digest, settled = blake2b(digest_size=16), True
    for path in paths:
        try:
            key, old = key_of(os.stat(path), limit)
        except OSError:
            digest.update(f"{path}\0-\n".encode("utf-8", "surrogateescape"))
            continue
        settled = settled and old
        digest.update(f"{path}\0{db.key_text(key)}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), settled


def keep(vault: Path, started_ms: int, digest: tuple[str, bool], report: Report) -> None:
    """Keep ``report`` (as of ``started_ms``) under the inputs' digest; a digest with a
    file not yet settled is not kept (the next reader derives it again). A failure to
    write is no failure: the row is a shortcut."""
    if not digest[1]:
        return
    text = json.dumps(report.to_dict())
    with contextlib.suppress(sqlite3.Error, OSError), db.connect(vault) as conn, db.writing(conn):
        conn.execute("DELETE FROM scan_report")
        conn.execute("INSERT INTO scan_report VALUES (?, ?, ?)", (started_ms, digest[0], text))


def kept(vault: Path, started_ms: int, digest: str) -> Report | None:
    bad = (sqlite3.Error, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError)
    with contextlib.suppress(*bad), db.existing(vault) as conn:  # a bad row: derived again
        if conn is not None:
            row = conn.execute(
                "SELECT report FROM scan_report WHERE started = ? AND inputs = ?",
                (started_ms, digest),
            ).fetchone()
            if row is not None:
                return from_dict(json.loads(row[0]))
    return None
