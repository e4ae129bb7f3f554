"""One ranking over the full-text index, for ``search``, the MCP tool and the recall hooks.

An entry ranks by how many of the query's distinct words it holds (any field, stemmed),
then by bm25 over name, description, headings and body, fields weighted (``WEIGHTS``):
bm25 alone lets one rare word outweigh a whole sentence matched (known-item test,
bench/search_known.py: 85.4% top-1 alone, 89.5% with the count first). The count is
taken over the best ``POOL`` rows by bm25 only, so the work follows the words' matches.
Every query word is quoted (``quoted``): never read as FTS5 syntax. What the recall hook
serves of a lesson is prepared when its row is made (``served``). Imports nothing
heavy: the recall hook runs it under ``python -S``.
"""

from __future__ import annotations

import html

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

LESSON_CHARS = 360  # config.MOMENT_LESSON_CHARS: one lesson's text at most, as served

# bm25 weights of name, description, headings, body and tags (``tags`` only narrows)
WEIGHTS = (3.0, 2.0, 1.5, 1.0, 0.0)
POOL = 40  # the best rows by bm25 whose words are counted
# one word's matches: a scan of its doclist costs less than a seek per pooled row
_ROWIDS = "SELECT rowid FROM search_text WHERE search_text MATCH ?"


def quoted(words: Iterable[str]) -> str:
    """An FTS5 query matching any of ``words``, each one quoted string."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def text_query(words: Iterable[str]) -> str:
    """``quoted(words)`` in the four text columns only (never ``tags``)."""
    return "{name description headings body} : (" + quoted(words) + ")"


def _token(prefix: str, value: str) -> str:
    """``value`` as one token of its own: its UTF-8 bytes in hex after ``prefix``."""
    return prefix + value.encode("utf-8", "surrogatepass").hex()


def tags_for(live: bool, lesson: bool, kind: str, project: str | None) -> str:
    """An entry's ``tags`` column, what a query narrows by inside FTS5: live, lesson, kind,
    project. Always four tokens (hex-encoded: one each), so every row's weigh the same."""
    return " ".join(
        (
            "vklive" if live else "vkdead",
            "vklesson" if live and lesson else "vkother",
            _token("vkk", kind),
            _token("vkp", project) if project else "vknoproject",
        )
    )


def narrowed(
    *, live: bool = True, lesson: bool = False, kind: str | None = None,
    project: str | None = None, or_none: bool = False,
) -> str:  # fmt: skip
    """The FTS5 query part ANDed to the words: live entries (``live``), live lessons
    (``lesson``), of ``kind``, of ``project`` (``or_none``: or of no project)."""
    parts = ['tags : "vklive"'] if live else []
    if lesson:
        parts.append('tags : "vklesson"')
    if kind is not None:
        parts.append(f'tags : "{_token("vkk", kind)}"')
    if project is not None:
        mine = f'tags : "{_token("vkp", project)}"'
        parts.append(f'({mine} OR tags : "vknoproject")' if or_none else mine)
    return " AND ".join(parts)


def ranked(
    conn: sqlite3.Connection,
    words: Sequence[str],
    where: str = "",
    args: Sequence[object] = (),
    pool: int = POOL,
    narrow: str = "",
) -> list[tuple[int, str, int, int, float]]:
    """(entry id, path, line, words held, bm25 score, higher better), best first: the best
    ``pool`` matches by bm25, ordered by words held, bm25, path and line. ``narrow`` is
    ANDed to the FTS5 query; ``where`` (with ``args``) on ``e`` for the best rows only."""
    if not words:
        return []
    weights = ", ".join(str(w) for w in WEIGHTS)
    match = f"{text_query(words)} AND {narrow}" if narrow else text_query(words)
    best = conn.execute(
        f"SELECT rowid, -bm25(search_text, {weights}) AS score FROM search_text "
        "WHERE search_text MATCH ? ORDER BY score DESC LIMIT ?",
        (match, 2 * pool),  # twice the pool: ties at its edge cut by path, not by rowid
    ).fetchall()
    if not best:
        return []
    scores = dict(best)
    marks = ",".join("?" * len(scores))
    rows = conn.execute(
        f"SELECT e.id, e.path, e.line FROM search_entries e WHERE e.id IN ({marks}) {where}",
        (*scores, *args),
    ).fetchall()
    rows.sort(key=lambda r: (-scores[r[0]], r[1], r[2]))
    rows = rows[:pool]
    held = dict.fromkeys((r[0] for r in rows), 0)
    for word in words:  # each word's matches (narrowed), counted for the pool's rows
        one = f"{text_query([word])} AND {narrow}" if narrow else text_query([word])
        for (row_id,) in conn.execute(_ROWIDS, (one,)):
            if row_id in held:
                held[row_id] += 1
    out = [(i, path, line, held[i], scores[i]) for i, path, line in rows]
    out.sort(key=lambda r: (-r[3], -r[4], r[1], r[2]))
    return out


def named(
    conn: sqlite3.Connection, words: Sequence[str], ids: Sequence[int], narrow: str = ""
) -> set[int]:
    """Those of ``ids`` whose name holds one of ``words``."""
    if not ids or not words:
        return set()
    match = f"name : ({quoted(words)})" + (f" AND {narrow}" if narrow else "")
    wanted = set(ids)
    return {r[0] for r in conn.execute(_ROWIDS, (match,)) if r[0] in wanted}


def neutral(text: str, quote: bool = False) -> str:
    """``text`` that cannot open or close a tag (nor, ``quote``, an attribute): what the
    recall hooks and the session-start brief serve of a file."""
    text = html.escape(text, quote=False)
    return text.replace('"', "&quot;") if quote else text


def served(path: str, status: str | None, name: str, text: str) -> tuple[str, str, str]:
    """A lesson's opening tag, name and text as the recall hook serves them: neutralised,
    masked as one whole text (store.secrets.served), then cut to one line."""
    from vaultkeeper.store.secrets import served as masked

    head = (
        f'<vault-memory path="{neutral(path, True)}" status="{neutral(status or "unset", True)}">'
    )
    name, text = (" ".join(masked(neutral(x)).split()) for x in (name, text))
    return " ".join(masked(head).split()), name, text[:LESSON_CHARS]
