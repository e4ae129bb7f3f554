"""The derived store: one rebuildable SQLite database, ``state/vaultkeeper.db``.

Files are the truth. Everything vaultkeeper computes from them (each file's stat key and
parsed frontmatter, registry blocks, index entries, the report, duplicate pairs, anchor
verdicts, the full-text index) lives here, each row checked against its file's stat key
before use; deleting the database loses nothing. SQLite (standard library) gives
transactions, readers beside one writer (WAL), indexes and FTS5 with bm25.

The schema is versioned by ``SCHEMA_VERSION`` (``user_version``) and the rows by the
vaultkeeper version that made them (``store_meta``): another one, or a file SQLite
cannot read, is dropped and made anew. ``TABLES`` is the whole schema. The file is
opened only as a regular file: a symlink, FIFO or device there (or at its ``-wal`` /
``-shm``) is refused with a one-line error.

Example::

    from vaultkeeper.store import db
    with db.connect(vault) as conn, db.writing(conn):
        conn.execute("DELETE FROM files WHERE path = ?", (rel,))
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator, Sequence
from hashlib import blake2b
from pathlib import Path

from vaultkeeper import __version__, config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.store.vault import own_dir

DB_FILE = config.DB_FILE  # under state/
COMPANIONS = ("-wal", "-shm", "-journal")  # SQLite's own files beside it
SCHEMA_VERSION = 15
BUSY_TIMEOUT_MS = 30_000  # a writer waits this long for another before giving up

# Every table, by the domain that fills it. Change one: bump SCHEMA_VERSION.
TABLES: tuple[str, ...] = (
    # this file: the vaultkeeper version whose rows the database holds
    "CREATE TABLE store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # scan/cache.py: a memory file's stat key, record and what the brief shows of it
    "CREATE TABLE scan_memory (path TEXT PRIMARY KEY, key TEXT NOT NULL, record TEXT NOT NULL, "
    "served TEXT NOT NULL)",
    # a registry file's stat key, its bytes' digest when racy (NULL: settled), blocks
    "CREATE TABLE scan_registry (path TEXT PRIMARY KEY, key TEXT NOT NULL, digest TEXT, "
    "blocks TEXT NOT NULL)",
    # a duplicates group: its entries' digest, its pairs
    "CREATE TABLE scan_pairs (grp TEXT PRIMARY KEY, digest TEXT NOT NULL, pairs TEXT NOT NULL)",
    # named facts of the last scan (the duplicates pass's settings; the patterns' total)
    "CREATE TABLE scan_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # scan/reportrow.py: the last scan's report as of its start (one row: kept while the
    # ``inputs`` digest matches its files), and each input file's row: its stat key, its
    # part of the report, what a patch needs of it (scan/last.py), its place in the scan's
    # order (NULL: added by a patch, place not known)
    "CREATE TABLE scan_report (started INTEGER NOT NULL, inputs TEXT NOT NULL, "
    "racy TEXT NOT NULL, report TEXT NOT NULL)",
    "CREATE TABLE report_files (path TEXT PRIMARY KEY, key TEXT NOT NULL, items TEXT, "
    "basis TEXT, ord INTEGER)",
    # report/brief.py: the registry's most-used patterns, in the brief's order
    "CREATE TABLE brief_patterns (rank INTEGER PRIMARY KEY, name TEXT NOT NULL, "
    "count INTEGER NOT NULL, last_used TEXT, path TEXT NOT NULL, summary TEXT NOT NULL, "
    "fingerprint TEXT)",
    # index/rows.py: each walked file's stat key (NULL: not read by the index) and what the
    # index lists of it (a note's description, or a registry file's blocks as JSON); the
    # stamp (the index known up to date with those keys) as one JSON value
    "CREATE TABLE index_files (path TEXT PRIMARY KEY, key TEXT, description TEXT, blocks TEXT)",
    "CREATE TABLE index_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # anchors/vault.py: an entry file's anchors by stat key; what was read of each repository
    "CREATE TABLE anchor_entries (path TEXT PRIMARY KEY, key TEXT NOT NULL, keys TEXT NOT NULL)",
    "CREATE TABLE anchor_repos (top TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # apply/merge.py: the names a note's links ask for (``\nname\tsubpath\n``, folded as
    # link resolution compares them), by its stat key: a merge reads only changed notes
    "CREATE TABLE link_names (path TEXT PRIMARY KEY, key TEXT NOT NULL, names TEXT NOT NULL) "
    "WITHOUT ROWID",
    # lint/summary.py: the last whole-vault lint's figures, for status (one row)
    "CREATE TABLE lint_summary (made TEXT NOT NULL, files INTEGER NOT NULL, "
    "errors INTEGER NOT NULL, links INTEGER NOT NULL, link_errors INTEGER NOT NULL, "
    "orphans INTEGER)",
    # search/index.py: the full-text index (search, the MCP search tool, the recall hooks)
    "CREATE VIRTUAL TABLE search_text USING fts5("
    "name, description, headings, body, tags, tokenize = 'porter unicode61')",
    "CREATE TABLE search_entries (id INTEGER PRIMARY KEY, path TEXT NOT NULL, "
    "kind TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, project TEXT, "
    "status TEXT, superseded_by TEXT, line INTEGER NOT NULL, name_line INTEGER NOT NULL, "
    "description_line INTEGER NOT NULL, body_line INTEGER NOT NULL, cite TEXT NOT NULL, "
    "link TEXT NOT NULL, live INTEGER NOT NULL, lesson INTEGER NOT NULL, "
    "recall_head TEXT NOT NULL, recall_name TEXT NOT NULL, recall_text TEXT NOT NULL, "
    "digest TEXT NOT NULL)",
    "CREATE INDEX search_entries_path ON search_entries (path)",
    "CREATE TABLE search_files (path TEXT PRIMARY KEY, key TEXT NOT NULL, "
    "settled INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE search_places (place TEXT NOT NULL, id INTEGER NOT NULL)",
    "CREATE INDEX search_places_place ON search_places (place)",
    "CREATE INDEX search_places_id ON search_places (id)",
    "CREATE TABLE search_globs (glob TEXT NOT NULL, id INTEGER NOT NULL)",
    "CREATE INDEX search_globs_id ON search_globs (id)",
    "CREATE INDEX search_globs_glob ON search_globs (glob)",
    "CREATE TABLE search_marks (path TEXT PRIMARY KEY, mark TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    # lessons a command wrote, for the recall hook to read again (store.fsio)
    "CREATE TABLE search_pending (path TEXT PRIMARY KEY) WITHOUT ROWID",
    # recall/moment.py: the lessons the recall hook served each session, and the day
    "CREATE TABLE recall_served (session TEXT NOT NULL, path TEXT NOT NULL, day TEXT NOT NULL, "
    "PRIMARY KEY (session, path)) WITHOUT ROWID",
)


# a file changed this recently may change again within one clock tick (FAT's is 2 s)
# and keep its stat key: its row is not trusted until it settles
RACY_NS = 2_000_000_000


def key_text(key: Sequence[int]) -> str:
    """A file's stat key ``(device, inode, size, mtime_ns, ctime_ns)`` as rows keep it: a
    JSON array (text: no device number overflows SQLite's 64-bit integers)."""
    return f"[{key[0]},{key[1]},{key[2]},{key[3]},{key[4]}]"


def stat_key(info: os.stat_result, limit: int) -> tuple[str, bool]:
    """A stat result's key as rows keep it, and whether the file is settled: unchanged
    since before ``limit`` (epoch ns; ``time_ns() - RACY_NS``)."""
    mtime, ctime = info.st_mtime_ns, info.st_ctime_ns
    return f"[{info.st_dev},{info.st_ino},{info.st_size},{mtime},{ctime}]", (
        mtime < limit and ctime < limit
    )


def content_digest(raw: bytes) -> str:
    """A file's bytes' digest, for a row whose stat key cannot vouch for the file."""
    return blake2b(raw, digest_size=16).hexdigest()


def state_folder(vault: str | os.PathLike[str]) -> str | None:
    """``state/`` when it exists as a real folder (not a symlink), else None: rows are
    written only there (a person's own vault gets no state/ from a reader)."""
    state = os.path.join(os.fspath(vault), config.STATE_DIR)
    try:
        st = os.lstat(state)
    except OSError:
        return None
    return state if stat.S_ISDIR(st.st_mode) else None


def path_of(vault: str | os.PathLike[str]) -> Path:
    """Where the vault's database is (``state/vaultkeeper.db``)."""
    return Path(own_dir(vault, config.STATE_DIR)) / DB_FILE


def _refuse_odd(path: Path) -> None:
    """Refuse a database file (or companion) that is not a plain regular file."""
    for name in (path.name, *(path.name + c for c in COMPANIONS)):
        candidate = path.with_name(name)
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            kind = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
            raise UnsafePathError(
                f"{config.STATE_DIR}/{name}: {kind}; refused (delete it: it is derived "
                "state, rebuilt from the vault's files)"
            )


def _current(conn: sqlite3.Connection) -> bool:
    """Whether the database has this schema and this version's rows."""
    if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        return False
    found = conn.execute("SELECT value FROM store_meta WHERE name = 'version'").fetchone()
    return found is not None and found[0] == __version__


def _fresh(conn: sqlite3.Connection) -> None:
    """Drop whatever the database holds and create the current schema."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _current(conn):
            conn.execute("COMMIT")  # another process made it meanwhile
            return
        rows = conn.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
            "AND type IN ('table', 'view')"
        ).fetchall()
        for kind, name in rows:
            conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        for ddl in TABLES:
            conn.execute(ddl)
        conn.execute("INSERT INTO store_meta VALUES ('version', ?)", (__version__,))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if not _current(conn):
            _fresh(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def connect(vault: str | os.PathLike[str]) -> Iterator[sqlite3.Connection]:
    """The vault's database, made (with ``state/``) when missing, closed on exit; one
    SQLite cannot read (truncated, another program's) is deleted and made anew."""
    path = path_of(vault)
    path.parent.mkdir(exist_ok=True)
    _refuse_odd(path)
    try:
        conn = _open(path)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            raise
        for name in (path.name, *(path.name + c for c in COMPANIONS)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.with_name(name))
        conn = _open(path)
    try:
        yield conn
    finally:
        conn.close()


def in_memory() -> sqlite3.Connection:
    """A private database of the current schema in memory: for a vault with no
    ``state/`` folder (someone's Obsidian vault), where nothing may be written."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    _fresh(conn)
    return conn


@contextlib.contextmanager
def existing(vault: str | os.PathLike[str]) -> Iterator[sqlite3.Connection | None]:
    """The vault's database if there is one, else None (also when it cannot be opened: a
    link, a FIFO, a locked or foreign file), for a reader that must not create it."""
    conn = None
    with contextlib.suppress(sqlite3.Error, OSError, UnsafePathError):
        path = path_of(vault)
        if os.path.lexists(path):
            _refuse_odd(path)
            conn = _open(path)
    try:
        yield conn
    finally:
        if conn is not None:
            conn.close()


def bulk(conn: sqlite3.Connection) -> None:
    """For a connection that writes whole tables anew (a first scan, a first search): no
    fsync (a crash may lose only this rebuildable cache; ``connect`` makes an unreadable
    one anew) and room for the new pages in memory. This connection only."""
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -65536")  # KiB: 64 MiB, the 50k vault's rows and more


@contextlib.contextmanager
def writing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (BEGIN IMMEDIATE: the writer's place is taken at once)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
