"""``search``: ranked hits over the vault's entries, from the full-text index in the store.

A search first brings the rows of changed files up to date (search.index: a stat per
file), then ranks (search.fts), as the MCP ``search`` tool and the recall hooks do. The
query's words are quoted for FTS5, never read as its syntax. Archived and superseded
entries are left out unless asked for, and so are files symlinked out of the vault.
Each hit names the path and line to open, a snippet and what to cite. Every text a hit
carries is served (credentials masked, control characters stripped, bidi characters
escaped); a snippet is cut from the whole body masked as one text, so a credential cut
in half is still masked. A query word is found in a line by its stem's start
(``stem``), as the index matched ``retries`` for ``retry``.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError, VaultkeeperError
from vaultkeeper.report.candidates import Report
from vaultkeeper.search import fts, index
from vaultkeeper.search.index import Doc
from vaultkeeper.store import db, machine
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.vault import is_memory_path

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Hit:
    kind: str
    name: str
    description: str
    path: str
    line: int
    snippet: str
    cite: str
    link: str
    status: str | None
    superseded_by: str | None  # read that one instead
    score: float  # bm25, higher is better (search.rank)


def inert(text: str) -> str:
    """``text`` with control and bidi characters shown as escapes, never acted on."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe(text: str) -> str:
    """What a hit may show an agent: credentials masked, control characters stripped
    (vaultkeeper.store.secrets.served), bidi characters escaped."""
    return inert(served(text)) if needs_serving(text) else text


def one_line(text: str) -> str:
    """``safe(text)`` with a line break shown as an escape, so no field of a hit reads as
    another hit at the terminal (masked first: a token cut by the break is masked)."""
    out = safe(text)
    return out.replace("\n", "\\u000a") if "\n" in out else out


def _body_line(doc: Doc, i: int) -> str:
    """Body line ``i``, the whole body masked (a private key's line has no marker)."""
    body = "\n".join(doc.lines)
    if not needs_serving(body):
        return doc.lines[i]
    return served(body).split("\n")[i]


def stem(word: str) -> str:
    """The start of ``word`` any of its forms share (``retr`` for retry, retries)."""
    return word if len(word) <= 4 else word[: max(4, len(word) - 3)]


def make_hit(doc: Doc, words: list[str], score: float) -> Hit:
    """The hit, pointing at the body line holding most of the words (else name/description)."""
    words = [stem(w) for w in words]
    best, best_n = -1, 0
    for i, text in enumerate(doc.lines):
        low = text.casefold()
        n = sum(1 for w in words if w in low)
        if n > best_n:
            best, best_n = i, n
    if best >= 0:
        line, text = doc.body_line + best, _body_line(doc, best)
    elif any(w in doc.name.casefold() for w in words) or not doc.description:
        line, text = doc.name_line, doc.name
    else:
        line, text = doc.description_line, doc.description
    superseded = None if doc.superseded_by is None else one_line(doc.superseded_by)
    status = None if doc.status is None else one_line(doc.status)
    return Hit(
        one_line(doc.kind), one_line(doc.name), one_line(doc.description), one_line(doc.path),
        line, _snippet(text, words), one_line(doc.cite), one_line(doc.link), status, superseded,
        score,
    )  # fmt: skip


