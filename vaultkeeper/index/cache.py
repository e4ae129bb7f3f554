"""The index's rows in the derived store: each note's index entries, kept by stat key.

Regenerating the index used to read and parse every note (its frontmatter's YAML, a
registry file's blocks): seconds at tens of thousands of entries, paid twice by every
``apply`` that adds or removes a note (``check_index`` before the write, ``reindex``
after it). What the index lists of one file depends on that file's bytes and its path
alone, so it is kept as a row of ``state/vaultkeeper.db`` (``index_notes``,
vaultkeeper.store.db) under the file's stat key ``(device, inode, size, mtime_ns,
ctime_ns)``: a file whose stat differs in any of them is read again. A file changed
less than ``RACY_NS`` before the regeneration began gets no row (two writes within one
clock tick can leave all five the same; such files are read by each regeneration until
they settle). A file that could not be read gets none either: it may become readable
without its own stat changing (a folder's permission), and such files are few.

Within one process the kept entries also stay in memory (``_MEMO``), so the second
regeneration of one command reads neither the rows nor an unchanged note.

The rows are only a shortcut: a missing, unreadable or foreign database means every
note is read, as without it. Only the rows that changed are written, in one short
transaction, never by a check (``index --check`` writes nothing), and only when
``state/`` already exists as a real folder (not a symlink): a foreign vault gets no new
file from a read-only command, and nothing is written through a link.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.index.entries import Entry, Key, all_served_as_written, served_as_written

RACY_NS = 2_000_000_000
Kept = dict[str, tuple[Key, list[Entry]]]  # vault-relative path -> (key, its entries)
Row = tuple[str, "str | None", "str | None", int]  # key, a note's description, blocks, plain

# the last regeneration's kept entries by the vault's path, the rows the database holds
# (None: not known), and whether entries read since are not in them yet (a check's): a
# command that regenerates twice (check, then write) reads the rows once, and its write
# keeps what its check read; every entry is still checked against its file's stat
_MEMO: dict[str, tuple[Kept, dict[str, Row] | None, bool]] = {}


def stat_key(path: str) -> Key | None:
    """A regular file's stat key, else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def state_folder(vault: Path) -> str | None:
    """``state/`` when it exists as a real folder, else None (missing: a foreign vault;
    a symlink: never followed): derived rows are written only then."""
    state = os.path.join(os.fspath(vault), config.STATE_DIR)
    try:
        st = os.lstat(state)
    except OSError:
        return None
    return state if stat.S_ISDIR(st.st_mode) else None


def _parse_key(text: str) -> Key | None:
    try:
        found = json.loads(text)
    except (ValueError, RecursionError, TypeError):
        return None
    if type(found) is not list or len(found) != 5 or not all(type(n) is int for n in found):
        return None
    return (found[0], found[1], found[2], found[3], found[4])


def _decode(rows: dict[str, Row]) -> tuple[Kept, set[str]]:
    """The rows' entries, and the files whose links are served as written; a row not
    exactly in the written shape is dropped."""
    kept: Kept = {}
    plain_rels: set[str] = set()
    for rel, (key_text, description, blocks, plain) in rows.items():
        key = _parse_key(key_text)
        if key is None:
            continue
        base, folder = rel.removesuffix(".md"), rel.rpartition("/")[0]
        try:
            if type(description) is str and blocks is None:  # a note: one entry
                entries = [Entry(base, folder, description, (rel, ""))]
            elif description is None and type(blocks) is str:  # a registry file's blocks
                entries = []
                for item in json.loads(blocks):
                    name, desc = item if type(item) is list else (None, None)
                    if type(name) is not str or type(desc) is not str:
                        raise TypeError(name)
                    entries.append(Entry(f"{base}#{name}", folder, desc, (rel, name.casefold())))
            else:
                continue
        except (TypeError, ValueError, RecursionError):  # not a list, the wrong length
            continue
        kept[rel] = (key, entries)
        if plain == 1:
            plain_rels.add(rel)
    return kept, plain_rels


