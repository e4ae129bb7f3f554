"""The full-text index: one FTS5 row per entry in the derived store (state/vaultkeeper.db).

An entry is a note with frontmatter or one registry ``### block`` (``read_docs``).
``vaultkeeper search``, the MCP ``search`` tool and the recall hooks all look things up
here, so they rank alike (search.fts), words stemmed by ``porter unicode61``.

Freshness by construction, from each file's stat key: ``refresh`` (a search) stats every
markdown file and reads only those whose key differs from their rows'; a scan hands over
the keys it took (``after_scan``); the recall hook checks the key of each lesson it
serves and first reads again the lessons a command wrote (``search_pending``, marked by
store.fsio). A file changed within the last clock tick is read again next time. Scans
keep the index only once something asked for it (a search, the recall hook, ``hooks
install --recall``). A lesson's rows also hold what the recall hook serves (tag, name,
text: neutralised, masked whole, cut to a line; made anew by another version or
``ROWS_FORMAT``: ``masked_by``), its anchors' files, its ``paths:`` globs and the
brief's "may be stale" mark.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from hashlib import blake2b
from pathlib import Path

import vaultkeeper
from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.registry.blocks import RegistryBlock, is_counter_line, parse_heads
from vaultkeeper.search import fts
from vaultkeeper.store import db
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.store.vault import is_memory_path, links_out
from vaultkeeper.store.walk import walk
from vaultkeeper.upkeep.supersession import superseded_by

RACY_NS = db.RACY_NS  # a file changed this recently is read again next time
ROWS_FORMAT = 4  # bumped when a row's content changes (tags, served text): all read anew
RECALL_TEXT_MAX = 16_384  # what a lesson's row keeps to serve: cut at a line's end
_HEADING = re.compile(r"#{1,6}\s+(.*)")
_PLACE_KEYS = ("at", "path", "place", "file")
_TABLES = ("search_entries", "search_files", "search_text", "search_places", "search_globs")


@dataclass(frozen=True)
class Doc:
    """One searchable entry: a note with frontmatter, or one registry ``### block``."""

    kind: str
    name: str
    description: str
    project: str | None
    status: str | None
    superseded_by: str | None  # the newer entry's link target, when one replaces this
    path: str  # vault-relative
    line: int  # the entry's first line (a block's heading)
    name_line: int
    description_line: int
    lines: tuple[str, ...]  # the body's lines as in the file
    body_line: int  # file line of lines[0]
    cite: str  # what the cite tool takes: a pattern NAME or the note's path
    link: str  # the [[wikilink]] a note uses to point here
    lesson: bool = False  # a note under projects/<p>/memory/: the recall hook serves it
    places: tuple[str, ...] = ()  # its anchors' files and folders (a lesson's)
    globs: tuple[str, ...] = ()  # its ``paths:`` globs (a lesson's)

    @property
    def live(self) -> bool:
        return self.status not in config.SEARCH_DEAD_STATUSES and self.superseded_by is None

    @property
    def headings(self) -> str:
        """The body's markdown headings, one per line."""
        found = (_HEADING.fullmatch(x.strip()) for x in self.lines if x.startswith("#"))
        return "\n".join(m.group(1) for m in found if m)

    @property
    def recall_text(self) -> str:
        """What the recall hook serves of a lesson, raw: its description, then the body's
        lines that are not headings or rules (split at ``\\n`` only: masked whole before
        it is cut), cut at a line's end."""
        prose = [x for x in self.lines if x.strip() and not x.strip().startswith(("#", "---"))]
        text = "\n".join([self.description, *prose] if self.description else prose)
        if len(text) > RECALL_TEXT_MAX:
            text = text[: text.rfind("\n", 0, RECALL_TEXT_MAX) + 1 or RECALL_TEXT_MAX]
        return text


def anchor_file(place: object) -> str | None:
    """The file (or folder) part of one anchor: the text before ``::`` or ``: ``."""
    if isinstance(place, dict):
        place = next((place[k] for k in _PLACE_KEYS if isinstance(place.get(k), str)), None)
    if not isinstance(place, str):
        return None
    head = place.split("::", 1)[0].split(": ", 1)[0].strip()
    while head.startswith("./"):
        head = head[2:]
    head = head.rstrip("/")
    if not head or head.startswith("/") or ".." in head.split("/") or "\x00" in head:
        return None
    return head


def _as_list(value: object) -> list[object]:
    if isinstance(value, (str, dict)):
        return [value]
    return list(value) if isinstance(value, list) else []


