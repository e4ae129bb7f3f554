"""The full-text index: one FTS5 row per entry in the derived store (state/vaultkeeper.db).

``vaultkeeper search``, the MCP ``search`` tool and the recall hooks all look things up
here, so they rank alike (scan.lookuprank: the words an entry holds, then bm25 over
name, description, headings and body, weighted), words stemmed by FTS5's
``porter unicode61`` tokenizer.

Freshness is by construction, from each file's stat key (device, inode, size, mtime,
ctime; ``key_text``): ``refresh`` walks the vault's markdown files and stats them
(never reads an unchanged one), reads only the files whose key differs from the one
their rows were made from, and drops the rows of files gone; a file changed within the
last clock tick is read again next time. A command that writes files updates their
rows in the same step (``update``, called when its hold of the writer lock ends,
store.fsio.after_writes). The recall hook, which cannot walk the vault on every
prompt, checks the stat key of each lesson it is about to serve (vaultkeeper.recall.lookup).

Deleting the database loses nothing: ``refresh`` builds every row again from the files.
The index is kept by scans only once something asked for it (a search, the recall hook
or ``hooks install --recall``): ``search_meta`` holds ``built``/``wanted``.

Per lesson the rows also hold what the recall hook needs: its tag, name and text as
served (neutralised, then masked as one whole text, then cut to a line:
scan.lookuprank.served; made anew for every file when another vaultkeeper version, whose
masking may differ, or another ``ROWS_FORMAT`` finds them: ``masked_by``), its anchors' files
(``search_places``), its ``paths:`` globs (``search_globs``), and the brief's
"may be stale" mark for a lesson whose code anchor moved (``search_marks``, set from the
saved report's anchor findings by the scan).

Example::

    from vaultkeeper.store import db
    with db.connect(vault) as conn:
        refresh(conn, vault)
        hits = lookuprank.ranked(conn, ["retry"])
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import vaultkeeper
from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.scan import lookuprank
from vaultkeeper.scan.lookupdocs import Doc, read_docs
from vaultkeeper.store import db
from vaultkeeper.store.vault import links_out, walk_files

COLUMNS = ("name", "description", "headings", "body")  # search_text, store.db.TABLES
RACY_NS = 2_000_000_000  # a file changed this recently is read again (as the scan's rule)
# what the rows hold, beside the tables' shape (store.db.SCHEMA_VERSION): bumped when a
# row's content changes (its tags, its served text), so every file is read again
ROWS_FORMAT = 3


def key_text(info: os.stat_result, limit: int) -> tuple[str, bool]:
    """A file's stat key as the rows keep it (device, inode, size, mtime, ctime: ctime
    moves on every write, so an edit that puts size and mtime back is still seen), and
    whether it is settled: unchanged since before ``limit`` (epoch ns), else it is read
    again next time (two writes within one clock tick share an mtime)."""
    mtime, ctime = info.st_mtime_ns, info.st_ctime_ns
    key = f"{info.st_dev}:{info.st_ino}:{info.st_size}:{mtime}:{ctime}"
    return key, mtime < limit and ctime < limit


def _listed(vault: Path) -> Iterable[tuple[str, str]]:
    """(vault-relative path, full path) of each markdown file search serves: the walk's
    rules (hidden and state folders skipped), the generated indexes left out."""
    top = str(vault)
    skip = len(top) + 1
    for full in walk_files(top):
        if not full.endswith(".md"):
            continue
        rel_path = full[skip:].replace(os.sep, "/")
        if is_index_file(rel_path):
            continue
        yield rel_path, full


def _stat(root: str, full: str) -> os.stat_result | None:
    """A file's stat, None when it is not a regular file inside the vault."""
    try:
        info = os.lstat(full)
        if stat.S_ISLNK(info.st_mode):
            if links_out(root, full):
                return None  # symlinked out of the vault: never served
            info = os.stat(full)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _outside(root: str, rel_path: str, full: str) -> bool:
    """Whether ``rel_path`` is not a plain path inside the vault, or resolves outside it
    (through any folder on the way, not only the file itself)."""
    parts = rel_path.split("/")
    if rel_path.startswith("/") or "" in parts or "." in parts or ".." in parts:
        return True
    return links_out(root, full)