def _encode(rel: str, key: Key, entries: list[Entry]) -> Row | None:
    """The row _decode gives back as ``entries``; None when it would not (not kept)."""
    from vaultkeeper.store.db import key_text

    base, folder = rel.removesuffix(".md"), rel.rpartition("/")[0]
    plain = int(all_served_as_written(entries))
    if len(entries) == 1 and entries[0] == Entry(base, folder, entries[0].description, (rel, "")):
        return key_text(key), entries[0].description, None, plain
    blocks: list[list[str]] = []
    for e in entries:
        name = e.link[len(base) + 1 :]
        if e != Entry(f"{base}#{name}", folder, e.description, (rel, name.casefold())):
            return None
        blocks.append([name, e.description])
    return key_text(key), None, json.dumps(blocks, separators=(",", ":")), plain


def _load(vault: Path) -> dict[str, Row]:
    from vaultkeeper.store import db

    with db.existing(vault) as conn:  # never made by a reader
        if conn is None:
            return {}
        try:
            return {p: (k, d, b, n) for p, k, d, b, n in conn.execute("SELECT * FROM index_notes")}
        except sqlite3.Error:
            return {}


class IndexCache:
    """One regeneration's view of the cache: what it found, and what it will keep."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._vault = os.path.abspath(vault)
        memo = _MEMO.get(self._vault)
        # (a memo's links were rendered, so checked, in this process already)
        self._plain: set[str] = set()
        self._rows: dict[str, Row] | None
        self._dirty = False  # entries read by an earlier regeneration, not yet written
        if memo is not None:
            self.found, self._rows, self._dirty = memo
        else:
            self._rows = _load(vault)
            self.found, self._plain = _decode(self._rows)
        self.kept: Kept = {}
        self._new = 0  # records read now and kept
        self.limit = time.time_ns() - RACY_NS  # before any file's stat
        self.seen: dict[str, Key] = {}  # every regular file's key, by its path
        self.racy = False  # whether one of them changed within the window

    def key(self, path: str) -> Key | None:
        """The stat key of a regular file changed before the window, else None."""
        key = stat_key(path)
        if key is None:
            return None
        self.seen[path] = key  # as it was before the read (vaultkeeper.index.stamp)
        if key[3] >= self.limit or key[4] >= self.limit:
            self.racy = True
            return None
        return key

    def get(self, rel: str, key: Key | None) -> list[Entry] | None:
        """The kept entries of ``rel`` when its key is unchanged; None: read it."""
        found = self.found.get(rel)
        if found is not None:
            # kept even when stale: its key will not match, and a file just written
            # (by the command itself, within the window) then costs no rewrite of it
            self.kept[rel] = found
            if found[0] == key:
                if rel in self._plain:  # only a record that matches its file says so
                    served_as_written(e.link for e in found[1])
                return found[1]
        return None

    def keep(self, rel: str, key: Key | None, entries: list[Entry]) -> None:
        if key is not None:
            self.kept[rel] = (key, entries)
            self._new += 1

    def save(self, write: bool = True) -> None:
        """Remember what was kept; with ``write``, put the rows that changed into the
        database (a check writes nothing)."""
        rows, dirty = self._rows, self._dirty or self._new > 0
        if write and dirty and state_folder(self.vault) is not None:
            rows, dirty = self._write(rows), False
        _MEMO.clear()  # one vault at a time: a long-lived process holds no more
        _MEMO[self._vault] = (self.kept if self._new else self.found, rows, dirty)

    def _write(self, found: dict[str, Row] | None) -> dict[str, Row] | None:
        """The rows now held (None: not known), after writing those that changed."""
        from vaultkeeper.store import db

        rows: dict[str, Row] = {}
        for rel, (key, entries) in self.kept.items():
            row = _encode(rel, key, entries)
            if row is not None:  # and whether its links are served as written
                rows[rel] = row
        try:
            with db.connect(self.vault) as conn, db.writing(conn):
                if found is None:
                    found = {
                        p: (k, d, b, n)
                        for p, k, d, b, n in conn.execute("SELECT * FROM index_notes")
                    }
                gone = [(p,) for p in found.keys() - rows.keys()]
                conn.executemany("DELETE FROM index_notes WHERE path = ?", gone)
                new = [(p, *r) for p, r in rows.items() if found.get(p) != r]
                conn.executemany("INSERT OR REPLACE INTO index_notes VALUES (?, ?, ?, ?, ?)", new)
        except (sqlite3.Error, OSError, VaultkeeperError):  # only slower next time
            return None
        return rows