def _split_lines(body: str) -> tuple[str, ...]:
    """The body's lines at ``\\n`` (``\\r\\n`` too), as a person's editor shows them."""
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return tuple(x[:-1] if x.endswith("\r") else x for x in lines)


Entry = tuple[str, "tuple[int, int, int, int] | None", "Callable[[], Doc | None]"]


def _digest(*parts: str) -> str:
    raw = "\0".join(parts).encode("utf-8", "surrogatepass")
    return blake2b(raw, digest_size=16).hexdigest()


def read_docs(vault: Path, rel_path: str, text: str | None = None) -> list[Doc]:
    """The entries one file holds (``text``: as just read); an unreadable one holds none."""
    return [doc for _, _, make in _entries(vault, rel_path, text) if (doc := make())]


def _entries(vault: Path, rel_path: str, text: str | None) -> list[Entry]:
    """Each entry of one file as (digest of all its Doc depends on, its line numbers,
    the Doc made on demand): a row whose digest is unchanged needs no Doc. A note's
    digest is its whole text (lines None: unchanged with it), a block's its own text."""
    path = vault / rel_path
    try:
        text = decode(read_regular(path)) if text is None else text
    except ParseError:
        return []
    if rel_path.split("/", 1)[0] != config.PATTERNS_DIR:
        return [(_digest(rel_path, text), None, lambda: _note(path, rel_path, text))]
    return [
        (_digest(rel_path, h.name, h.text), (h.line, h.line, h.line + 1, h.line + 1),
         lambda h=h: _block(rel_path, h))  # type: ignore[misc]
        for h in parse_heads(path, rel_path, text)
    ]  # fmt: skip


def _note(path: Path, rel_path: str, text: str) -> Doc | None:
    try:
        note = parse_note(path, rel_path, text)
    except ParseError:
        return None
    if note.frontmatter is None:
        return None  # not an entry
    meta, key_lines = dict(note.frontmatter.data), dict(note.frontmatter.key_lines)
    body, parts = note.body, rel_path.split("/")
    places: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    lesson = is_memory_path(rel_path)
    if lesson:
        anchors = _as_list(meta.get(config.ANCHORS_KEY))
        places = tuple(sorted({f for f in map(anchor_file, anchors) if f}))
        found = (g.strip() for g in _as_list(meta.get(config.PATHS_KEY)) if isinstance(g, str))
        globs = tuple(g for g in found if g and not g.startswith("/"))
    name = str(meta.get("name") or parts[-1].removesuffix(".md"))
    description = " ".join(str(meta.get("description") or "").split())
    project = parts[1] if len(parts) > 2 and parts[0] == config.PROJECTS_DIR else None
    status = meta.get("status")
    return Doc(
        str(meta.get("type") or "note"), name, description, project,
        None if status is None else str(status), superseded_by(meta), rel_path, 1,
        key_lines.get("name", 1), key_lines.get("description", 1), _split_lines(body),
        note.body_line, rel_path, f"[[{rel_path.removesuffix('.md')}]]", lesson, places, globs,
    )  # fmt: skip


def _block(rel_path: str, block: RegistryBlock) -> Doc:
    lines = _split_lines(block.text)[1:]
    prose = [x.strip() for x in lines if x.strip() and not is_counter_line(x)]
    at, link = block.line, f"[[{rel_path.removesuffix('.md')}#{block.name}]]"
    return Doc(
        "pattern", block.name, prose[0] if prose else "", None, None, None, rel_path, at, at,
        at + 1, lines, at + 1, block.name, link,
    )  # fmt: skip


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


_LISTED = "(SELECT value FROM json_each(?1))"