def _drop(conn: sqlite3.Connection, rel_path: str) -> None:
    ids = [r[0] for r in conn.execute("SELECT id FROM search_entries WHERE path = ?", (rel_path,))]
    for table in ("search_text WHERE rowid", "search_entries WHERE id"):
        conn.executemany(f"DELETE FROM {table} = ?", [(i,) for i in ids])
    conn.executemany("DELETE FROM search_places WHERE id = ?", [(i,) for i in ids])
    conn.executemany("DELETE FROM search_globs WHERE id = ?", [(i,) for i in ids])
    conn.execute("DELETE FROM search_files WHERE path = ?", (rel_path,))


def _put(conn: sqlite3.Connection, doc: Doc) -> None:
    recall = ("", "", "")
    if doc.lesson:  # what the hook serves: neutralised, masked whole, cut to a line
        recall = lookuprank.served(doc.path, doc.status, doc.name, doc.recall_text)
    cur = conn.execute(
        "INSERT INTO search_entries (path, kind, name, description, project, status, "
        "superseded_by, line, name_line, description_line, body_line, cite, link, live, "
        "lesson, recall_head, recall_name, recall_text) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (doc.path, doc.kind, doc.name, doc.description, doc.project, doc.status,
         doc.superseded_by, doc.line, doc.name_line, doc.description_line, doc.body_line,
         doc.cite, doc.link, int(doc.live), int(doc.lesson), *recall),
    )  # fmt: skip
    row = cur.lastrowid
    conn.execute(
        "INSERT INTO search_text (rowid, name, description, headings, body, tags) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (row, doc.name, doc.description, doc.headings, "\n".join(doc.lines),
         lookuprank.tags_for(doc.live, doc.lesson, doc.kind, doc.project)),
    )  # fmt: skip
    conn.executemany("INSERT INTO search_places VALUES (?, ?)", [(p, row) for p in doc.places])
    conn.executemany("INSERT INTO search_globs VALUES (?, ?)", [(g, row) for g in doc.globs])


def _read(conn: sqlite3.Connection, vault: Path, rel_path: str, key: str, settled: bool) -> None:
    """One file's rows made anew from its bytes now (under ``key``)."""
    _drop(conn, rel_path)
    for doc in read_docs(vault, rel_path):
        _put(conn, doc)
    conn.execute("INSERT INTO search_files VALUES (?, ?, ?)", (rel_path, key, int(settled)))


def is_on(conn: sqlite3.Connection) -> bool:
    """Whether the index was asked for (a search, the recall hook, ``--recall``)."""
    got = conn.execute("SELECT 1 FROM search_meta WHERE key IN ('built', 'wanted')").fetchone()
    return got is not None


def want(vault: Path | str) -> None:
    """Ask the scans to keep the index (the recall hook found none)."""
    with db.connect(vault) as conn, db.writing(conn):
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('wanted', '1')")


