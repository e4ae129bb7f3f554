"""The report's row in the derived store: the last completed scan's report, as of its start,
under a digest of the stat keys of every file it is derived from (scan/last.py).

The digest is taken before the scan reads a file, so a write after it changes the
digest. A file changed within RACY_NS of it (two writes within one clock tick can leave
its key the same) is vouched for by its bytes' digest too, checked on each use: the
session-end scan runs right after the ingest wrote the registry and the ledgers.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import time
from hashlib import blake2b
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.registry.blocks import registry_files
from vaultkeeper.report.candidates import Report, from_dict
from vaultkeeper.scan.cache import RACY_NS, key_of
from vaultkeeper.store import db
from vaultkeeper.store.walk import memory_files

# state/ files the report is derived from besides the vault's entries
_STATE_INPUTS = (config.USES_LOG_FILE, config.JOURNAL_FILE, config.MACHINE_FILE)


Inputs = tuple[str, dict[str, str]]  # the keys' digest; a racy file's path -> its bytes'


def inputs(vault: Path) -> Inputs:
    """The digest of the stat keys of every file the report is derived from, and the bytes'
    digest of each that changed within RACY_NS. Taken before the files are read."""
    limit = time.time_ns() - RACY_NS
    state = os.path.join(vault, config.STATE_DIR)
    paths = [str(p) for p in registry_files(vault)]
    paths += memory_files(vault)
    paths += [os.path.join(state, name) for name in _STATE_INPUTS]
    digest, racy = blake2b(digest_size=16), {}
    for path in paths:
        try:
            key, settled = key_of(os.stat(path), limit)
        except OSError:
            digest.update(f"{path}\0-\n".encode("utf-8", "surrogateescape"))
            continue
        digest.update(f"{path}\0{db.key_text(key)}\n".encode("utf-8", "surrogateescape"))
        if not settled:
            racy[path] = _bytes_digest(path)
    return digest.hexdigest(), racy


def _bytes_digest(path: str) -> str:
    """The digest of a regular file's bytes ("-": none to read; a FIFO is never opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return "-"
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "-"
        return db.content_digest(fh.read())


def keep(vault: Path, started_ms: int, found: Inputs, report: Report, create: bool = True) -> None:
    """Keep ``report`` (as of ``started_ms``) under ``found``, its inputs; ``create=False``
    (a reader): only in a database there is, and never over the row of a scan that
    started later (a reader that read the state file before that scan finished). A
    failure to write is no failure: the row is a shortcut."""
    row = (started_ms, found[0], json.dumps(found[1]), json.dumps(report.to_dict()))
    opened = db.connect(vault) if create else db.existing(vault)
    with contextlib.suppress(sqlite3.Error, OSError, UnsafePathError), opened as conn:
        if conn is not None:
            with db.writing(conn):
                newer = "SELECT 1 FROM scan_report WHERE started > ?"
                if not create and conn.execute(newer, (started_ms,)).fetchone():
                    return
                conn.execute("DELETE FROM scan_report")
                conn.execute("INSERT INTO scan_report VALUES (?, ?, ?, ?)", row)


def kept(vault: Path, started_ms: int, found: Inputs) -> Report | None:
    """The kept report, if it was kept as of ``started_ms`` under the keys ``found`` has
    and every racy file still has its bytes; None: derive it again."""
    bad = (sqlite3.Error, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError)
    with contextlib.suppress(*bad), db.existing(vault) as conn:  # a bad row: derived again
        if conn is not None:
            row = conn.execute(
                "SELECT racy, report FROM scan_report WHERE started = ? AND inputs = ?",
                (started_ms, found[0]),
            ).fetchone()
            racy = {} if row is None else json.loads(row[0])
            if row is not None and all(_bytes_digest(p) == d for p, d in racy.items()):
                return from_dict(json.loads(row[1]))
    return None
