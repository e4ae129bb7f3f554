"""The registry's most-used patterns for the session-start brief: rows the scan writes,
so the brief does not parse every registry block at session start.

Parsing the registry was most of the session-start brief's time (about 100 ms at
10,000 entries); the scan has every block's head already. So each scan keeps, in the
derived store's ``brief_patterns`` table (beside its own rows, in the same transaction:
scan/cache.py), the ``TOP`` most-used readable patterns (count, then latest use; a
native memory's counter left out, as the brief does) with each one's first paragraph,
and how many there are. The brief uses them only while every registry file is as the
scan read it (``load``): its stat key is its ``scan_registry`` row's, and, for a file
changed within a clock tick of the scan's read (its key cannot vouch for it), its bytes
still have the row's digest. Anything else -- a file changed, added or gone, no
database -- gives None, and the brief parses the registry itself.

A block the scan took from its row (not read again) has no text: its first paragraph
comes from the last scan's rows, under the fingerprint of the block's text, or from
parsing that one registry file when it is not there.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.registry.blocks import first_paragraph, registry_files

if TYPE_CHECKING:  # only for the annotations
    from collections.abc import Sequence

    from vaultkeeper.registry.keptheads import Head

TOP = config.BRIEF_MAX_CHARS // 40  # as many as the brief can show (recall/start.py)


class PatternFact(NamedTuple):
    name: str
    count: int  # type: ignore[assignment]  # over tuple.count: unused
    last_used: str | None  # ISO date
    path: str  # the registry file, vault-relative
    summary: str  # the block's first paragraph of prose, on one line


def summary(text: str) -> str:
    """The block's first paragraph of prose (after its heading line), on one line."""
    return first_paragraph(text.partition("\n")[2])


def ranked(heads: Sequence[Any]) -> list[Any]:
    """The readable patterns, most used first (count, then latest use)."""
    readable = [h for h in heads if h.count is not None and h.rel != config.NATIVE_REGISTRY_FILE]
    readable.sort(key=lambda h: (-(h.count or 0), -(h.last_used or dt.date.min).toordinal()))
    return readable


def _fingerprint(head: Any) -> str | None:
    """The fingerprint of the block's text the scan's rows keep (registry/keptheads.py's)."""
    span = getattr(head, "span", None)
    if span is None:  # a block the cache kept: its fingerprint came with it
        return getattr(head, "fingerprint", None)

    raw = span().encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def top(vault: Path, heads: Sequence[Head], known: dict[str, str]) -> tuple[list[Any], int]:
    """The scan's rows for the brief: ``(rank, name, count, last_used, path, summary,
    fingerprint)`` of the ``TOP`` most-used patterns, and how many there are; ``known``:
    the last scan's summaries by fingerprint. Raises OSError, ParseError or ValueError
    (a registry file changed under the scan): the caller then keeps none."""
    best = ranked(heads)
    parsed: dict[str, dict[int, Any]] = {}  # registry files parsed for a missing paragraph
    rows: list[Any] = []
    for rank, head in enumerate(best[:TOP]):
        mark = _fingerprint(head)
        text = getattr(head, "text", None)
        if text is not None:
            said = summary(text())
        elif mark is not None and mark in known:
            said = known[mark]
        else:
            said = _parsed(vault, head, parsed)
        used = head.last_used
        iso = None if used is None else used.isoformat()
        rows.append((rank, head.name, head.count, iso, head.rel, said, mark))
    return rows, len(best)


def _parsed(vault: Path, head: Any, parsed: dict[str, dict[int, Any]]) -> str:
    from vaultkeeper.registry.blocks import parse_heads
    from vaultkeeper.store.model import decode, read_regular

    if head.rel not in parsed:
        text = decode(read_regular(head.path))
        parsed[head.rel] = {h.line: h for h in parse_heads(head.path, head.rel, text)}
    found = parsed[head.rel].get(head.line)
    if found is None or found.name != head.name:
        raise ValueError(f"{head.rel}:{head.line}: not the block the scan read")
    return summary(found.text())


def load(vault: Path, limit: int) -> tuple[list[PatternFact], int] | None:
    """The ``limit`` most-used patterns and how many there are, as the last scan saw
    them, if every registry file is as it read it; else None (parse the registry)."""

    from vaultkeeper.store import db

    with db.existing(vault) as conn:
        if conn is None:
            return None
        try:
            rows = dict(
                (
                    (p, (k, d))
                    for p, k, d in conn.execute("SELECT path, key, digest FROM scan_registry")
                )
            )
            total = conn.execute(
                "SELECT value FROM scan_meta WHERE name = 'patterns_total'"
            ).fetchone()
            found = conn.execute(
                "SELECT name, count, last_used, path, summary FROM brief_patterns "
                "ORDER BY rank LIMIT ?",
                (limit,),
            ).fetchall()
        except sqlite3.Error:
            return None
    if total is None or not total[0].isdigit() or not _as_read(vault, rows):
        return None
    count = int(total[0])
    if len(found) < min(limit, count):
        return None  # kept fewer than asked for (TOP below limit)
    out: list[PatternFact] = []
    for name, hits, used, path, said in found:
        if not (type(name) is str and type(hits) is int and type(path) is str):
            return None
        if not (type(said) is str and (used is None or type(used) is str)):
            return None
        out.append(PatternFact(name, hits, used, path, said))
    return out, count


def _as_read(vault: Path, rows: dict[str, tuple[str, str | None]]) -> bool:
    """Whether the registry files are those of ``rows``, each as the scan read it."""
    from vaultkeeper.store.db import content_digest, key_text
    from vaultkeeper.store.model import ParseError, read_regular
    from vaultkeeper.store.vault import rel

    seen = 0
    for path in registry_files(vault):
        row = rows.get(rel(vault, path))
        try:
            st = os.stat(path)
        except OSError:
            return False
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if row is None or row[0] != key_text(key):
            return False
        if row[1] is not None:  # changed as the scan read it: its bytes must be the same
            try:
                if content_digest(read_regular(path)) != row[1]:
                    return False
            except (OSError, ParseError):
                return False
        seen += 1
    return seen == len(rows)
