"""The index stamp, rows of the derived store (``index_state``, ``index_meta``): the vault
as it was when its index was last known to be exactly what a regeneration writes.

An ``apply`` that adds, edits or removes an entry used to regenerate the whole index
twice (a check before its first write, the write after it): every entry's record read
from the index cache and every line rendered, seconds at 50,000 entries for a decision
that changes one or two of them. A regeneration that finds (or leaves) every index file
as it would write it records here what the index depends on: each walked file's
vault-relative path, with the stat key ``(device, inode, size, mtime_ns, ctime_ns)`` of
each file it reads (the entries' notes and the index files), one row each, and the
symlinks out of the vault it left out, the templates folder and vaultkeeper's version.
A walk that finds all of that the same knows the index is up to date without reading a
note; the apply then carries its own writes into the index files entry by entry
(vaultkeeper.index.delta) and records the stamp again, only the rows that changed. A
check (``index --check``) records it in its process only: a check writes nothing.

A file changed less than ``RACY_NS`` before its key was taken may change again within
one tick of the file system's clock and keep its key (the index cache's rule): the
stamp then keeps the sha256 of its bytes too, and a check reads it again. Only the index
files and the notes vaultkeeper itself just wrote are kept so (at most ``MAX_RACY``);
any other file that recent, an unreadable note or a stray index file: no stamp, and the
next apply regenerates as before. So do missing, foreign or forged rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import __version__
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.index.cache import stat_key as stat_key
from vaultkeeper.index.cache import state_folder
from vaultkeeper.index.entries import Key
from vaultkeeper.index.files import is_index_file
from vaultkeeper.store.obsidian import in_folder, templates_folder
from vaultkeeper.store.text import read_regular
from vaultkeeper.store.vault import walk_files

FORMAT = 4  # 4: the entry count kept; 3 named sub-indexes in _index/, older at the root
RACY_NS = 2_000_000_000
MAX_RACY = 64
State = dict[str, "Key | None"]  # vault-relative path -> stat key (files the index reads)
LAST: dict[str, Stamp] = {}  # the stamp each vault's last regeneration recorded here


@dataclass
class Stamp:
    """The vault as its index is known to follow it, and the index's own shape."""

    state: State
    outside: list[str]  # vault-relative symlinks out of the vault (never read)
    templates: str | None
    split: bool
    files: list[str]  # the index files the vault has (the root first)
    unsplit: tuple[int, int]  # lines and bytes of the root index were it not split
    racy: dict[str, str] = field(default_factory=dict)  # path -> sha256 of its bytes
    entries: int = 0  # the entries the index lists


def is_md(rel_path: str) -> bool:
    """``Path(rel_path).suffix == ".md"``: a name ``.md`` alone has no suffix."""
    return rel_path.endswith(".md") and len(rel_path.rpartition("/")[2]) > 3


def read_by_index(rel_path: str, templates: str | None) -> bool:
    """Whether a regeneration reads the file: an index file, or a possible entry."""
    return is_index_file(rel_path) or (is_md(rel_path) and not in_folder(rel_path, templates))


def is_racy(key: Key | None, now: int) -> bool:
    return key is not None and max(key[3], key[4]) >= now - RACY_NS


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def survey(vault: Path) -> tuple[State, list[str], str | None] | None:
    """What the stamp compares: every walked file (keyed where the index reads it), the
    symlinks out, the templates folder. None when a path is not below the vault's text."""
    top = os.fspath(vault)
    prefix = top + os.sep
    templates = templates_folder(vault)
    outside: list[str] = []
    state: State = {}
    cut = len(prefix)
    for full in walk_files(top, outside=outside):
        if not full.startswith(prefix):
            return None
        relative = full[cut:].replace(os.sep, "/") if os.sep != "/" else full[cut:]
        keyed = is_md(relative) if templates is None else read_by_index(relative, templates)
        state[relative] = stat_key(full) if keyed else None  # (index files are .md too)
    if not all(p.startswith(prefix) for p in outside):
        return None
    return state, sorted(p[len(prefix) :].replace(os.sep, "/") for p in outside), templates


def _texts(state: State) -> dict[str, str | None]:
    """The survey as rows hold it: each path's stat key as text (None: not read)."""
    from vaultkeeper.store.db import key_text

    return {p: None if k is None else key_text(k) for p, k in state.items()}