def _snippet(text: str, words: list[str]) -> str:
    # masked before it is cut: a cut credential would no longer look like one
    flat = safe(" ".join(text.split()))
    width = config.SEARCH_SNIPPET_CHARS
    if len(flat) <= width:
        return flat
    low = flat.casefold()
    at = min((i for i in (low.find(w) for w in words) if i >= 0), default=0)
    start = max(0, min(at - width // 4, len(flat) - width))
    cut = flat[start : start + width]
    return ("..." if start else "") + cut + ("..." if start + width < len(flat) else "")


WORD = re.compile(r"\w+")
MAX_TERMS = 64  # a longer query is cut to its first distinct words: bounded work


def terms(query: str) -> list[str]:
    """The query's distinct words, casefolded, in order (at most ``MAX_TERMS``)."""
    return list(dict.fromkeys(w.casefold() for w in WORD.findall(query)))[:MAX_TERMS]


_DOC_SQL = (
    "SELECT e.kind, e.name, e.description, e.project, e.status, e.superseded_by, e.path, "
    "e.line, e.name_line, e.description_line, e.body_line, e.cite, e.link, t.body "
    "FROM search_entries e JOIN search_text t ON t.rowid = e.id WHERE e.id = ?"
)


def _doc(conn: sqlite3.Connection, row_id: int) -> Doc:
    """An entry as its row holds it (what a hit shows: no file read again)."""
    kind, name, description, project, status, superseded, path, line, name_line, *rest = (
        conn.execute(_DOC_SQL, (row_id,)).fetchone()
    )
    description_line, body_line, cite, link, body = rest
    return Doc(
        kind, name, description, project, status, superseded, path, line, name_line,
        description_line, tuple(body.split("\n")) if body else (), body_line, cite, link,
    )  # fmt: skip


class Searcher:
    """Search one vault: each call brings the index up to date, then asks it."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._lock = threading.Lock()  # the server may run two searches at once
        self._memory: sqlite3.Connection | None = None

    def _asked(self, ask: Callable[[sqlite3.Connection], list[Hit]]) -> list[Hit]:
        """``ask`` on the index brought up to date: the vault's database, or a private one
        in memory kept for this searcher's life where there is no ``state/`` (nothing may
        be written) or its database cannot be used: the files still answer."""
        with self._lock:
            if self._memory is None and os.path.lexists(os.path.join(self.vault, config.STATE_DIR)):
                with (
                    contextlib.suppress(sqlite3.Error, OSError, UnsafePathError),
                    db.connect(self.vault) as conn,
                ):
                    index.refresh(conn, self.vault)
                    return ask(conn)
            if self._memory is None:
                self._memory = db.in_memory()
            index.refresh(self._memory, self.vault)
            return ask(self._memory)

    def search(
        self,
        query: str,
        *,
        kind: str | None = None,
        project: str | None = None,
        limit: int = config.SEARCH_DEFAULT_LIMIT,
        include_archived: bool = False,
    ) -> list[Hit]:
        """Best first: by the query's words an entry holds, then bm25 (search.fts)."""
        words = terms(query)
        if not words:
            return []
        where: list[str] = []
        args: list[object] = []
        if kind:
            where.append("AND e.kind = ?")
            args.append(kind)
        if project:
            where.append("AND e.project = ?")
            args.append(project)
        if not include_archived:
            where.append("AND e.live = 1")
        narrow = fts.narrowed(live=not include_archived, kind=kind, project=project)
        pool = max(fts.POOL, limit)

        def ask(conn: sqlite3.Connection) -> list[Hit]:
            rows = fts.ranked(conn, words, " ".join(where), args, pool, narrow)
            return [
                make_hit(_doc(conn, row_id), words, round(score, 3))
                for row_id, *_, score in rows[: max(1, limit)]
            ]

        return self._asked(ask)


def found(
    searcher: Searcher,
    query: str,
    *,
    kind: str | None = None,
    project: str | None = None,
    limit: int = config.SEARCH_DEFAULT_LIMIT,
    include_archived: bool = False,
    report: Callable[[], Report | None] = lambda: None,
) -> list[dict[str, object]]:
    """The hits as ``vaultkeeper search --json`` and the MCP ``search`` tool give them:
    each hit's fields, and ``may_be_stale`` for a lesson whose code anchors moved under
    it, as the brief marks it, from ``report()`` (scan/last.py's ``last_report``: the last
    scan's report as the files say now), asked only when a lesson is among the hits and
    a repository is tied (else no anchor is checked). Bad arguments raise UsageError."""
    from vaultkeeper.errors import UsageError

    if not query.strip():
        raise UsageError("query must not be empty")
    if kind is not None and kind not in config.ENTRY_KINDS:
        raise UsageError(f"unknown kind {kind!r}; one of {', '.join(config.ENTRY_KINDS)}")
    if not 1 <= limit <= config.SEARCH_MAX_LIMIT:
        raise UsageError(f"limit must be 1..{config.SEARCH_MAX_LIMIT}")
    hits = searcher.search(
        query, kind=kind, project=project, limit=limit, include_archived=include_archived
    )
    out = [dict(h.__dict__) for h in hits]
    marks: dict[str, str] = {}
    lessons = any(is_memory_path(str(h["path"])) for h in out)  # only lessons are marked
    if lessons and machine.has(searcher.vault, "repositories"):
        with contextlib.suppress(sqlite3.Error, OSError, ValueError, VaultkeeperError):
            from vaultkeeper.report.anchors import may_be_stale

            last = report()
            anchors = () if last is None else last.anchors
            marks = {f.path: m for f in anchors if (m := may_be_stale(f))}
    for hit in out:
        if marks.get(str(hit["path"])):
            hit["may_be_stale"] = one_line(marks[str(hit["path"])])
    return out