def _rewrite(
    conn: sqlite3.Connection,
    vault: Path,
    files: list[tuple[str, str, bool]],
    gone: list[str],
    texts: Mapping[str, str],
) -> None:
    """Inside the caller's transaction: the rows of ``files`` ((path, stat key, settled)
    each) made anew from their text now (``texts``: those just read, not read again),
    and those of ``gone`` dropped, in bulk: one statement per table, never one per file.
    An entry whose content is unchanged (``digest``: a ``use`` changes one block of a
    registry file) keeps its row, its line numbers updated when only they moved (a line
    added above it: the full-text rows untouched)."""
    paths = [f[0] for f in files] + gone
    had: dict[str, list[tuple[int, ...]]] = {}  # digest -> (id, lines), of ``paths``' rows
    if paths:
        listed = (json.dumps(paths),)
        sql = (
            "SELECT digest, id, line, name_line, description_line, body_line "
            f"FROM search_entries WHERE path IN {_LISTED}"
        )
        for digest, *row in conn.execute(sql, listed):
            had.setdefault(digest, []).append(tuple(row))
        conn.execute(f"DELETE FROM search_files WHERE path IN {_LISTED}", listed)
        conn.execute(f"DELETE FROM search_pending WHERE path IN {_LISTED}", listed)
    row = conn.execute("SELECT coalesce(max(id), 0) FROM search_entries").fetchone()[0]
    entries: list[tuple[object, ...]] = []
    bodies: list[tuple[object, ...]] = []
    places: list[tuple[str, int]] = []
    globs: list[tuple[str, int]] = []
    moved: list[tuple[int, ...]] = []
    for rel_path, _, _ in files:
        for digest, lines, make in _entries(vault, rel_path, texts.get(rel_path)):
            kept = had.get(digest)
            if kept:  # the same entry: its row stays
                row_id, *was = kept.pop()
                if lines is not None and tuple(was) != lines:
                    moved.append((*lines, row_id))
                continue
            doc = make()
            if doc is None:
                continue
            row += 1
            served = ("", "", "")
            if doc.lesson:  # what the hook serves: neutralised, masked whole, cut to a line
                served = fts.served(doc.path, doc.status, doc.name, doc.recall_text)
            entries.append(
                (row, doc.path, doc.kind, doc.name, doc.description, doc.project, doc.status,
                 doc.superseded_by, doc.line, doc.name_line, doc.description_line,
                 doc.body_line, doc.cite, doc.link, int(doc.live), int(doc.lesson), *served,
                 digest)
            )  # fmt: skip
            tags = fts.tags_for(doc.live, doc.lesson, doc.kind, doc.project)
            bodies.append(
                (row, doc.name, doc.description, doc.headings, "\n".join(doc.lines), tags)
            )
            places += [(p, row) for p in doc.places]
            globs += [(g, row) for g in doc.globs]
    stale = (json.dumps([r[0] for rows in had.values() for r in rows]),)
    if stale[0] != "[]":
        for table, column in _BY_ID:
            conn.execute(f"DELETE FROM {table} WHERE {column} IN {_LISTED}", stale)  # noqa: S608
    conn.executemany(
        "UPDATE search_entries SET line = ?, name_line = ?, description_line = ?, "
        "body_line = ? WHERE id = ?",
        moved,
    )
    conn.executemany(f"INSERT INTO search_entries VALUES ({','.join('?' * 20)})", entries)
    conn.executemany(
        "INSERT INTO search_text (rowid, name, description, headings, body, tags) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        bodies,
    )
    conn.executemany("INSERT INTO search_places VALUES (?, ?)", places)
    conn.executemany("INSERT INTO search_globs VALUES (?, ?)", globs)
    conn.executemany("INSERT INTO search_files VALUES (?, ?, ?)", files)


_BY_ID = (
    ("search_text", "rowid"),
    ("search_places", "id"),
    ("search_globs", "id"),
    ("search_entries", "id"),
)


def is_on(conn: sqlite3.Connection) -> bool:
    """Whether the index was asked for (a search, the recall hook, ``--recall``)."""
    got = conn.execute("SELECT 1 FROM search_meta WHERE key IN ('built', 'wanted')").fetchone()
    return got is not None


def want(vault: Path | str) -> None:
    """Ask the scans to keep the index (the recall hook found none)."""
    with db.connect(vault) as conn, db.writing(conn):
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('wanted', '1')")


def _made_by() -> str:
    """Which vaultkeeper and rows format made the rows (``masked_by``)."""
    return f"{vaultkeeper.__version__}/{ROWS_FORMAT}"