def refresh(conn: sqlite3.Connection, vault: Path | str) -> int:
    """Bring every file's rows up to date; the number of files read.

    One stat per markdown file; only files whose stat key changed (or that were
    unsettled) are read; rows of files gone are dropped. One write transaction, and
    none when nothing changed.
    """
    vault = Path(vault)
    root = os.path.realpath(vault)
    limit = time.time_ns() - RACY_NS
    made_by = f"{vaultkeeper.__version__}/{ROWS_FORMAT}"
    masked_by = conn.execute("SELECT value FROM search_meta WHERE key = 'masked_by'").fetchone()
    if masked_by is not None and masked_by[0] != made_by:
        with db.writing(conn):  # rows another version made (its masking, its tags): anew
            for table in ("search_files", "search_entries", "search_text", "search_places"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM search_globs")
    known = {p: (k, s) for p, k, s in conn.execute("SELECT path, key, settled FROM search_files")}
    changed: list[tuple[str, str, bool]] = []
    seen: set[str] = set()
    for rel_path, full in _listed(vault):
        info = _stat(root, full)
        if info is None:
            continue
        seen.add(rel_path)
        key, settled = key_text(info, limit)
        was = known.get(rel_path)
        if was is None or was[0] != key or not was[1]:
            changed.append((rel_path, key, settled))
    gone = [p for p in known if p not in seen]
    built = conn.execute("SELECT 1 FROM search_meta WHERE key = 'built'").fetchone()
    if not changed and not gone and built and masked_by is not None and masked_by[0] == made_by:
        return 0
    with db.writing(conn):
        for rel_path in gone:
            _drop(conn, rel_path)
        for rel_path, key, settled in changed:
            _read(conn, vault, rel_path, key, settled)
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('built', '1')")
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('masked_by', ?)", (made_by,))
    return len(changed)


def update(conn: sqlite3.Connection, vault: Path | str, rel_paths: Iterable[str]) -> None:
    """The rows of ``rel_paths`` made anew now (a command just wrote or moved them)."""
    vault = Path(vault)
    root = os.path.realpath(vault)
    limit = time.time_ns() - RACY_NS
    with db.writing(conn):
        for rel_path in sorted(set(rel_paths)):
            full = str(vault / rel_path)
            # a path the walk did not just give (a row's, a command's): its folders may
            # have become links out of the vault since, or the row may say ``..``
            info = None if _outside(root, rel_path, full) else _stat(root, full)
            if info is None or not rel_path.endswith(".md"):
                _drop(conn, rel_path)
                continue
            key, settled = key_text(info, limit)
            _read(conn, vault, rel_path, key, settled)


def after_writes(vault: Path, written: list[str]) -> None:
    """The rows of the files a command just wrote or moved (store.fsio.after_writes),
    when the index is kept; a busy database leaves them to the next refresh, which
    finds them by their stat keys."""
    tops = {os.path.abspath(vault), os.path.realpath(vault)}
    rels = []
    for path in written:
        full = os.path.abspath(path)
        for top in tops:
            base = top.rstrip(os.sep) + os.sep
            if full.startswith(base):
                rel_path = full[len(base) :].replace(os.sep, "/")
                if rel_path.split("/", 1)[0] != config.STATE_DIR:
                    rels.append(rel_path)
                break
    if not rels or not os.path.isfile(db.path_of(vault)):
        return
    with db.connect(vault) as conn:
        if is_on(conn):
            update(conn, vault, rels)


def set_marks(conn: sqlite3.Connection, marks: Mapping[str, str]) -> None:
    """The lessons whose code anchors are gone, moved or changed, with the brief's mark
    (``may be stale: src/x.py::helper is gone since abc``), as the last scan found them."""
    with db.writing(conn):
        conn.execute("DELETE FROM search_marks")
        conn.executemany("INSERT INTO search_marks VALUES (?, ?)", sorted(marks.items()))


def after_scan(vault: Path | str, marks: Mapping[str, str]) -> None:
    """At the end of a scan: the index brought up to date and the stale marks set, when
    the index is kept (asked for once)."""
    with db.connect(vault) as conn:
        if is_on(conn):
            refresh(conn, vault)
            set_marks(conn, marks)
    tidy(vault)


# the recall table's files before the index moved into the store (removed once seen)
_LEGACY = ("recall-lookup.bin", "recall-lookup.keys.json", "recall-lookup.recs.json",
           "recall-lookup.over.json", "recall-lookup.sig", "recall-lookup.want",
           "recall-lookup.json", "recall-lookup.text")  # fmt: skip


def tidy(vault: Path | str) -> None:
    """Drop the recall table's old files and the recall hook's session files older
    than ``RECALL_SESSION_MAX_DAYS`` (never through a symlink: unlink removes a link)."""
    state = os.path.join(vault, config.STATE_DIR)
    for name in _LEGACY:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(state, name))
    folder = os.path.join(state, config.RECALL_SESSIONS_DIR)
    if os.path.islink(folder):
        return
    cutoff = time.time() - config.RECALL_SESSION_MAX_DAYS * 86400
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