def record(
    vault: Path, stamp: Stamp | None, *, write: bool = True, paths: set[str] | None = None
) -> None:
    """Keep ``stamp`` as the rows (None, or one that can't vouch for a racy file: drop
    the old rows); without ``write`` (a check) only in this process. ``paths``: the
    only rows that may differ from the ones held (an apply's own writes), else all."""
    now = time.time_ns()
    if stamp is not None:
        racy = {r for r, k in stamp.state.items() if is_racy(k, now)}
        if len(racy) > MAX_RACY or not racy <= set(stamp.racy):
            stamp = None
        else:
            stamp.racy = {r: h for r, h in stamp.racy.items() if r in racy}
    LAST.clear()  # one vault at a time: a long-lived process holds no more
    if stamp is not None:
        LAST[os.path.abspath(vault)] = stamp
    if not write or state_folder(vault) is None:
        return
    from vaultkeeper.store import db

    try:
        with db.connect(vault) as conn, db.writing(conn):
            if stamp is None:
                conn.execute("DELETE FROM index_state")
                conn.execute("DELETE FROM index_meta WHERE name = 'stamp'")
                return
            if paths is None:
                found = dict(conn.execute("SELECT path, key FROM index_state").fetchall())
                rows = _texts(stamp.state)
            else:
                found = {p: None for p in paths}  # each written again, or deleted
                rows = _texts({p: stamp.state[p] for p in paths if p in stamp.state})
            gone = [(p,) for p in found.keys() - rows.keys()]
            conn.executemany("DELETE FROM index_state WHERE path = ?", gone)
            new = [(p, k) for p, k in rows.items() if p not in found or found[p] != k]
            conn.executemany("INSERT OR REPLACE INTO index_state VALUES (?, ?)", new)
            meta = {
                "format": FORMAT,
                "version": __version__,
                "templates": stamp.templates,
                "outside": stamp.outside,
                "split": stamp.split,
                "files": stamp.files,
                "unsplit": list(stamp.unsplit),
                "racy": stamp.racy,
                "entries": stamp.entries,
            }
            conn.execute(
                "INSERT OR REPLACE INTO index_meta VALUES ('stamp', ?)",
                (json.dumps(meta, sort_keys=True),),
            )
    except (sqlite3.Error, OSError, VaultkeeperError):  # the next apply regenerates
        pass


def check(vault: Path) -> Stamp | None:
    """The stamp, when the vault is still exactly as its rows say; else None."""
    if state_folder(vault) is None:
        return None
    from vaultkeeper.store import db

    with db.existing(vault) as conn:
        if conn is None:
            return None
        try:
            meta = conn.execute("SELECT value FROM index_meta WHERE name = 'stamp'").fetchone()
            rows = dict(conn.execute("SELECT path, key FROM index_state").fetchall())
        except sqlite3.Error:
            return None
    try:
        data = json.loads(meta[0]) if meta is not None else None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        if data.get("version") != __version__:
            return None
        found = survey(vault)
        if found is None:
            return None
        state, outside, templates = found
        if templates != data["templates"] or outside != data["outside"]:
            return None
        if _texts(state) != rows:
            return None
        racy = {str(r): str(h) for r, h in data["racy"].items()}
        for relative, digest in racy.items():
            if sha(read_regular(os.path.join(vault, relative))) != digest:
                return None
        files = [str(f) for f in data["files"]]
        lines, size = (int(n) for n in data["unsplit"])
        split, entries = bool(data["split"]), int(data["entries"])
        return Stamp(state, outside, templates, split, files, (lines, size), racy, entries)
    except Exception:  # unreadable, forged: a stamp is never worth a failure
        return None


def follow_counters(
    vault: Path, rel_path: str, was: Key | None, written: bytes, before: bytes | None = None
) -> bool:
    """Carry a counter edit of registry file ``rel_path`` into the stamp's rows, in the
    same step as the write (the caller holds the writer lock). ``was``: the file's stat
    key before and after the writer read it (None when the two differed: then nothing
    is vouched for); ``written``: the bytes it wrote; ``before``: the bytes it read.

    A counter line (``**success count:**``, ``**last used:**``) is never part of what
    the index lists of a block (its name, its first paragraph: registry.blocks ends one
    at a counter line), so the index a regeneration writes is the same before and after
    such an edit: when the stamp held for the file's old key, it holds for its new one.
    The new key is just written, so the stamp keeps the digest of ``written`` beside it
    (the racy rule above), which the next check compares with the file's bytes. A file
    the stamp vouches for by its digest already (an apply wrote it just before) follows
    when the bytes read are the ones that digest names. Without this a ``use`` made the
    next ``apply`` regenerate the whole index. True when the
    rows follow; never a failure of the write (the next apply then regenerates)."""
    from vaultkeeper.store import db

    if was is None or state_folder(vault) is None:
        return False
    now = stat_key(os.path.join(vault, rel_path))
    if now is None:
        return False
    try:
        with db.connect(vault) as conn, db.writing(conn):
            row = conn.execute("SELECT key FROM index_state WHERE path = ?", (rel_path,))
            found = row.fetchone()
            meta = conn.execute("SELECT value FROM index_meta WHERE name = 'stamp'").fetchone()
            if found is None or meta is None or found[0] != db.key_text(was):
                return False  # no stamp, or not one of the file as it was before the edit
            data = json.loads(meta[0])
            racy = data.get("racy")
            if not isinstance(racy, dict) or (rel_path not in racy and len(racy) >= MAX_RACY):
                return False  # too many files vouched for by their bytes
            if rel_path in racy and (before is None or racy[rel_path] != sha(before)):
                return False  # vouched for by bytes other than the ones the edit read
            racy[rel_path] = sha(written)
            conn.execute(
                "UPDATE index_state SET key = ? WHERE path = ?", (db.key_text(now), rel_path)
            )
            conn.execute(
                "UPDATE index_meta SET value = ? WHERE name = 'stamp'",
                (json.dumps(data, sort_keys=True),),
            )
    except (sqlite3.Error, OSError, ValueError, VaultkeeperError):
        return False
    LAST.clear()  # this process's copy is of the old key
    return True