def _sync(
    conn: sqlite3.Connection,
    vault: Path,
    keys: Mapping[str, tuple[str, bool] | None],
    gone: Callable[[str], bool],
    texts: Mapping[str, str] = {},  # noqa: B006 - never written
) -> int:
    """The rows of the files in ``keys`` (path -> (stat key, settled), or None: not a
    regular file inside the vault) made anew where the key differs from their rows' or
    was not settled, and dropped for the None ones and for those rows' paths not in
    ``keys`` that ``gone`` says are. Rows another vaultkeeper version made are all made
    anew first. One write transaction, none when nothing changed; the files read."""
    made_by = _made_by()
    meta = dict(conn.execute("SELECT key, value FROM search_meta"))
    if meta.get("masked_by", made_by) != made_by:
        with db.writing(conn):  # rows another version made (its masking, its tags): anew
            for table in _TABLES:
                conn.execute(f"DELETE FROM {table}")  # noqa: S608 - our names
    known = dict(conn.execute("SELECT path, key || ' ' || settled FROM search_files"))
    files = [(p, *k) for p, k in keys.items() if k is not None and known.get(p) != k[0] + " 1"]
    dropped = [p for p in known if p not in keys and gone(p) or p in keys and keys[p] is None]
    if not files and not dropped and "built" in meta and meta.get("masked_by") == made_by:
        return 0
    with db.writing(conn):
        _rewrite(conn, vault, files, dropped, texts)
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('built', '1')")
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('masked_by', ?)", (made_by,))
    return len(files)


def refresh(conn: sqlite3.Connection, vault: Path | str) -> int:
    """Bring every file's rows up to date; the number of files read. One stat per
    markdown file (the walk's rules; the generated indexes left out), only changed or
    unsettled files read, rows of files gone dropped."""
    vault = Path(vault)
    top = str(vault)
    limit = time.time_ns() - RACY_NS
    keys: dict[str, tuple[str, bool] | None] = {}
    for full in walk(top, suffix=".md"):  # the walk never yields a link out of the vault
        rel_path = full[len(top) + 1 :].replace(os.sep, "/")
        if not is_index_file(rel_path):
            try:
                info = os.stat(full)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                keys[rel_path] = db.stat_key(info, limit)
    if not conn.execute("SELECT 1 FROM search_files LIMIT 1").fetchone():
        db.bulk(conn)  # a first build: every row new
    return _sync(conn, vault, keys, lambda _: True)


def update(conn: sqlite3.Connection, vault: Path | str, rel_paths: Iterable[str]) -> None:
    """The rows of ``rel_paths`` brought up to date now (a command wrote them, a hand edit)."""
    vault = Path(vault)
    root = os.path.realpath(vault)
    limit = time.time_ns() - RACY_NS
    keys: dict[str, tuple[str, bool] | None] = {}
    for rel_path in sorted(set(rel_paths)):
        full = str(vault / rel_path)
        # a row's path, not the walk's: its folders may have become links out of the
        # vault since, or it may say ``..``
        outside = rel_path.startswith("/") or {"", ".", ".."} & set(rel_path.split("/"))
        info = None if outside or links_out(root, full) else _stat(root, full)
        ok = info is not None and rel_path.endswith(".md")
        keys[rel_path] = db.stat_key(info, limit) if ok else None  # type: ignore[arg-type]
    if not _sync(conn, vault, keys, lambda _: False) and keys:  # rows right: unmark them
        with db.writing(conn):
            sql = f"DELETE FROM search_pending WHERE path IN {_LISTED}"
            conn.execute(sql, (json.dumps(list(keys)),))


def after_scan(
    vault: Path | str,
    marks: Mapping[str, str],
    today: dt.date,
    keys: Mapping[str, tuple[str, bool] | None],
    texts: Mapping[str, str] = {},  # noqa: B006 - never written
) -> None:
    """At the end of a scan, when the index is kept: the rows of the memory and registry
    files the scan found changed (``keys``: its stat keys and settledness; ``texts``: what it
    read) made anew and
    those of memory files gone dropped -- other notes wait for the next search, which
    stats them all; the lessons whose code anchors moved marked as the brief marks them
    (``may be stale: src/x.py::helper is gone since abc``); the recall's sessions older
    than ``RECALL_SESSION_MAX_DAYS`` before ``today`` forgotten."""
    with db.connect(vault) as conn:
        if not is_on(conn):
            return
        made = conn.execute("SELECT value FROM search_meta WHERE key = 'masked_by'")
        if (made.fetchone() or ("",))[0] == _made_by():
            _sync(conn, Path(vault), keys, is_memory_path, texts)
        else:  # asked for and not built yet (or by another version): every file
            refresh(conn, vault)
        with db.writing(conn):
            conn.execute("DELETE FROM search_marks")
            conn.executemany("INSERT INTO search_marks VALUES (?, ?)", sorted(marks.items()))
            cutoff = today - dt.timedelta(days=config.RECALL_SESSION_MAX_DAYS)
            conn.execute("DELETE FROM recall_served WHERE day < ?", (cutoff.isoformat(),))
