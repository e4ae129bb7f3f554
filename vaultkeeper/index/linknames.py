"""What each note's links name: the store's ``link_names`` rows (path, stat key, names).

``apply merge`` must find every note that links to DROP. A note's row lists what each of
its ``[[...]]`` asks for (the name, folded as link resolution compares it, and the
subpath), more than its links and never fewer; keyed by the note's stat key, a merge reads
only notes changed since and parses only those whose names hold DROP's
(vaultkeeper.apply.merge). The index fills the rows as it reads notes
(vaultkeeper.index.rows); a merge keeps them up for the notes it read.
"""

from __future__ import annotations

import posixpath
import sqlite3
import unicodedata
from pathlib import Path

from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import db
from vaultkeeper.store.links import INNER, parse_link
from vaultkeeper.store.text import ParseError, read_regular


def held_names(vault: Path, asked: list[str]) -> tuple[dict[str, str], set[str]]:
    """The store's ``link_names`` keys (path -> stat key) and the paths whose names hold
    one of ``asked``, in one read; nothing without a store."""
    with db.existing(vault) as conn:  # a reader never makes the database
        if conn is None:
            return {}, set()
        hit = " OR ".join(["instr(names, ?) > 0"] * len(asked))
        try:
            rows = conn.execute(f"SELECT path, key, {hit} FROM link_names", asked).fetchall()
        except sqlite3.Error:
            return {}, set()
    return {p: k for p, k, _ in rows}, {p for p, _, h in rows if h}


def keep_names(vault: Path, fresh: list[tuple[str, str, str]], gone: set[str]) -> None:
    """Replace the rows of the notes read (settled ones only: a key within one clock tick
    of a write may not see the next one), drop those of notes gone; only slower if not."""
    if (not fresh and not gone) or db.state_folder(vault) is None:
        return
    try:
        with db.connect(vault) as conn, db.writing(conn):
            conn.executemany("DELETE FROM link_names WHERE path = ?", ((p,) for p in gone))
            conn.executemany("INSERT OR REPLACE INTO link_names VALUES (?, ?, ?)", fresh)
    except (sqlite3.Error, OSError, VaultkeeperError):
        pass


def read_names(full: str, relative: str, known: dict[str, str]) -> str | None:
    """``link_names`` of the note at ``full``, its undecodable bytes read as U+FFFD; None
    when it can't be read."""
    try:
        return link_names(read_regular(full).decode("utf-8", "replace"), relative, known)
    except ParseError:
        return None


def link_names(text: str, relative: str, known: dict[str, str]) -> str:
    """What every ``[[...]]`` of note ``relative`` asks for, a line ``name<TAB>subpath``
    each (folded as link resolution compares them; the text starts with a newline): more
    than its links (code and frontmatter keys too), never fewer. ``known``: what a link's
    text asks for, when that does not depend on the note."""
    got = set()
    for inner in set(INNER.findall(text)) if "[[" in text else ():
        asks = known.get(inner)
        if asks is None:
            target, sub, _ = parse_link(inner)
            asks = f"{name_of(target, posixpath.dirname(relative))}\t{sub.casefold()}"
            if not target.replace("\\", "/").lstrip().startswith(("./", "../")):
                known[inner] = asks  # from the vault's root: the same in every note
        got.add(asks)
    return "\n" + "".join(f"{g}\n" for g in sorted(got))


def name_of(target: str, here: str) -> str:
    """The last part of the path a link's ``target`` asks for, seen from folder ``here``,
    as resolution compares it: a link can mean a file only if its name is this one."""
    text = target.replace("\\", "/").strip()
    if text.startswith(("./", "../")):
        text = posixpath.normpath(posixpath.join(here, text))
    return folded(text.lstrip("/")).rsplit("/", 1)[-1]


def folded(path: str) -> str:
    """``path`` as link resolution compares it (NFC, casefolded; store.links)."""
    return path.casefold() if path.isascii() else unicodedata.normalize("NFC", path).casefold()


def names_of(path: str) -> set[str]:
    """The names a link may give the file ``path`` by: folded, with and without ``.md``."""
    key = folded(path)
    return {key, key[:-3]} if key.endswith(".md") else {key}
